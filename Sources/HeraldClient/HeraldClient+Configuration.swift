import Foundation

extension HeraldClient {
    /// Where the client calls Herald and with what credentials.
    public struct Configuration: Sendable {
        /// Herald's address (`https://push.example.com`); routes are appended to it.
        public var baseURL: URL
        /// The app's client key (`hck_…`): may register, update and delete installations and report opens.
        public var clientKey: String
        /// The app id, sent as `X-Herald-App` with user tokens when Herald serves several apps.
        public var appID: String?
        /// The signed-in user's token (a JWT or session token from the app's own auth), or nil when
        /// nobody is signed in. With a token every call is made as that user (installations become
        /// theirs; preferences need it); without one, with the client key.
        public var userToken: @Sendable () async throws -> String?
        /// How failed calls are retried.
        public var retry: RetryPolicy
        /// The time limit of each HTTP request, in seconds.
        public var requestTimeout: TimeInterval

        /// Creates a configuration.
        public init(
            baseURL: URL, clientKey: String, appID: String? = nil,
            userToken: @escaping @Sendable () async throws -> String? = { nil }, retry: RetryPolicy = RetryPolicy(),
            requestTimeout: TimeInterval = 30
        ) {
            self.baseURL = baseURL
            self.clientKey = clientKey
            self.appID = appID
            self.userToken = userToken
            self.retry = retry
            self.requestTimeout = requestTimeout
        }
    }

    /// Bounded retries with exponential backoff and full jitter, for answers worth another try:
    /// `429`, `5xx`, and no answer at all (connection refused or lost, timeout). A `Retry-After`
    /// is honoured; one longer than ``maxDelay`` ends the retries.
    public struct RetryPolicy: Sendable, Equatable {
        /// Attempts in all, the first included (1: no retry).
        public var maxAttempts: Int
        /// The ceiling of the first retry's random delay; it doubles with each retry.
        public var initialDelay: Duration
        /// The longest wait before a retry.
        public var maxDelay: Duration

        /// Creates a policy.
        public init(maxAttempts: Int = 4, initialDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(8))
        {
            self.maxAttempts = max(1, maxAttempts)
            self.initialDelay = initialDelay
            self.maxDelay = maxDelay
        }

        /// No retries.
        public static let none = RetryPolicy(maxAttempts: 1)

        /// The wait before retry number `retry` (1 for the first): a random duration up to
        /// `initialDelay × 2^(retry-1)`, capped at `maxDelay`; `retryAfter` when the server named
        /// one; nil when that is longer than `maxDelay` (stop retrying).
        func delay(retry: Int, retryAfter: Duration?) -> Duration? {
            if let retryAfter { return retryAfter <= maxDelay ? retryAfter : nil }
            let ceiling = min(maxDelay, initialDelay * (1 << min(max(retry - 1, 0), 20)))
            let seconds = Double(ceiling.components.seconds) + Double(ceiling.components.attoseconds) / 1e18
            return .milliseconds(Int64((Double.random(in: 0...1) * seconds * 1000).rounded()))
        }
    }
}
