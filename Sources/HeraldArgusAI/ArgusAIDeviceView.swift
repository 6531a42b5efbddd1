import Foundation
import HeraldAPI
import HeraldCore

/// The ArgusAI renderings of a registered device (an installation), with the document's field names.
package enum ArgusAIDeviceView {
    /// The attribute that holds the name a user gave the device.
    package static let nameAttribute = "name"
    /// Device names are 1 to this many characters.
    package static let maxNameLength = 100

    /// The `201` answer to a registration.
    package static func registration(_ installation: Installation, preferencesCreated: Bool) -> JSONValue {
        .object([
            "id": .string(installation.id),
            "device_id": string(installation.deviceID),
            "platform": .string(installation.platform.rawValue),
            "push_service": .string(installation.service.rawValue),
            "created_at": timestamp(installation.createdAt),
            "preferences_created": .bool(preferencesCreated),
        ])
    }

    /// One entry of `GET /api/v1/devices`: the document's token record, without the token.
    package static func device(_ installation: Installation) -> JSONValue {
        .object([
            "id": .string(installation.id),
            "device_id": string(installation.deviceID),
            "name": installation.attributes[nameAttribute] ?? .null,
            "platform": .string(installation.platform.rawValue),
            "push_service": .string(installation.service.rawValue),
            "token_type": .string(installation.environment.rawValue),
            "device_model": string(installation.deviceModel),
            "os_version": string(installation.osVersion),
            "app_version": string(installation.appVersion),
            "app_bundle_id": string(installation.bundleID),
            "is_active": .bool(installation.valid),
            "failure_count": .number(JSONNumber(installation.failureCount)),
            "last_failure_at": timestamp(installation.lastFailureAt),
            "last_used_at": timestamp(installation.lastDeliveredAt),
            "created_at": timestamp(installation.createdAt),
            "updated_at": timestamp(installation.updatedAt),
        ])
    }

    package static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// A date as the document writes them: UTC, to the second, `2025-12-25T10:30:00Z`.
    package static func timestamp(_ date: Date?) -> JSONValue {
        date.map { .string(Date.ISO8601FormatStyle().format($0)) } ?? .null
    }
}
