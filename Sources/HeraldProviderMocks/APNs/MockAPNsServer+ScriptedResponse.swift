import Foundation

extension MockAPNsServer {
    /// An answer scripted for a device token with ``MockAPNsServer/script(token:_:times:)``.
    ///
    /// A script takes effect only for requests that pass every check APNs makes of the request itself
    /// (authentication, headers, payload): it stands for the state of the device or of APNs, not of the request.
    public struct ScriptedResponse: Sendable {
        enum Outcome: Sendable {
            case success
            case error(status: Int, reason: String, timestamp: Date?, retryAfter: Int?)
        }

        let outcome: Outcome
        /// How long the mock waits before answering.
        public var delay: Duration

        /// A normal `200` answer after `delay`.
        public static func success(after delay: Duration = .zero) -> ScriptedResponse {
            ScriptedResponse(outcome: .success, delay: delay)
        }

        /// An error answer: `status` with body `{"reason": reason}`, plus `"timestamp"` (milliseconds since 1970)
        /// when given, and a `Retry-After` header (seconds) when given.
        public static func error(
            status: Int, reason: String, timestamp: Date? = nil, retryAfter: Int? = nil, after delay: Duration = .zero
        ) -> ScriptedResponse {
            ScriptedResponse(
                outcome: .error(status: status, reason: reason, timestamp: timestamp, retryAfter: retryAfter),
                delay: delay)
        }

        /// `410 Unregistered`: the device token is no longer active for the topic since `timestamp`.
        public static func unregistered(since timestamp: Date = Date()) -> ScriptedResponse {
            .error(status: 410, reason: "Unregistered", timestamp: timestamp)
        }

        /// `400 BadDeviceToken`: the token is not valid for this environment.
        public static let badDeviceToken = ScriptedResponse.error(status: 400, reason: "BadDeviceToken")

        /// `400 DeviceTokenNotForTopic`: the token belongs to another app.
        public static let deviceTokenNotForTopic = ScriptedResponse.error(status: 400, reason: "DeviceTokenNotForTopic")

        /// `429 TooManyRequests`: too many notifications to this device token.
        public static func tooManyRequests(retryAfter: Int? = nil) -> ScriptedResponse {
            .error(status: 429, reason: "TooManyRequests", retryAfter: retryAfter)
        }

        /// `500 InternalServerError`.
        public static let internalServerError = ScriptedResponse.error(status: 500, reason: "InternalServerError")

        /// `503 ServiceUnavailable`.
        public static func serviceUnavailable(retryAfter: Int? = nil) -> ScriptedResponse {
            .error(status: 503, reason: "ServiceUnavailable", retryAfter: retryAfter)
        }
    }
}
