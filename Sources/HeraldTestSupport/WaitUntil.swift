/// Waits until `condition` holds, asking every `interval` of real time: a guard against a hang, not a
/// timing assertion (a test that can drive a clock injects ``ManualClock`` instead).
/// - Parameters:
///   - what: What the test waits for, named in the error.
///   - detail: More to say when it times out (the state it saw last).
/// - Throws: ``WaitTimedOut`` when `timeout` passes first; what `condition` throws.
public func waitUntil(
    _ what: String, timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(20),
    detail: () -> String = { "" }, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: what, timeout: timeout, detail: detail()) }
        try await Task.sleep(for: interval)
    }
}

/// Waits until `value` is not nil, asking as ``waitUntil(_:timeout:every:detail:_:)`` does, and returns it.
/// - Throws: ``WaitTimedOut`` when `timeout` passes first; what `value` throws.
public func waitForValue<Value>(
    _ what: String, timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(20),
    _ value: () async throws -> Value?
) async throws -> Value {
    var found: Value?
    try await waitUntil(what, timeout: timeout, every: interval) {
        found = try await value()
        return found != nil
    }
    // The condition held: found is set.
    return found!
}

/// What ``waitUntil(_:timeout:every:detail:_:)`` throws when its condition did not hold in time.
public struct WaitTimedOut: Error, CustomStringConvertible {
    /// What the test waited for.
    public let what: String
    /// How long it waited.
    public let timeout: Duration
    /// What the test said of the state it saw last.
    public let detail: String

    public var description: String {
        "timed out after \(timeout) waiting for \(what)" + (detail.isEmpty ? "" : ": \(detail)")
    }
}
