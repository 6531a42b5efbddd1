extension MockPushService {
    /// An answer scripted for a subscription with ``MockPushService/script(subscription:_:times:)``.
    ///
    /// A script takes effect only for requests that pass every check of the request itself (VAPID,
    /// headers, encryption): it stands for the state of the subscription or of the service.
    public struct ScriptedResponse: Sendable {
        /// The status to answer with.
        public var status: Int
        /// The body (error text); empty for none.
        public var body: String
        /// The `Retry-After` header value, verbatim (delay-seconds or an HTTP-date).
        public var retryAfter: String?
        /// How long the mock waits before answering.
        public var delay: Duration

        /// Any answer.
        public static func status(
            _ status: Int, body: String = "", retryAfter: String? = nil, after delay: Duration = .zero
        ) -> ScriptedResponse {
            ScriptedResponse(status: status, body: body, retryAfter: retryAfter, delay: delay)
        }

        /// The normal `201 Created` answer (with `Location`), after `delay`.
        public static func created(after delay: Duration = .zero) -> ScriptedResponse {
            .status(201, after: delay)
        }

        /// `404 Not Found`: the subscription expired.
        public static let notFound = ScriptedResponse.status(404, body: "subscription not found")

        /// `410 Gone`: the browser unsubscribed.
        public static let gone = ScriptedResponse.status(410, body: "push subscription has unsubscribed or expired")

        /// `413 Payload Too Large`, as a service with a lower limit than RFC 8291's 4096 bytes answers.
        public static let payloadTooLarge = ScriptedResponse.status(413, body: "payload too large")

        /// `429 Too Many Requests`, with `Retry-After` when given.
        public static func tooManyRequests(retryAfter: String? = nil) -> ScriptedResponse {
            .status(429, body: "too many requests", retryAfter: retryAfter)
        }

        /// `500 Internal Server Error`.
        public static let internalServerError = ScriptedResponse.status(500, body: "internal error")

        /// `503 Service Unavailable`, with `Retry-After` when given.
        public static func serviceUnavailable(retryAfter: String? = nil) -> ScriptedResponse {
            .status(503, body: "service unavailable", retryAfter: retryAfter)
        }
    }
}
