import Foundation
import HeraldCore
import Logging
import ServiceLifecycle

/// The engine's workers as one `Service`: each claims a due job, works it, and looks again. Idle
/// workers sleep until the store signals new work (on any node sharing it: ``JobQueue/jobSignals()``)
/// or this node wakes them, with a poll every `pollInterval` only as the fallback for work that
/// becomes due by time. On graceful shutdown they stop claiming, finish the page in hand, release
/// their job, and return.
public struct DispatchWorker: Service {
    private let dispatcher: Dispatcher
    private let node: String

    /// Creates the workers of one node.
    public init(dispatcher: Dispatcher, node: String = ProcessInfo.processInfo.hostName) {
        self.dispatcher = dispatcher
        self.node = "\(node)-\(ProcessInfo.processInfo.processIdentifier)-\(Identifier.make(now: Date()).suffix(6))"
    }

    public func run() async throws {
        if let interval = dispatcher.configuration.cleanupInterval {
            try await dispatcher.store.scheduleJob(
                kind: "cleanup", reference: "registry",
                runAt: dispatcher.now().addingTimeInterval(interval.timeInterval))
        }
        let dispatcher = self.dispatcher
        // The store's signals (other nodes' work too) wake this node's idle workers.
        let signals = dispatcher.store.jobSignals()
        let listener = Task {
            for await _ in signals { dispatcher.wake() }
        }
        // Channels held here serve other nodes' deliveries (with a relay; returns at once without).
        let relay = Task { await dispatcher.channels.runRelay() }
        defer {
            listener.cancel()
            relay.cancel()
        }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for worker in 0..<dispatcher.configuration.workers {
                    group.addTask { await self.work(owner: "\(node)-w\(worker)") }
                }
                if dispatcher.configuration.workers == 0 {
                    // A node without workers still serves its channels to the others until it stops.
                    group.addTask { try? await gracefulShutdown() }
                }
            }
        } onGracefulShutdown: {
            dispatcher.wake()
        }
    }

    private func work(owner: String) async {
        let dispatcher = self.dispatcher
        let stopping: @Sendable () -> Bool = { Task.isShuttingDownGracefully || Task.isCancelled }
        while !stopping() {
            do {
                let now = dispatcher.now()
                if let job = try await dispatcher.store.claimJob(
                    kinds: ["notification", "cleanup"], owner: owner, now: now,
                    lockedUntil: now.addingTimeInterval(dispatcher.configuration.lease.timeInterval))
                {
                    do {
                        try await dispatcher.process(job, owner: owner, isStopping: stopping)
                    } catch {
                        dispatcher.logger.error(
                            "job failed", metadata: ["herald.job": "\(job.reference)", "error": "\(error)"])
                        try await dispatcher.store.releaseJob(
                            id: job.id, owner: owner,
                            runAt: dispatcher.now().addingTimeInterval(
                                dispatcher.configuration.pollInterval.timeInterval),
                            error: "\(error)")
                    }
                    continue
                }
            } catch {
                dispatcher.logger.error("claiming jobs failed", metadata: ["error": "\(error)"])
            }
            await idle(stopping)
        }
    }

    /// Waits for a wake-up, the poll interval, or shutdown, whichever comes first.
    private func idle(_ stopping: @Sendable () -> Bool) async {
        guard !stopping(), !dispatcher.wakeups.take() else { return }
        let dispatcher = self.dispatcher
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await dispatcher.clock.sleep(for: dispatcher.configuration.pollInterval) }
            group.addTask { await dispatcher.wakeups.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
