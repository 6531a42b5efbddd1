import Foundation
import HeraldCore

/// The native JSON rendering of an installation.
package enum InstallationView {
    /// How much of the token a response may show.
    package enum TokenVisibility {
        /// The whole token: single reads by an authorized caller and write responses.
        case full
        /// The last eight characters only: list responses.
        case suffix
    }

    package static func json(_ installation: Installation, token visibility: TokenVisibility) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(installation.id),
            "app_id": .string(installation.appID),
            "user_id": string(installation.userID),
            "device_id": string(installation.deviceID),
            "platform": .string(installation.platform.rawValue),
            "service": .string(installation.service.rawValue),
            "environment": .string(installation.environment.rawValue),
            "token_suffix": .string(installation.token.suffix),
            "channels": .array(installation.channels.map(JSONValue.string)),
            "locale": string(installation.locale),
            "timezone": string(installation.timezone),
            "badge": .number(JSONNumber(installation.badge)),
            "app_version": string(installation.appVersion),
            "os_version": string(installation.osVersion),
            "device_model": string(installation.deviceModel),
            "bundle_id": string(installation.bundleID),
            "attributes": .object(installation.attributes),
            "sns_endpoint_arn": string(installation.snsEndpointARN),
            "valid": .bool(installation.valid),
            "failure_count": .number(JSONNumber(installation.failureCount)),
            "last_failure_at": timestamp(installation.lastFailureAt),
            "last_failure_reason": string(installation.lastFailureReason),
            "last_delivered_at": timestamp(installation.lastDeliveredAt),
            "last_seen_at": timestamp(installation.lastSeenAt),
            "created_at": timestamp(installation.createdAt),
            "updated_at": timestamp(installation.updatedAt),
            "invalidated_at": timestamp(installation.invalidatedAt),
        ]
        if visibility == .full {
            switch installation.token {
            case .device(let token):
                object["token"] = .string(token)
            case .webPush(let subscription):
                object["subscription"] = .object([
                    "endpoint": .string(subscription.endpoint),
                    "keys": .object(["p256dh": .string(subscription.p256dh), "auth": .string(subscription.auth)]),
                ])
            }
        }
        return .object(object)
    }

    package static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// Made once: a format style builds its time zone when created.
    private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    package static func timestamp(_ date: Date?) -> JSONValue {
        date.map { .string(timestampStyle.format($0)) } ?? .null
    }
}
