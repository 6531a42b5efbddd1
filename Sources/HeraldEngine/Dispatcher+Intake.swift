import Foundation
import HeraldCore
import Logging

/// The result of a send request.
public enum SendResult: Sendable {
    /// Stored with its job; `created` is false when an idempotency key returned an earlier one.
    case accepted(PushNotification, created: Bool)
    /// A dry run: the audience by service, nothing stored or sent.
    case dryRun(audience: [PushService: Int])
}

extension Dispatcher {
    static let sendFields: Set<String> = [
        "target", "payload", "overrides", "source", "category", "push_time", "expiration_time", "expiration_interval",
        "respect_preferences", "dry_run", "idempotency_key",
    ]

    /// The furthest ahead a notification may be scheduled.
    static let maxScheduleAhead: TimeInterval = 366 * 86_400

    /// Validates a send request (`POST /v1/notifications` body) and stores it with its job; a dry
    /// run resolves the audience and renders the payload without storing anything.
    /// - Throws: `HeraldError` naming the field at fault; nothing is stored then.
    public func submit(_ body: JSONValue, appID: String, idempotencyKey headerKey: String?) async throws -> SendResult {
        let reader = try JSONObjectReader(body)
        try reader.rejectUnknown(allowed: Self.sendFields)
        guard let targetValue = reader.members["target"], targetValue != .null else {
            throw HeraldError.missingField("target")
        }
        let target = try NotificationTarget(parsing: targetValue)
        if case .query(let query) = target.audience { _ = try InstallationQuery(parsing: query, field: "target.where") }
        guard let payloadValue = reader.members["payload"], payloadValue != .null else {
            throw HeraldError.missingField("payload")
        }
        var payload = try NotificationPayload(parsing: payloadValue)
        if let overrides = try reader.object("overrides") {
            guard payload.overrides.isEmpty else {
                throw HeraldError.invalidValue(
                    "overrides", code: "duplicate_overrides",
                    "Give overrides at the top level or in the payload, not both.")
            }
            let wrapped = try NotificationPayload(parsing: .object(["overrides": .object(overrides.members)]))
            payload.overrides = wrapped.overrides
        }
        let source = try reader.string("source", maxLength: 256)
        let category = try reader.string("category", maxLength: 256)
        let now = self.now()

        var pushTime: PushTime?
        var notBefore: Date?
        if let text = try reader.string("push_time") {
            let time = try PushTime(parsing: text, field: "push_time")
            pushTime = time
            let earliest: Date
            let latest: Date
            switch time {
            case .instant(let date):
                earliest = date
                latest = date
            default:
                earliest = time.earliestInstant
                latest = time.latestInstant
            }
            guard latest.timeIntervalSince(now) <= Self.maxScheduleAhead else {
                throw HeraldError.invalidValue(
                    "push_time", code: "invalid_push_time", "push_time is more than a year ahead.")
            }
            if earliest > now { notBefore = earliest }
        }

        var expiresAt: Date?
        if reader.contains("expiration_time"), reader.contains("expiration_interval") {
            throw HeraldError.invalidValue(
                "expiration_interval", code: "conflicting_expiration",
                "Give expiration_time or expiration_interval, not both.")
        }
        if let text = try reader.string("expiration_time") {
            guard case .instant(let date) = try PushTime(parsing: text, field: "expiration_time") else {
                throw HeraldError.invalidValue(
                    "expiration_time", code: "invalid_expiration", "expiration_time needs a time zone offset.")
            }
            expiresAt = date
        }
        if let seconds = try reader.integer("expiration_interval", in: 1...31_536_000) {
            expiresAt = (notBefore ?? now).addingTimeInterval(TimeInterval(seconds))
        }
        if let expiresAt {
            guard expiresAt > now else {
                throw HeraldError.invalidValue(
                    reader.contains("expiration_time") ? "expiration_time" : "expiration_interval",
                    code: "invalid_expiration", "The notification would expire before it is sent.")
            }
            if expiresAt <= (notBefore ?? now) {
                throw HeraldError.invalidValue(
                    "expiration_time", code: "invalid_expiration", "The notification expires before its push time.")
            }
        }

        var key = try reader.string("idempotency_key", maxLength: 255)
        if let headerKey {
            guard !headerKey.isEmpty, headerKey.count <= 255 else {
                throw HeraldError.invalidValue(
                    "Idempotency-Key", code: "invalid_idempotency_key", "Idempotency-Key is 1 to 255 characters.")
            }
            if let key, key != headerKey {
                throw HeraldError.invalidValue(
                    "idempotency_key", code: "conflicting_idempotency_key",
                    "The Idempotency-Key header and the body's idempotency_key differ.")
            }
            key = headerKey
        }

        var notification = PushNotification(
            id: Identifier.make(now: now), appID: appID, target: target, payload: payload, source: source,
            category: category, pushTime: pushTime?.rfc3339, notBefore: notBefore, expiresAt: expiresAt,
            respectPreferences: try reader.bool("respect_preferences") ?? true, idempotencyKey: key,
            status: notBefore == nil ? .queued : .scheduled, createdAt: now)
        try validateSizes(notification, now: now)

        if try reader.bool("dry_run") == true {
            if case .tokens(let tokens) = target.audience {
                var audience: [PushService: Int] = [:]
                for token in tokens
                where target.services?.contains(token.service) ?? true
                    && target.platforms?.contains(token.platform) ?? true
                {
                    audience[token.service, default: 0] += 1
                }
                return .dryRun(audience: audience)
            }
            return .dryRun(audience: try await store.count(target, appID: appID))
        }
        let stored = try await store.insertNotification(
            notification, runAt: notBefore ?? now, idempotencyWindow: configuration.idempotencyWindow)
        notification = stored.notification
        if stored.created {
            logger.info(
                "notification accepted",
                metadata: ["herald.notification": "\(notification.id)", "herald.app": "\(appID)"])
            wake()
        }
        return .accepted(notification, created: stored.created)
    }

    /// Every provider the target can reach must take the rendered payload.
    private func validateSizes(_ notification: PushNotification, now: Date) throws(HeraldError) {
        let services: Set<PushService> =
            if case .tokens(let tokens) = notification.target.audience {
                Set(tokens.map(\.service))
            } else {
                notification.target.services ?? Set(PushService.allCases)
            }
        try transports(of: notification.appID).validate(notification, services: services, now: now)
    }
}
