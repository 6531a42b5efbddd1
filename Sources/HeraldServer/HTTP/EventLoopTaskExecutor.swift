import NIOCore

/// Runs a task's jobs on a NIO event loop: a task that prefers it (`withTaskExecutorPreference`,
/// `addTask(executorPreference:)`) runs its nonisolated code, and its child tasks, on that loop's
/// thread instead of Swift's global executor (docs/performance.md, the one-notification path).
///
/// A connection's requests are handled on its own event loop (``TimedHTTPChannel``), so a request
/// resumes where its bytes are read and written, without a hop to another thread and back. The
/// engine's workers run on the loops too, one each in turn (``DispatchWorker``), so a wake-up from a
/// request on the same loop and a provider connection's answer there need no thread switch. What a
/// task awaits elsewhere (the SQLite writer's and readers' queues, an actor) still runs there; its
/// answer comes back to the loop. Nothing on these paths blocks its thread: a store call is
/// asynchronous, and so is every wait.
public final class EventLoopTaskExecutor: TaskExecutor {
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// One executor for each event loop of `group`.
    public static func all(of group: any EventLoopGroup) -> [EventLoopTaskExecutor] {
        group.makeIterator().map { EventLoopTaskExecutor($0) }
    }
}
