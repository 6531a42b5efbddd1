import Foundation
import HeraldCore
import Logging
import ServiceLifecycle

/// The engine's workers as one `Service`: each claims a due job, works it, and looks again; idle
/// workers poll every `pollInterval` and answer a wake-up at once. On graceful shutdown they stop
/// claiming, finish the page in hand, release their job, and return.
public struct DispatchWorker: Service {
    private let dispatcher: Dispatcher
    private let node: String

    /// Creates the workers of one node.
    public init(dispatcher: Dispatcher, node: String = ProcessInfo.processInfo.hostName) {
        self.dispatcher = dispatcher
        self.node = "\(node)-\(ProcessInfo.processInfo.processIdentifier)-\(Identifier.make(now: Date()).suffix(6))"
    }

    public func run() async throws {
        let recovered = try await dispatcher.store.recoverJobs()
        if recovered > 0 {
            dispatcher.logger.notice("resumed jobs of a previous run", metadata: ["herald.jobs": "\(recovered)"])
        }
        if let interval = dispatcher.configuration.cleanupInterval {
            try await dispatcher.store.scheduleJob(
                kind: "cleanup", reference: "registry",
                runAt: dispatcher.now().addingTimeInterval(interval.timeInterval))
        }
        await withDiscardingTaskGroup { group in
            for worker in 0..<dispatcher.configuration.workers {
                group.addTask { await self.work(owner: "\(node)-w\(worker)") }
            }
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
        let step = Duration.milliseconds(20)
        var waited = Duration.zero
        while waited < dispatcher.configuration.pollInterval, !stopping(), !dispatcher.takeWakeup() {
            try? await dispatcher.clock.sleep(for: step)
            waited += step
        }
    }
}
