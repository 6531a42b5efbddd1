import Foundation
import HeraldCore

/// Maps an APNs answer (status, reason, timestamp, Retry-After) to one ``DeliveryOutcome``.
public enum APNsResponseClassifier {
    /// The outcome of a response.
    /// - Parameters:
    ///   - timestamp: the 410 body's `timestamp` (milliseconds since 1970), when present.
    ///   - retryAfter: the `Retry-After` header in seconds, when present.
    public static func outcome(
        status: Int, reason: APNsReason?, apnsID: String?, timestamp: Int64? = nil, retryAfter: Int? = nil
    ) -> DeliveryOutcome {
        let after = retryAfter.map { Duration.seconds($0) }
        if status == 200 { return .delivered(providerID: apnsID) }
        let wire = reason?.wire ?? "HTTP \(status)"
        switch (status, reason) {
        case (410, _):
            // Unregistered / ExpiredToken: the device token is no longer active for the topic.
            return .invalidToken(
                reason: wire, since: timestamp.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        case (400, .badDeviceToken?), (400, .deviceTokenNotForTopic?):
            // Malformed, or not this topic's (a development build's token sent to production): rejected,
            // not gone.
            return .rejectedToken(reason: wire)
        case (429, _), (500, _), (503, _):
            return .retry(reason: wire, after: after)
        case (403, _):
            // Certificate and provider-token problems: ExpiredProviderToken is retried by the client
            // with a fresh token before it ever reaches here.
            return .configurationFailure(reason: wire)
        case (400, .badTopic?), (400, .topicDisallowed?), (400, .missingTopic?), (400, .badCertificate?),
            (400, .badCertificateEnvironment?), (400, .invalidPushType?):
            return .configurationFailure(reason: wire)
        case (let code, _) where code >= 500:
            return .retry(reason: wire, after: after)
        default:
            return .rejected(reason: wire)
        }
    }
}
