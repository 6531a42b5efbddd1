import Synchronization

/// An open-loop schedule, what the generators of `herald-bench latency` and `herald-bench notify` share: request
/// `n` starts at `start + n / rate` whatever happened to the requests before it (no coordinated omission), each
/// in a task of its own, so a slow answer never delays the next request.
struct OpenLoop: Sendable {
    /// What one schedule produced.
    struct Run<Result: Sendable>: Sendable {
        /// Each request's result, in schedule order.
        var results: [Result]
        /// The first request's intended start.
        var start: ContinuousClock.Instant
        /// The longest a request started after its intended instant (the generator's own lag).
        var maxStartLag: Duration
    }

    /// Requests per second.
    let rate: Double
    /// Requests in all.
    let count: Int

    /// Runs `request` for every index at its intended instant and returns once every one has finished.
    func run<Result: Sendable>(
        _ request: @escaping @Sendable (_ index: Int, _ intended: ContinuousClock.Instant) async -> Result
    ) async -> Run<Result> {
        let interval = Duration.nanoseconds(Int64((1e9 / rate).rounded()))
        let table = ResultTable<Result>(count: count)
        let start = ContinuousClock.now + .milliseconds(20)
        var maxStartLag = Duration.zero
        await withDiscardingTaskGroup { group in
            for index in 0..<count {
                let intended = start + interval * index
                try? await Task.sleep(until: intended, clock: .continuous)
                maxStartLag = max(maxStartLag, ContinuousClock.now - intended)
                group.addTask {
                    let result = await request(index, intended)
                    table.results.withLock { $0[index] = result }
                }
            }
        }
        return Run(results: table.results.withLock { $0.compactMap { $0 } }, start: start, maxStartLag: maxStartLag)
    }
}

/// The results of one schedule, filled in by the requests' tasks as they finish.
private final class ResultTable<Result: Sendable>: Sendable {
    let results: Mutex<[Result?]>

    init(count: Int) {
        results = Mutex([Result?](repeating: nil, count: count))
    }
}
