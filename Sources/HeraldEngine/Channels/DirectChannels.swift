import Foundation
import HeraldCore
import Synchronization

/// The direct channels open on this node: devices connected to Herald itself (a WebSocket),
/// which receive their notifications before, or instead of, the cloud (``DirectTransport`` is
/// how the engine reaches them).
///
/// A channel that confirms (Home Assistant's `support_confirm`) gets each event with a
/// `hass_confirm_id` and must confirm it within the confirm window (``ConfirmWindow`` decides):
/// the delivery is ``Outcome/confirming(until:)`` meanwhile, and the engine is told how it settled
/// (``onSettle(_:)``) — confirmed; or, when the window passes, the channel closes or a newer one
/// replaces it, fallen back to the device's cloud route. A channel that misses a confirmation is
/// torn down. Without confirmation, writing the event to the socket is delivery.
///
/// With several nodes on one store (a ``ChannelRelay``), each node records the channels it holds
/// (a lease renewed while it runs), and a notification for a device connected to another node goes
/// to that node as a relay message; its outcome, and later its settlement, come back the same way.
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
        /// Written to a channel that confirms: settled later (``onSettle(_:)``), at the latest
        /// when the window ends at `until`.
        case confirming(until: Date)
        /// Could not be written, or could not reach the node holding the channel: the cloud route takes it.
        case fellBack(reason: String)
        /// The installation has no channel open here.
        case notConnected
    }

    /// Who is told how a confirming delivery settled.
    enum Ticket: Sendable {
        /// A delivery of this node's engine, of a notification.
        case local(notificationID: String)
        /// A delivery relayed from another node: told with a relay message answering `messageID`.
        case relayed(messageID: String, origin: String)
    }

    /// Writes one event (a JSON object) to the socket.
    public typealias Writer = @Sendable ([String: JSONValue]) async throws -> Void
    /// Told how a confirming delivery settled: notification id, installation id, and one of
    /// ``PendingDelivery/Reason/settlements``.
    public typealias Settle = @Sendable (String, String, PendingDelivery.Reason) async -> Void

    struct Open {
        var session: Session
        var write: Writer
        var onTeardown: @Sendable () -> Void
    }

    struct State {
        var open: [String: Open] = [:]
        var nextID: UInt64 = 1
        var confirms: ConfirmWindow<Ticket>
        /// Deliveries relayed to other nodes, waiting for their first answer, by message id.
        var relayed: [String: CheckedContinuation<Outcome, Never>] = [:]
        /// Deliveries relayed to other nodes that may still settle, by message id: what they were.
        var relayedDeliveries: [String: (notificationID: String, installationID: String)] = [:]
        /// Whether any node holds a channel, and when that was read.
        var clusterHeld: (held: Bool, at: Date)?
    }

    /// How long a confirming channel has to confirm an event.
    public var confirmWindow: Duration { state.withLock { $0.confirms.window } }
    /// This node's name among the nodes of a ``ChannelRelay``: unique per process.
    public let node: String
    /// The other nodes, when there are any.
    let relay: (any ChannelRelay)?
    /// How long a node's hold of a channel lasts unless renewed (it renews every third of it).
    let lease: Duration
    /// The engine's clock: what confirm deadlines are set and compared by.
    let now: @Sendable () -> Date
    /// The node's clock: what the relay's timers sleep on (its ticks, the wait for an answer) and the
    /// channel's authentication limit.
    public let clock: any Clock<Duration>
    let state: Mutex<State>
    private let hooks = Mutex(Hooks())
    /// What runs when a confirming delivery of this node's engine settles.
    var settledAction: Settle? { hooks.withLock { $0.settled } }

    /// What the engine asked to run when a channel opens and when a delivery settles. The closures
    /// are fields of a struct, never the value of the `Mutex` itself: a closure read out of a
    /// generic container through an `inout` access is re-abstracted and written back wrapped in
    /// two more thunks, so each read made every later call one level deeper (a confirmation
    /// then cost time and task memory in proportion to all the reads before it).
    private struct Hooks {
        var connected: (@Sendable (Session) async -> Void)?
        var settled: Settle?
    }

    /// Creates the node's channels.
    /// - Parameters:
    ///   - relay: How other nodes are reached; nil on a single node.
    ///   - lease: How long a hold lasts without renewal: a node that dies stops receiving after it.
    ///   - now: The engine's clock.
    ///   - clock: What the timers sleep on.
    public init(
        confirmWindow: Duration = .seconds(10), node: String = DirectChannels.uniqueNodeName(),
        relay: (any ChannelRelay)? = nil, lease: Duration = .seconds(60),
        now: @escaping @Sendable () -> Date = Date.init, clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.state = Mutex(State(confirms: ConfirmWindow(window: confirmWindow)))
        self.node = node
        self.relay = relay
        self.lease = lease
        self.now = now
        self.clock = clock
    }

    /// The host name, the process id and a random suffix: two nodes on one machine differ.
    public static func uniqueNodeName() -> String {
        let suffix = UInt32.random(in: 0...UInt32.max)
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)-\(suffix)"
    }

    /// What runs when a channel opens (the engine wakes what waits for the device).
    func onConnect(_ action: @escaping @Sendable (Session) async -> Void) {
        hooks.withLock { $0.connected = action }
    }

    /// What runs when a confirming delivery of this node's engine settles (the engine records it).
    func onSettle(_ action: @escaping Settle) {
        hooks.withLock { $0.settled = action }
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
            let replaced = state.open.removeValue(forKey: installationID).map {
                ($0, state.confirms.end(session: $0.session.id))
            }
            state.open[installationID] = Open(session: session, write: write, onTeardown: onTeardown)
            return (session, replaced)
        }
        if let (open, waiting) = replaced {
            open.onTeardown()
            await settle(waiting, as: .channelReplaced)
        }
        await hold(installationID)
        await hooks.withLock { $0.connected }?(session)
        return session
    }

    /// Closes a channel (the socket closed, or the device unsubscribed): what waited on it falls
    /// back at once.
    /// - Returns: How many deliveries waited on it for a confirmation; nil when the channel was no
    ///   longer open (torn down or replaced already).
    @discardableResult
    public func close(_ session: Session) async -> Int? {
        let waiting = state.withLock { state -> [ConfirmWindow<Ticket>.Waiting]? in
            guard state.open[session.installationID]?.session == session else { return nil }
            state.open.removeValue(forKey: session.installationID)
            return state.confirms.end(session: session.id)
        }
        guard let waiting else { return nil }
        await settle(waiting, as: .channelClosed)
        await release(session.installationID)
        return waiting.count
    }

    /// The device confirms an event; false when the channel or the confirmation is unknown.
    public func confirm(_ session: Session, confirmID: String) async -> Bool {
        let waiting = state.withLock { state -> ConfirmWindow<Ticket>.Waiting? in
            guard state.open[session.installationID]?.session == session else { return nil }
            return state.confirms.confirm(confirmID, session: session.id)
        }
        guard let waiting else { return false }
        await settle([waiting], as: .confirmed)
        return true
    }

    /// Tears down every channel that missed a confirmation by now; what waited on them falls back.
    /// Runs before each delivery, when the engine finds a confirming delivery past its window, and
    /// (with a relay) every second.
    public func expireMissed() async {
        let now = self.now()
        let (torn, missed) = state.withLock { state -> ([Open], [ConfirmWindow<Ticket>.Waiting]) in
            guard let next = state.confirms.nextDeadline, next <= now else { return ([], []) }
            let (sessions, missed) = state.confirms.expire(now: now)
            let torn = state.open.values.filter { sessions.contains($0.session.id) }
            for open in torn { state.open.removeValue(forKey: open.session.installationID) }
            return (torn, missed)
        }
        for open in torn { open.onTeardown() }
        await settle(missed, as: .unconfirmed)
        for open in torn { await release(open.session.installationID) }
    }

    /// How a delivery that did not settle as confirmed is recorded (its `fell_back` reason).
    public func fallbackReason(_ settlement: PendingDelivery.Reason) -> String {
        state.withLock { $0.confirms.reason(settlement) }
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

    /// Sends an event of a notification over the installation's channel — on this node, or through
    /// the relay on the node holding it.
    /// - Parameter holder: The node holding the channel, when the caller looked it up already.
    public func deliver(
        _ event: [String: JSONValue], to installationID: String, notificationID: String, holder: String? = nil
    ) async -> Outcome {
        await deliver(event, to: installationID, holder: holder, ticket: .local(notificationID: notificationID))
    }

    /// ``deliver(_:to:notificationID:holder:)`` for whoever `ticket` names.
    func deliver(
        _ event: [String: JSONValue], to installationID: String, holder: String?, ticket: Ticket
    ) async -> Outcome {
        await expireMissed()
        guard
            let (session, write) = state.withLock({ state in state.open[installationID].map { ($0.session, $0.write) } }
            )
        else {
            guard case .local(let notificationID) = ticket else { return .notConnected }
            return await relayDeliver(event, to: installationID, notificationID: notificationID, holder: holder)
        }
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
        let until = state.withLock { state -> Date? in
            guard state.open[installationID]?.session == session else { return nil }
            return state.confirms.sent(
                confirmID, ticket: ticket, installationID: installationID, session: session.id, at: now())
        }
        guard let until else { return .notConnected }
        do {
            try await write(stamped)
        } catch {
            _ = state.withLock { $0.confirms.confirm(confirmID, session: session.id) }
            await close(session)
            return .fellBack(reason: "the channel could not be written to")
        }
        return .confirming(until: until)
    }

    /// Tells whoever waits how each delivery settled.
    private func settle(_ waiting: [ConfirmWindow<Ticket>.Waiting], as reason: PendingDelivery.Reason) async {
        guard !waiting.isEmpty else { return }
        let action = settledAction
        for delivery in waiting {
            switch delivery.ticket {
            case .local(let notificationID):
                await action?(notificationID, delivery.installationID, reason)
            case .relayed(let messageID, let origin):
                let message = RelayMessage(id: messageID, from: node, kind: .settled(reason))
                try? await relay?.post(message.text, to: origin)
            }
        }
    }

    /// 32 random hex characters, like Home Assistant's `random_uuid_hex()`.
    static func confirmID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
