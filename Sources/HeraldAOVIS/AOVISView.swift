import Foundation
import HeraldAPI
import HeraldCore

/// The JSON of the AOVIS dialect's records, in AOVIS's camelCase (its `CloudEvent` columns:
/// `eventId`, `classifyEventType`, `classifySummaryShort`, `pushSent`, `pushSentAt`).
package enum AOVISView {
    package static func json(_ device: SourceDevice, owners: [Ownership]? = nil) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(device.id),
            "alias": InstallationView.string(device.alias),
            "name": InstallationView.string(device.name),
            "createdAt": InstallationView.timestamp(device.createdAt),
            "updatedAt": InstallationView.timestamp(device.updatedAt),
        ]
        if let owners { object["owners"] = .array(owners.map(json)) }
        return .object(object)
    }

    package static func json(_ ownership: Ownership) -> JSONValue {
        .object([
            "deviceId": .string(ownership.deviceID),
            "userId": .string(ownership.userID),
            "status": .string(ownership.status.rawValue),
            "createdAt": InstallationView.timestamp(ownership.createdAt),
            "updatedAt": InstallationView.timestamp(ownership.updatedAt),
        ])
    }

    /// An event; `id` is the CloudEvent id (Herald's when the producer sent none), `heraldId` Herald's.
    package static func json(_ event: SourceEvent, device: SourceDevice?) -> JSONValue {
        .object([
            "id": .string(event.publicID),
            "heraldId": .string(event.id),
            "eventId": .string(event.externalID),
            "deviceId": .string(event.sourceDeviceID),
            "deviceAlias": InstallationView.string(device?.alias),
            "status": .string(event.status),
            "classifyEventType": .string(event.type),
            "classifySummaryShort": .string(event.summary),
            "thumbnailS3Key": InstallationView.string(event.thumbnail),
            "occurredAt": InstallationView.timestamp(event.occurredAt),
            "owners": .array(event.owners.map(JSONValue.string)),
            "notificationId": InstallationView.string(event.notificationID),
            "pushSent": .bool(event.pushSent),
            "pushSentAt": InstallationView.timestamp(event.pushSentAt),
            "createdAt": InstallationView.timestamp(event.createdAt),
        ])
    }
}
