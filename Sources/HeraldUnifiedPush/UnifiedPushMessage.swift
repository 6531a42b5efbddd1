import Foundation
import HeraldCore

/// One RFC 8030 push message as an app server POSTs it to a UnifiedPush endpoint: an opaque body
/// (RFC 8291 `aes128gcm`, encrypted for the device; Herald never decrypts it) and the `TTL`,
/// `Urgency` and `Topic` header fields, and the notification it becomes.
package struct UnifiedPushMessage: Sendable, Equatable {
    /// The largest body a push service must accept (RFC 8030 §7.2: 4,096 octets).
    package static let maxBodyBytes = 4_096
    /// The largest body a device of each cloud service takes: what its provider's payload limit
    /// leaves once the body is base64url and the data message wraps it (measured by
    /// `UnifiedPushTests.largestBodies`; docs/dialects/unifiedpush.md). A direct-only device
    /// takes ``maxBodyBytes``.
    package static let largestBody: [PushService: Int] = [.apns: 2_958, .fcm: 2_775]
    /// The longest TTL kept: four weeks, as the providers' own limits.
    package static let maxTTL = 28 * 86_400

    package enum Urgency: String, Sendable, CaseIterable {
        case veryLow = "very-low", low, normal, high
    }

    package var body: [UInt8]
    /// Seconds the push service keeps the message for a device it cannot reach (0: now or never).
    package var ttl: Int
    package var urgency: Urgency
    /// Replaces an undelivered message with the same topic: the providers' collapse id.
    package var topic: String?

    /// Reads the header fields of a push request.
    /// - Throws: `HeraldError` naming the header at fault: `TTL` missing or not a non-negative
    ///   integer, an unknown `Urgency`, a `Topic` that is not at most 32 base64url characters.
    package init(body: [UInt8], ttl: String?, urgency: String?, topic: String?) throws(HeraldError) {
        guard let ttl else {
            throw HeraldError.missingField("TTL")
        }
        guard let seconds = Int(ttl.trimmingCharacters(in: .whitespaces)), seconds >= 0 else {
            throw HeraldError.invalidValue("TTL", "TTL must be a number of seconds, 0 or more.")
        }
        self.ttl = min(seconds, Self.maxTTL)
        if let urgency {
            guard let value = Urgency(rawValue: urgency.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw HeraldError.invalidValue("Urgency", "Urgency must be very-low, low, normal or high.")
            }
            self.urgency = value
        } else {
            self.urgency = .normal
        }
        if let topic {
            guard !topic.isEmpty, topic.utf8.count <= 32,
                topic.utf8.allSatisfy({ Self.base64URLAlphabet.contains($0) })
            else {
                throw HeraldError.invalidValue("Topic", "Topic must be 1 to 32 characters of base64url.")
            }
        }
        self.topic = topic
        self.body = body
    }

    private static let base64URLAlphabet = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8))

    /// The notification to the endpoint's installation: a data message carrying the endpoint's id
    /// and the body in base64url (`up_endpoint`, `up_body`), high priority only for `high` urgency
    /// (on FCM; an APNs background push always goes at priority 5, as APNs requires), the topic as
    /// the collapse id, and the TTL as the provider expiry and Herald's own (a TTL of 0 gives the
    /// device one second: delivered now, or dropped).
    /// - Parameters:
    ///   - service: The installation's service: only its provider's limit applies (a direct-only
    ///     device takes the whole 4,096 bytes; a cloud one what its provider carries).
    ///   - connected: The device has a direct channel open: a body its cloud route cannot carry is
    ///     taken all the same, and waits for the channel (until the TTL) if the channel is gone by
    ///     the time it is sent.
    package func sendRequest(
        to endpoint: PushEndpoint, service: PushService, connected: Bool = false, source: String
    ) -> SendRequest {
        var data: [String: JSONValue] = ["up_endpoint": .string(endpoint.id)]
        if !body.isEmpty { data["up_body"] = .string(Self.base64URL(body)) }
        let payload = NotificationPayload(
            data: data, contentAvailable: true, priority: urgency == .high ? .high : .normal, collapseID: topic,
            ttl: ttl, overrides: ["apns": .object(["headers": .object(["apns-priority": .string("5")])])])
        var request = SendRequest(
            target: NotificationTarget(audience: .installationIDs([endpoint.installationID]), services: [service]),
            payload: payload,
            source: source, expiration: .after(seconds: max(ttl, 1)), respectPreferences: false)
        request.waitsForChannel = connected
        request.dialect = source
        return request
    }

    /// Whether the body is larger than the device's cloud route carries (a direct-only device has none).
    package func exceedsCloudRoute(of service: PushService) -> Bool {
        guard let largest = Self.largestBody[service] else { return false }
        return body.count > largest
    }

    /// Bytes in base64url without padding (RFC 4648 §5).
    package static func base64URL(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
}
