import Foundation
import HeraldCore
import Synchronization

/// Small notifications accepted on this node, handed to its own workers in memory.
///
/// The common case — one notification to one user's few devices — needs no claim through the
/// database: its job is inserted already leased to this node (``JobLease``) in the transaction
/// that accepts it, and the notification itself goes to a local worker, which neither claims the
/// job nor reads the notification back. Everything else (large audiences, schedules, retries,
/// other nodes' work, recovery after a crash) is claimed through the store as before: a node that
/// dies with jobs handed here leaves them leased in the database until their lease ends, and then
/// any worker claims them.
final class LocalHandoff: Sendable {
    /// A handed job: the job as inserted, its notification, and when it was handed.
    struct Item: Sendable {
        var job: Job
        var owner: String
        var notification: PushNotification
        var handedAt: Date
        /// Its whole target as the intake read it (``SendRequest/knownAddresses``), in id order; nil: read it.
        var addresses: [InstallationAddress]?
    }

    private struct State {
        /// What the running workers commit handed jobs as; nil when no worker runs here.
        var owner: String?
        var items: [Item] = []
        var head = 0
        /// Leases given out and not yet handed or dropped (a write in flight).
        var leased = 0
    }

    /// Notifications that may wait in memory at once (leased or handed); more go through the store.
    let capacity: Int
    /// The largest explicit audience (installation ids, user ids, tokens) handed over in memory.
    let maximumAudience: Int
    private let state = Mutex(State())

    init(capacity: Int = 512, maximumAudience: Int = 100) {
        self.capacity = capacity
        self.maximumAudience = maximumAudience
    }

    /// Starts handing jobs to workers that commit as `owner`.
    func open(owner: String) {
        state.withLock { $0.owner = owner }
    }

    /// Stops handing jobs over and returns those that wait, for the caller to release.
    func close() -> [Item] {
        state.withLock { state in
            defer {
                state.owner = nil
                state.items.removeAll()
                state.head = 0
            }
            return Array(state.items[state.head...])
        }
    }

    /// The lease to insert a notification's job with, when it is one to hand over: due now, with a
    /// small explicit audience, while workers run here and fewer than ``capacity`` wait.
    func lease(for notification: PushNotification, until: Date) -> JobLease? {
        guard notification.notBefore == nil, isSmall(notification.target.audience) else { return nil }
        return state.withLock { state in
            guard let owner = state.owner, state.items.count - state.head + state.leased < capacity else { return nil }
            state.leased += 1
            return JobLease(owner: owner, until: until)
        }
    }

    /// Hands a leased job to the workers; false when it could not be (the lease was not granted a
    /// job, or no worker runs here any more: it is then claimed through the store when it ends).
    func hand(
        _ lease: JobLease, notification: PushNotification, at now: Date, addresses: [InstallationAddress]? = nil
    ) -> Bool {
        let job = lease.job
        return state.withLock { state in
            state.leased -= 1
            guard let job, let owner = state.owner, owner == lease.owner else { return false }
            state.items.append(
                Item(job: job, owner: owner, notification: notification, handedAt: now, addresses: addresses))
            return true
        }
    }

    /// A lease given out was not used (the write failed or stored nothing new).
    func drop(_ lease: JobLease) {
        state.withLock { $0.leased -= 1 }
    }

    /// How many handed jobs one worker takes at once (``take(upTo:)``), to work them together.
    static let batchLimit = 32

    /// The oldest handed jobs, at most `limit` of them, and whether more wait after them.
    func take(upTo limit: Int) -> (items: [Item], more: Bool)? {
        state.withLock { state in
            guard state.head < state.items.count else { return nil }
            let end = min(state.items.count, state.head + max(1, limit))
            let items = Array(state.items[state.head..<end])
            state.head = end
            if state.head == state.items.count {
                state.items.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 64, state.head * 2 >= state.items.count {
                state.items.removeFirst(state.head)
                state.head = 0
            }
            return (items, state.head < state.items.count)
        }
    }

    /// How many handed jobs wait.
    var waiting: Int { state.withLock { $0.items.count - $0.head } }

    private func isSmall(_ audience: NotificationTarget.Audience) -> Bool {
        switch audience {
        case .installationIDs(let ids), .userIDs(let ids): ids.count <= maximumAudience
        case .tokens(let tokens): tokens.count <= maximumAudience
        case .channels, .query, .all, .liveActivity, .liveActivityChannel: false
        }
    }
}
