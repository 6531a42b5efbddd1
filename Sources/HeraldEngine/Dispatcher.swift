import Foundation
import HeraldCore
import Logging
import Synchronization

/// Herald's dispatch engine: accepts send requests durably, and turns each into deliveries to
/// many devices, page by page, with preferences, schedules, retries and token lifecycle applied.
/// Workers (``DispatchWorker``) call ``process(_:owner:isStopping:)`` for each job they claim.
public final class Dispatcher: Sendable {
    let store: any EngineStore
    /// The apps' transports; replaced whole when credentials are reloaded.
    private let transportTable: Mutex<[String: AppTransports]>
    let configuration: EngineConfiguration
    let now: @Sendable () -> Date
    /// The node's clock: what its timers sleep on, the poll of due jobs among them (tests inject one
    /// that moves when told).
    public let clock: any Clock<Duration>
    let logger: Logger
    let gate = ProviderGate()
    /// The devices connected to this node directly.
    public let channels: DirectChannels
    /// The direct channel as the route tried first.
    let direct: DirectTransport
    /// Confirming deliveries between their write and their page's commit.
    let settlements = Mutex(ChannelSettlements())
    let wakeups = WakeSignal()
    /// Small notifications accepted here, handed to this node's workers in memory.
    let handoff = LocalHandoff()
    /// The jobs this node's workers are working, whose leases ``renewLeases()`` renews.
    let heldJobs = HeldJobs()
    private let counts = Mutex(WorkCounts())
    /// Who is told of each committed page, by notification source (``observeCommits(source:_:)``).
    let commitObservers = Mutex(CommitObservers())

    /// Creates an engine over a store and the apps' transports.
    /// - Parameters:
    ///   - now: The wall clock: what records are stamped with and schedules compared against.
    ///   - clock: What the node's poll of due jobs sleeps on between polls.
    public init(
        store: any EngineStore, transports: [String: AppTransports], configuration: EngineConfiguration = .init(),
        logger: Logger = Logger(label: "herald.engine"), now: @escaping @Sendable () -> Date = Date.init,
        clock: any Clock<Duration> = ContinuousClock(), channels: DirectChannels? = nil
    ) {
        self.clock = clock
        self.store = store
        self.transportTable = Mutex(transports)
        self.configuration = configuration
        self.logger = logger
        self.now = now
        // A store shared by several nodes (PostgreSQL) relays channel deliveries between them.
        self.channels =
            channels
            ?? DirectChannels(
                confirmWindow: configuration.channelConfirmWindow, relay: store as? any ChannelRelay, now: now,
                clock: clock)
        self.direct = DirectTransport(channels: self.channels)
        self.channels.onSettle { [weak self] notificationID, installationID, reason in
            await self?.settle(notificationID: notificationID, installationID: installationID, as: reason)
        }
        // A device that connects gets what waited for it now, not at the next recheck.
        self.channels.onConnect { [weak self] session in
            guard let self else { return }
            do {
                if try await self.store.wakeOfflineDeliveries(recipient: session.installationID, now: self.now()) > 0 {
                    self.wake()
                }
            } catch {
                self.logger.warning(
                    "waiting deliveries not woken", metadata: ["herald.installation": "\(session.installationID)"])
            }
        }
    }

    /// Tells an idle worker to look for due jobs now (a notification was accepted, a clock moved);
    /// a worker that finds one wakes the next.
    public func wake() {
        wakeups.signal()
    }

    /// Closes every provider connection.
    public func shutdown() async {
        for transport in transportTable.withLock({ $0 }).values { await transport.shutdown() }
    }

    /// An app's transports; none for an app without any (its deliveries fail with a configuration failure).
    func transports(of appID: String) -> AppTransports {
        transportTable.withLock { $0[appID] } ?? AppTransports([])
    }

    /// Every app's transports now.
    public var transports: [String: AppTransports] { transportTable.withLock { $0 } }

    /// Replaces every app's transports (reloaded credentials): pages that start from now on use the
    /// new ones. Returns the old ones, still serving the pages in flight; the caller closes them once
    /// those are done.
    public func replaceTransports(_ transports: [String: AppTransports]) -> [String: AppTransports] {
        transportTable.withLock { table in
            defer { table = transports }
            return table
        }
    }

    /// Whether an app's ledger keeps successes.
    func logsSuccesses(appID: String) -> Bool {
        (configuration.deliveryLog[appID] ?? configuration.defaultDeliveryLog) == .all
    }
}

/// How this node's workers came by their jobs since the start.
public struct WorkCounts: Sendable, Equatable {
    /// Jobs handed over in memory by this node's intake (no claim through the store).
    public var handedOver = 0
    /// Jobs claimed through the store.
    public var claimed = 0
    /// Claims through the store that found nothing due (a worker woken for nothing).
    public var emptyClaims = 0
    /// Takes from the hand-off: one take is every handed job waiting then (up to
    /// ``LocalHandoff/batchLimit``), worked together.
    public var handedTakes = 0
    /// Jobs this node's workers are working now.
    public var running = 0
}

extension Dispatcher {
    /// How this node's workers came by their jobs since the start.
    public var workCounts: WorkCounts { counts.withLock { $0 } }

    /// Notifications accepted on this node that wait in memory for one of its workers.
    public var handedWaiting: Int { handoff.waiting }

    /// A worker starts (`1`) or ends (`-1`) working a job.
    func count(running change: Int) {
        counts.withLock { $0.running += change }
    }

    /// Counts jobs taken from the hand-off in one take, or a claim through the store and whether it found one.
    func count(handedOver: Int = 0, claimed: Bool? = nil) {
        counts.withLock { counts in
            if handedOver > 0 {
                counts.handedOver += handedOver
                counts.handedTakes += 1
            }
            switch claimed {
            case true?: counts.claimed += 1
            case false?: counts.emptyClaims += 1
            case nil: break
            }
        }
    }
}

extension Dispatcher {
    /// Claims and works every job due now, one after another, until none is left; returns how
    /// many ran. `herald send --direct` and tests use it to dispatch without a worker pool.
    public func runDueJobs(owner: String = "inline-\(ProcessInfo.processInfo.processIdentifier)") async throws -> Int {
        var ran = 0
        while true {
            let now = self.now()
            guard
                let job = try await store.claimJob(
                    kinds: [.notification, .range], owner: owner, now: now,
                    lockedUntil: now.addingTimeInterval(configuration.lease.timeInterval))
            else { return ran }
            try await process(job, owner: owner, isStopping: { false })
            ran += 1
        }
    }
}
