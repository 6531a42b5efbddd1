import Foundation
import HeraldCore

/// The confirm rule of channels that confirm (Home Assistant's `support_confirm`), as a value: each
/// event written to such a channel must be confirmed within ``window``; a channel that misses one
/// is torn down, and every event still waiting on it falls back to its device's cloud route, as
/// does every event waiting on a channel that closes or is replaced.
///
/// Pure: it is told what happens and when (by the engine's clock), and answers which waiting events
/// are settled and how. ``DirectChannels`` keeps one and acts on its answers (tears channels
/// down, tells the engine); the tests drive it with dates alone.
struct ConfirmWindow<Ticket: Sendable>: Sendable {
    /// An event written and not yet confirmed.
    struct Waiting: Sendable {
        /// Who is told how it settled.
        var ticket: Ticket
        var installationID: String
        /// The channel it was written to (``DirectChannels/Session/id``).
        var session: UInt64
        /// When the channel must have confirmed it.
        var deadline: Date
    }

    /// How long a channel has to confirm an event.
    let window: Duration
    /// The events waiting for their confirmation, by confirm id.
    private(set) var waiting: [String: Waiting] = [:]

    init(window: Duration) {
        self.window = window
    }

    /// An event went out on `session` with `confirmID` at `now`.
    /// - Returns: When it must be confirmed.
    mutating func sent(
        _ confirmID: String, ticket: Ticket, installationID: String, session: UInt64, at now: Date
    ) -> Date {
        let deadline = now.addingTimeInterval(window.timeInterval)
        waiting[confirmID] = Waiting(
            ticket: ticket, installationID: installationID, session: session, deadline: deadline)
        return deadline
    }

    /// The device confirmed `confirmID` on `session`: the event, when it waited on that channel
    /// (nil: unknown, settled already, or confirmed on another channel).
    mutating func confirm(_ confirmID: String, session: UInt64) -> Waiting? {
        guard waiting[confirmID]?.session == session else { return nil }
        return waiting.removeValue(forKey: confirmID)
    }

    /// The channel ended (closed, replaced, torn down): every event that waited on it.
    mutating func end(session: UInt64) -> [Waiting] {
        let ended = waiting.filter { $0.value.session == session }
        for confirmID in ended.keys { waiting.removeValue(forKey: confirmID) }
        return ended.values.sorted { $0.deadline < $1.deadline }
    }

    /// The channels that missed a confirmation by `now`, to be torn down, and every event that
    /// waited on them (missed or not: a torn-down channel confirms nothing more).
    mutating func expire(now: Date) -> (sessions: Set<UInt64>, missed: [Waiting]) {
        let sessions = Set(waiting.values.filter { $0.deadline <= now }.map(\.session))
        guard !sessions.isEmpty else { return ([], []) }
        return (sessions, sessions.sorted().flatMap { end(session: $0) })
    }

    /// The earliest deadline of a waiting event: when ``expire(now:)`` next has something to do.
    var nextDeadline: Date? {
        waiting.values.map(\.deadline).min()
    }

    /// How the fall-back of an event is recorded (the ledger's `fell_back` reason) for each way a
    /// channel can fail to confirm.
    func reason(_ settlement: PendingDelivery.Reason) -> String {
        switch settlement {
        case .channelClosed: "the channel closed before the device confirmed"
        case .channelReplaced: "a new channel replaced this one"
        default: "not confirmed within \(window.components.seconds) s: the channel was torn down"
        }
    }
}
