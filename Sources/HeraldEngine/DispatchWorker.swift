import Foundation
import HeraldCore
import Logging
import ServiceLifecycle

/// The engine's workers as one `Service`: each takes a job handed over in memory by this node's
/// intake (``LocalHandoff``) or claims a due one through the store, works it, and looks again. Idle
/// workers sleep until one is woken: by a hand-off, by the store's signal of new work (on any node
/// sharing it: ``JobQueue/jobSignals()``), or by the node's poll every `pollInterval`, the fallback
/// for work that becomes due by time; a worker that finds work wakes the next. On graceful shutdown
/// they stop claiming, finish the page in hand, release their job, and return; handed jobs no
/// worker took are released.
public struct DispatchWorker: Service {
    private let dispatcher: Dispatcher
    private let node: String
    /// What the workers run on, one each in turn (the event loops the node's connections run on);
    /// empty: Swift's global executor.
    private let executors: [any TaskExecutor]

    /// Creates the workers of one node.
    public init(
        dispatcher: Dispatcher, node: String = ProcessInfo.processInfo.hostName, executors: [any TaskExecutor] = []
    ) {
        self.dispatcher = dispatcher
        self.executors = executors
        self.node = "\(node)-\(ProcessInfo.processInfo.processIdentifier)-\(Identifier.make(now: Date()).suffix(6))"
    }

    public func run() async throws {
        if let interval = dispatcher.configuration.cleanupInterval {
            try await dispatcher.store.scheduleJob(
                kind: .cleanup, reference: "registry",
                runAt: dispatcher.now().addingTimeInterval(interval.timeInterval))
        }
        let dispatcher = self.dispatcher
        let signals = dispatcher.store.jobSignals()
        if dispatcher.configuration.workers > 0 { dispatcher.handoff.open(owner: "\(node)-local") }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { outer in
                outer.addTask { await self.poll() }
                // The store's signals (other nodes' work too) wake this node's idle workers.
                outer.addTask { for await _ in signals { dispatcher.wake() } }
                // Channels held here serve other nodes' deliveries (with a relay; returns at once without).
                outer.addTask { await dispatcher.channels.runRelay() }
                // The leases of the jobs being worked are renewed while they are worked.
                outer.addTask { await dispatcher.renewLeases() }
                await withDiscardingTaskGroup { group in
                    for worker in 0..<dispatcher.configuration.workers {
                        let executor = executors.isEmpty ? nil : executors[worker % executors.count]
                        group.addTask(executorPreference: executor) { await self.work(owner: "\(node)-w\(worker)") }
                    }
                    if dispatcher.configuration.workers == 0 {
                        // A node without workers still serves its channels to the others until it stops.
                        group.addTask { try? await gracefulShutdown() }
                    }
                }
                outer.cancelAll()
            }
        } onGracefulShutdown: {
            dispatcher.wakeups.signalAll()
        }
        // Handed jobs no worker took are released for the next start (or another node) to claim.
        for item in dispatcher.handoff.close() {
            try? await dispatcher.store.releaseJob(
                id: item.job.id, owner: item.owner, runAt: item.notification.createdAt, error: nil)
        }
    }

    private func work(owner: String) async {
        let dispatcher = self.dispatcher
        let stopping: @Sendable () -> Bool = { Task.isShuttingDownGracefully || Task.isCancelled }
        // Whether to look in the store before sleeping: at start, after a wake-up and after a job
        // claimed there; not after a handed job (nothing says the store has work: that would be a
        // write transaction per notification finding nothing).
        var claim = true
        while !stopping() {
            if let (items, more) = dispatcher.handoff.take(upTo: LocalHandoff.batchLimit) {
                claim = false
                if more { dispatcher.wakeups.signal() }
                // One that waited past half its lease is left to the store: its lease may run out
                // while it is worked, and another worker claim it.
                let now = dispatcher.now()
                let fresh = items.filter {
                    now.timeIntervalSince($0.handedAt) < dispatcher.configuration.lease.timeInterval / 2
                }
                dispatcher.count(handedOver: items.count)
                await runHanded(fresh, stopping)
                continue
            }
            if !claim {
                await idle(stopping)
                claim = true
                continue
            }
            do {
                let now = dispatcher.now()
                if let job = try await dispatcher.store.claimJob(
                    kinds: [.notification, .range, .cleanup], owner: owner, now: now,
                    lockedUntil: now.addingTimeInterval(dispatcher.configuration.lease.timeInterval))
                {
                    dispatcher.count(claimed: true)
                    // More may be due: the next idle worker looks too.
                    dispatcher.wakeups.signal()
                    await run(job, owner: owner, notification: nil, stopping)
                    continue
                }
                dispatcher.count(claimed: false)
            } catch {
                dispatcher.logger.error("claiming jobs failed", metadata: ["error": "\(error)"])
            }
            await idle(stopping)
        }
    }

    /// Works handed jobs together: their first batches read in one trip to the store, then each
    /// sent and closed in a child task, so that their provider requests and commits go out
    /// together. They go in groups that hold what one job could: at most a page of recipients
    /// (``EngineConfiguration/pageSize``) and each installation once, so that a worker still has at
    /// most one page sent and not committed, and one badge increment per installation, when the
    /// process dies. (One alone still reads its page and preferences in one trip.)
    private func runHanded(_ items: [LocalHandoff.Item], _ stopping: @escaping @Sendable () -> Bool) async {
        guard !items.isEmpty else { return }
        let batches: [Dispatcher.Batch]
        do {
            batches = try await dispatcher.firstBatches(of: items.map(\.notification), known: items.map(\.addresses))
        } catch {
            // Each reads its own (and, failing again, is released as any failed job is).
            dispatcher.logger.warning("reading handed jobs together failed", metadata: ["error": "\(error)"])
            for item in items { await run(item.job, owner: item.owner, notification: item.notification, stopping) }
            return
        }
        if items.count == 1, let item = items.first {
            return await run(item.job, owner: item.owner, notification: item.notification, first: batches[0], stopping)
        }
        for group in Self.groups(of: batches, pageSize: dispatcher.configuration.pageSize) {
            await withDiscardingTaskGroup { tasks in
                for index in group {
                    let (item, first) = (items[index], batches[index])
                    tasks.addTask {
                        await self.run(
                            item.job, owner: item.owner, notification: item.notification, first: first, stopping)
                    }
                }
            }
        }
    }

    /// Consecutive groups of first batches (their indices), each with at most `pageSize` recipients
    /// in all (or one batch) and no installation twice. A target with more than its first batch
    /// sends up to a page at once (``EngineConfiguration/pipelineDepth`` batches): a group of its own.
    static func groups(of batches: [Dispatcher.Batch], pageSize: Int) -> [Range<Int>] {
        var groups: [Range<Int>] = []
        var start = 0
        var recipients = 0
        var installations: Set<String> = []
        for (index, batch) in batches.enumerated() {
            let ids = batch.recipients.compactMap(\.installationID)
            let size = batch.exhausted ? batch.recipients.count : pageSize
            if index > start, recipients + size > pageSize || !installations.isDisjoint(with: ids) {
                groups.append(start..<index)
                (start, recipients) = (index, 0)
                installations.removeAll(keepingCapacity: true)
            }
            recipients += size
            installations.formUnion(ids)
        }
        if start < batches.count { groups.append(start..<batches.count) }
        return groups
    }

    /// Works a job; one that fails is released to be tried again after the poll interval.
    private func run(
        _ job: Job, owner: String, notification: PushNotification?, first: Dispatcher.Batch? = nil,
        _ stopping: @escaping @Sendable () -> Bool
    ) async {
        dispatcher.count(running: 1)
        defer { dispatcher.count(running: -1) }
        do {
            try await dispatcher.process(
                job, owner: owner, notification: notification, first: first, isStopping: stopping)
        } catch {
            dispatcher.logger.error("job failed", metadata: ["herald.job": "\(job.reference)", "error": "\(error)"])
            do {
                try await dispatcher.store.releaseJob(
                    id: job.id, owner: owner,
                    runAt: dispatcher.now().addingTimeInterval(dispatcher.configuration.pollInterval.timeInterval),
                    error: "\(error)")
            } catch {
                dispatcher.logger.error("releasing a failed job failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Waits for a wake-up (new work, the poll, or shutdown).
    private func idle(_ stopping: @Sendable () -> Bool) async {
        guard !stopping(), !dispatcher.wakeups.take() else { return }
        await dispatcher.wakeups.wait()
    }

    /// The fallback for work that becomes due by time (retries, schedules, expired leases): every
    /// `pollInterval` of the engine's clock one idle worker looks (and, finding a job, wakes the
    /// next). One timer for the node, not one per idle worker; once the node is stopping, every
    /// worker is woken to see it. Returns when cancelled.
    private func poll() async {
        while !Task.isCancelled {
            do {
                try await dispatcher.clock.sleep(for: dispatcher.configuration.pollInterval)
            } catch {
                return
            }
            if Task.isShuttingDownGracefully { dispatcher.wakeups.signalAll() } else { dispatcher.wakeups.signal() }
        }
    }
}
