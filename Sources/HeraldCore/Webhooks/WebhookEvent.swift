import Crypto
import Foundation

/// One fact told to an app's backend: the body of a webhook request, `{"id", "type", "timestamp",
/// "version", "data"}` (Standard Webhooks' payload shape, with the event's id and the contract's
/// version beside it). Built here, once, for both stores: each writes the events of a fact in the
/// transaction that commits the fact (docs/webhooks.md has every type's `data`).
public struct WebhookEvent: Sendable, Equatable {
    /// The contract's version, in every body: a change that is not an addition makes a new one.
    public static let version = 1

    /// Unique: the receivers' idempotency key (`webhook-id`), `evt_` and a time-ordered id.
    public var id: String
    public var appID: String
    public var type: WebhookEventType
    public var occurredAt: Date
    public var data: [String: JSONValue]

    /// Creates an event.
    public init(id: String? = nil, appID: String, type: WebhookEventType, occurredAt: Date, data: [String: JSONValue]) {
        self.id = id ?? "evt_" + Identifier.make(now: occurredAt).replacingOccurrences(of: "-", with: "")
        self.appID = appID
        self.type = type
        self.occurredAt = occurredAt
        self.data = data
    }

    /// The request body.
    public var body: [UInt8] {
        JSONValue.object([
            "id": .string(id), "type": .string(type.rawValue), "timestamp": .string(Self.timestamp(occurredAt)),
            "version": .number(JSONNumber(Self.version)), "data": .object(data),
        ]).serialized()
    }

    /// RFC 3339 with milliseconds, in UTC.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// What a backend keys an installation on, read by the store in the fact's transaction.
    public struct Installation: Sendable, Equatable {
        public var id: String
        public var userID: String?
        /// The client's own device id (ArgusAI's and AOVIS's `device_id`).
        public var deviceID: String?
        public var platform: Platform
        public var service: PushService
        /// The SNS endpoint that stands for it (the SNS API dialect's, or Herald's SNS route's).
        public var snsEndpointARN: String?
        /// The hex SHA-256 of the token as registered: a backend finds the token in its own
        /// records by hashing them, and the event never carries the token.
        public var tokenSHA256: String

        /// Creates the facts of an installation; `token` is hashed, never kept.
        public init(
            id: String, userID: String?, deviceID: String?, platform: Platform, service: PushService,
            snsEndpointARN: String?, token: String
        ) {
            self.id = id
            self.userID = userID
            self.deviceID = deviceID
            self.platform = platform
            self.service = service
            self.snsEndpointARN = snsEndpointARN
            self.tokenSHA256 = SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
        }

        var json: [String: JSONValue] {
            var data: [String: JSONValue] = [
                "installation_id": .string(id), "platform": .string(platform.rawValue),
                "service": .string(service.rawValue), "token_sha256": .string(tokenSHA256),
            ]
            data["user_id"] = userID.map(JSONValue.string) ?? .null
            data["device_id"] = deviceID.map(JSONValue.string) ?? .null
            if let snsEndpointARN { data["sns_endpoint_arn"] = .string(snsEndpointARN) }
            return data
        }
    }

    /// A notification's final event: `notification.completed` (`done`, `failed`), `.expired` or
    /// `.canceled`, with the counts `GET /v1/notifications/{id}` shows; nil for a status that is not final.
    public static func finished(
        appID: String, notificationID: String, status: NotificationStatus, counts: NotificationCounts,
        createdAt: Date, completedAt: Date
    ) -> WebhookEvent? {
        let type: WebhookEventType
        switch status {
        case .done, .failed: type = .notificationCompleted
        case .expired: type = .notificationExpired
        case .canceled: type = .notificationCanceled
        default: return nil
        }
        return WebhookEvent(
            appID: appID, type: type, occurredAt: completedAt,
            data: [
                "app_id": .string(appID), "notification_id": .string(notificationID),
                "status": .string(status.rawValue),
                "counts": counts.json, "created_at": .string(timestamp(createdAt)),
                "completed_at": .string(timestamp(completedAt)),
            ])
    }

    /// `delivery.failed`: a ledger entry that failed (`failed`, `invalid`) or will be tried again (`retrying`).
    public static func deliveryFailed(
        appID: String, record: DeliveryRecord, installation: Installation?, nextAttemptAt: Date?
    ) -> WebhookEvent? {
        guard [.failed, .invalid, .retrying].contains(record.outcome) else { return nil }
        var data = installation?.json ?? ["installation_id": .null, "service": .string(record.service.rawValue)]
        data["app_id"] = .string(appID)
        data["notification_id"] = .string(record.notificationID)
        data["outcome"] = .string(record.outcome.rawValue)
        data["reason"] = record.reason.map(JSONValue.string) ?? .null
        data["attempts"] = .number(JSONNumber(record.attempts))
        data["will_retry"] = .bool(record.outcome == .retrying)
        data["next_attempt_at"] = nextAttemptAt.map { .string(timestamp($0)) } ?? .null
        return WebhookEvent(appID: appID, type: .deliveryFailed, occurredAt: record.at, data: data)
    }

    /// `installation.invalidated`: the provider called the token dead (or rejected it, where the app's rule invalidates).
    public static func invalidated(
        appID: String, installation: Installation, reason: String, notificationID: String?, at: Date
    ) -> WebhookEvent {
        var data = installation.json
        data["app_id"] = .string(appID)
        data["reason"] = .string(reason)
        data["notification_id"] = notificationID.map(JSONValue.string) ?? .null
        return WebhookEvent(appID: appID, type: .installationInvalidated, occurredAt: at, data: data)
    }

    /// `notification.opened`: an installation reported opening a notification, the first time.
    public static func opened(
        appID: String, notificationID: String, installation: Installation?, installationID: String, at: Date
    ) -> WebhookEvent {
        var data = installation?.json ?? ["installation_id": .string(installationID)]
        data["app_id"] = .string(appID)
        data["notification_id"] = .string(notificationID)
        data["opened_at"] = .string(timestamp(at))
        return WebhookEvent(appID: appID, type: .notificationOpened, occurredAt: at, data: data)
    }

    /// `installation.removed`: clean-up deleted an installation, by the rule `reason` names.
    public static func removed(appID: String, installation: Installation, reason: String, at: Date) -> WebhookEvent {
        var data = installation.json
        data["app_id"] = .string(appID)
        data["reason"] = .string(reason)
        return WebhookEvent(appID: appID, type: .installationRemoved, occurredAt: at, data: data)
    }
}
