import HeraldTestSupport

/// An error from a mock provider server's test API.
public struct MockServerError: Error, CustomStringConvertible, Sendable {
    private enum Code: Sendable {
        case timedOut
        case notListening
    }

    private let code: Code
    /// What went wrong, for the test log.
    public let message: String

    private init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// A wait for recorded requests ran out of time.
    static func timedOut(expected: Int, received: Int, after timeout: Duration) -> MockServerError {
        MockServerError(code: .timedOut, message: "expected \(expected) requests within \(timeout), got \(received)")
    }

    /// The listening socket has no local address after binding.
    static func notListening() -> MockServerError {
        MockServerError(code: .notListening, message: "the server socket has no local port")
    }

    /// Whether this is a timed-out wait for requests.
    public var isTimeout: Bool { code == .timedOut }

    /// See `CustomStringConvertible`.
    public var description: String { "MockServerError: \(message)" }
}
