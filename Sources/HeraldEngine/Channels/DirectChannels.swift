import Foundation
import HeraldCore
import Synchronization

/// The direct channels open on this node: devices connected to Herald itself (a WebSocket),
/// which receive their notifications before, or instead of, the cloud.
///
/// A channel that confirms (Home Assistant's `support_confirm`) gets each event with a
/// `hass_confirm_id` and must confirm it within ``confirmWindow``; one that does not tears the
/// channel down, and every notification waiting on it falls back to the device's cloud route
/// once. A channel that closes with notifications waiting makes them fall back at once. Without
/// confirmation, writing the event to the socket is delivery.
///
/// With several nodes on one store (a ``ChannelRelay``), each node records the channels it holds
/// (a lease renewed while it runs), and a notification for a device connected to another node goes
/// to that node as a relay message; its outcome comes back the same way, confirm and fallback
/// intact. A node that does not answer in time counts as a channel that did not confirm.
public final class DirectChannels: Sendable {
    /// One open channel, as its connection knows it.
    public struct Session: Sendable, Hashable {
        /// Unique on this node: a newer channel of the same installation has another.
        public let id: UInt64
        public let appID: String
        public let installationID: String
        public let confirms: Bool
    }

    /// What a delivery over a channel came to.
    public enum Outcome: Sendable, Equatable {
        /// Written to the socket (`confirmed`: and confirmed by the device).
        case delivered(confirmed: Bool)
        /// Not confirmed in time, or the channel closed first: the cloud route takes it.
        case fellBack(reason: String)
        /// The installation has no channel open here.
        case notConnected
    }

    /// Writes one event (a JSON object) to the socket.
    public typealias Writer = @Sendable ([String: JSONValue]) async throws -> Void

    struct Open {
        var session: Session
        var write: Writer
        var onTeardown: @Sendable () -> Void
        var waiting: [String: CheckedContinuation<Outcome, Never>] = [:]
    }

    struct State {
        var open: [String: Open] = [:]
        var nextID: UInt64 = 1
        /// Deliveries relayed to other nodes, waiting for their outcome, by message id.
        var relayed: [String: CheckedContinuation<Outcome, Never>] = [:]
        /// Whether any node holds a channel, and when that was read.
        var clusterHeld: (held: Bool, at: Date)?
    }

    /// How long a confirming channel has to confirm an event.
    public let confirmWindow: Duration
    /// This node's name among the nodes of a ``ChannelRelay``: unique per process.
    public let node: String
    /// The other nodes, when there are any.
    let relay: (any ChannelRelay)?
    /// How long a node's hold of a channel lasts unless renewed (it renews every third of it).
    let lease: Duration
    let state = Mutex(State())
    private let connected = Mutex<(@Sendable (Session) async -> Void)?>(nil)

    /// Creates the node's channels.
    /// - Parameters:
    ///   - relay: How other nodes are reached; nil on a single node.
    ///   - lease: How long a hold lasts without renewal: a node that dies stops receiving after it.
    public init(
        confirmWindow: Duration = .seconds(10), node: String = DirectChannels.uniqueNodeName(),
        relay: (any ChannelRelay)? = nil, lease: Duration = .seconds(60)
    ) {
        self.confirmWindow = confirmWindow
        self.node = node
        self.relay = relay
        self.lease = lease
    }

    /// The host name, the process id and a random suffix: two nodes on one machine differ.
    public static func uniqueNodeName() -> String {
        let suffix = UInt32.random(in: 0...UInt32.max)
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(suffix)"
    }

    /// What runs when a channel opens (the engine wakes what waits for the device).
    func onConnect(_ action: @escaping @Sendable (Session) async -> Void) {
        connected.withLock { $0 = action }
    }

    /// Opens the installation's channel; one already open is torn down first (what waited on it
    /// falls back), as a new Home Assistant channel for a webhook replaces the old.
    /// - Parameters:
    ///   - write: Writes an event to the socket.
    ///   - onTeardown: Runs once when the channel ends other than by ``close(_:)`` (not confirmed
    ///     in time, or replaced): the connection forgets its subscription.
    public func open(
        appID: String, installationID: String, confirms: Bool, write: @escaping Writer,
        onTeardown: @escaping @Sendable () -> Void
    ) async -> Session {
        let (session, replaced) = state.withLock { state in
            let session = Session(id: state.nextID, appID: appID, installationID: installationID, confirms: confirms)
            state.nextID += 1
            let replaced = state.open.removeValue(forKey: installationID)
            state.open[installationID] = Open(session: session, write: write, onTeardown: onTeardown)
            return (session, replaced)
        }
        if let replaced { Self.end(replaced, reason: "a new channel replaced this one", notify: true) }
        await hold(installationID)
        await connected.withLock { $0 }?(session)
        return session
    }

    /// Closes a channel (the socket closed, or the device unsubscribed): what waited on it falls
    /// back at once.
    public func close(_ session: Session) async {
        guard let closed = take(session) else { return }
        Self.end(closed, reason: "the channel closed before the device confirmed", notify: false)
        await release(session.installationID)
    }

    /// The device confirms an event; false when the channel or the confirmation is unknown.
    public func confirm(_ session: Session, confirmID: String) -> Bool {
        let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.open[session.installationID]?.session == session else { return nil }
            return state.open[session.installationID]?.waiting.removeValue(forKey: confirmID)
        }
        waiter?.resume(returning: .delivered(confirmed: true))
        return waiter != nil
    }

    /// Whether any channel is open on this node (the fan-out's fast path asks once per batch).
    public var anyOpen: Bool {
        state.withLock { !$0.open.isEmpty }
    }

    /// How many channels are open on this node.
    public var openCount: Int {
        state.withLock { $0.open.count }
    }

    /// Whether the installation's channel is open on this node.
    public func isOpen(_ installationID: String) -> Bool {
        state.withLock { $0.open[installationID] != nil }
    }

    /// Sends an event over the installation's channel — on this node, or through the relay on the
    /// node holding it — and, when it confirms, waits for the confirmation (at most ``confirmWindow``).
    /// - Parameter holder: The node holding the channel, when the caller looked it up already.
    public func deliver(
        _ event: [String: JSONValue], to installationID: String, holder: String? = nil
    ) async -> Outcome {
        guard
            let (session, write) = state.withLock({ state in state.open[installationID].map { ($0.session, $0.write) } }
            )
        else { return await relayDeliver(event, to: installationID, holder: holder) }
        guard session.confirms else {
            do {
                try await write(event)
                return .delivered(confirmed: false)
            } catch {
                await close(session)
                return .fellBack(reason: "the channel could not be written to")
            }
        }
        let confirmID = Self.confirmID()
        var stamped = event
        stamped["hass_confirm_id"] = .string(confirmID)
        let confirmable = stamped
        return await withCheckedContinuation { continuation in
            let registered = state.withLock { state -> Bool in
                guard state.open[installationID]?.session == session else { return false }
                state.open[installationID]?.waiting[confirmID] = continuation
                return true
            }
            guard registered else { return continuation.resume(returning: .notConnected) }
            Task {
                do {
                    try await write(confirmable)
                } catch {
                    await self.close(session)
                }
            }
            Task {
                try? await Task.sleep(for: self.confirmWindow)
                self.timeOut(session, confirmID: confirmID)
            }
        }
    }

    /// A confirmation did not come in time: the channel is torn down and everything waiting on
    /// it falls back.
    private func timeOut(_ session: Session, confirmID: String) {
        let expired = state.withLock { state -> Open? in
            guard let open = state.open[session.installationID], open.session == session,
                open.waiting[confirmID] != nil
            else { return nil }
            return state.open.removeValue(forKey: session.installationID)
        }
        guard let expired else { return }
        let seconds = confirmWindow.components.seconds
        Self.end(expired, reason: "not confirmed within \(seconds) s: the channel was torn down", notify: true)
        Task { await release(session.installationID) }
    }

    /// Removes the session's channel if it is still the open one.
    private func take(_ session: Session) -> Open? {
        state.withLock { state in
            guard state.open[session.installationID]?.session == session else { return nil }
            return state.open.removeValue(forKey: session.installationID)
        }
    }

    /// Ends a channel taken out of the open ones: every waiting delivery falls back.
    private static func end(_ open: Open, reason: String, notify: Bool) {
        for waiter in open.waiting.values { waiter.resume(returning: .fellBack(reason: reason)) }
        if notify { open.onTeardown() }
    }

    /// 32 random hex characters, like Home Assistant's `random_uuid_hex()`.
    static func confirmID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
