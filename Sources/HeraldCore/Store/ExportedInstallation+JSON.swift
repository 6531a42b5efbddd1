import Foundation

// The line `herald export` writes and `herald import` reads: one installation as a store keeps it.
extension ExportedInstallation {
    /// The value of the `format` member that marks a line as an export record (and not a
    /// registration body).
    public static let format = "herald.installation.v1"

    /// The members an export record may carry.
    public static let fields: Set<String> = [
        "format", "id", "app_id", "user_id", "device_id", "platform", "service", "environment", "token", "channels",
        "locale", "timezone", "badge", "app_version", "os_version", "device_model", "bundle_id", "attributes",
        "sns_endpoint_arn", "valid", "failure_count", "last_failure_at", "last_failure_reason", "last_delivered_at",
        "last_seen_at", "created_at", "updated_at", "invalidated_at", "delete_when_invalid", "preferences",
        "push_to_start_tokens",
    ]

    /// Whether a parsed line is an export record: an object whose `format` member is present.
    /// (A registration body never has one; an unknown format is then refused by ``init(json:)``.)
    public static func isRecord(_ value: JSONValue) -> Bool {
        value.objectValue?["format"] != nil
    }

    /// The record as a JSON object with every member present (null where absent): the
    /// installation's fields in snake_case as the API names them, dates as RFC 3339 in UTC with the
    /// shortest fraction that reads back as the same `Date`, the token as
    /// `{"index": base64url, "sealed": base64url}` (never opened), `preferences` (or null) and the
    /// Live Activity `push_to_start_tokens` (`{attributes type: sealed base64url}`, may be empty).
    public var json: JSONValue {
        let installation = installation
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func date(_ value: Date?) -> JSONValue { value.map { .string(PushTime.instant($0).rfc3339) } ?? .null }
        return .object([
            "format": .string(Self.format),
            "id": .string(installation.id),
            "app_id": .string(installation.appID),
            "user_id": text(installation.userID),
            "device_id": text(installation.deviceID),
            "platform": .string(installation.platform.rawValue),
            "service": .string(installation.service.rawValue),
            "environment": .string(installation.environment.rawValue),
            "token": .object([
                "index": .string(Base64URL.encode(sealedToken.index)),
                "sealed": .string(Base64URL.encode(sealedToken.sealed)),
            ]),
            "channels": .array(installation.channels.map(JSONValue.string)),
            "locale": text(installation.locale),
            "timezone": text(installation.timezone),
            "badge": .number(JSONNumber(installation.badge)),
            "app_version": text(installation.appVersion),
            "os_version": text(installation.osVersion),
            "device_model": text(installation.deviceModel),
            "bundle_id": text(installation.bundleID),
            "attributes": .object(installation.attributes),
            "sns_endpoint_arn": text(installation.snsEndpointARN),
            "valid": .bool(installation.valid),
            "failure_count": .number(JSONNumber(installation.failureCount)),
            "last_failure_at": date(installation.lastFailureAt),
            "last_failure_reason": text(installation.lastFailureReason),
            "last_delivered_at": date(installation.lastDeliveredAt),
            "last_seen_at": date(installation.lastSeenAt),
            "created_at": date(installation.createdAt),
            "updated_at": date(installation.updatedAt),
            "invalidated_at": date(installation.invalidatedAt),
            "delete_when_invalid": .bool(installation.deleteWhenInvalid),
            "preferences": preferences?.json ?? .null,
            "push_to_start_tokens": .object(pushToStartTokens.mapValues { .string(Base64URL.encode($0)) }),
        ])
    }

    /// Reads a record written by ``json``. Members that may be null may also be absent; every other
    /// member is required, and no member outside ``fields`` is allowed. The installation's `token`
    /// is `.device("")`: the sealed token is authoritative.
    /// - Throws: `HeraldError` naming the member at fault: `unknown_field`, `missing_field`,
    ///   `invalid_type`, `invalid_value` (an unknown `format`, enum value, or a platform the service
    ///   does not deliver to; a negative count), `invalid_timestamp` (not RFC 3339 with an offset),
    ///   `invalid_token` (not base64url), or what ``Preferences/init(parsing:field:)`` throws.
    public init(json: JSONValue) throws(HeraldError) {
        let body = try JSONObjectReader(json)
        try body.rejectUnknown(allowed: Self.fields)
        let format = try body.requiredString("format")
        guard format == Self.format else {
            throw .invalidValue(
                "format", "Field 'format' must be \(Self.format) (this Herald reads no other export format).")
        }
        let platform = try Self.required(body, "platform", as: Platform.self)
        let service = try Self.required(body, "service", as: PushService.self)
        guard service.platforms.contains(platform) else {
            throw .invalidValue(
                "platform", "Field 'platform' must be one of the platforms \(service.rawValue) delivers to.")
        }
        guard let token = try body.object("token") else { throw .missingField("token") }
        try token.rejectUnknown(allowed: ["index", "sealed"])
        sealedToken = SealedToken(index: try Self.bytes(token, "index"), sealed: try Self.bytes(token, "sealed"))
        installation = Installation(
            id: try Self.nonEmpty(body, "id"), appID: try Self.nonEmpty(body, "app_id"),
            userID: try body.string("user_id"), deviceID: try body.string("device_id"), platform: platform,
            service: service, environment: try Self.required(body, "environment", as: PushEnvironment.self),
            token: .device(""), channels: try Self.required(body, "channels", body.strings),
            locale: try body.string("locale"), timezone: try body.string("timezone"),
            badge: try Self.required(body, "badge") { (key) throws(HeraldError) in
                try body.integer(key, in: Int(Int32.min)...Int(Int32.max))
            },
            appVersion: try body.string("app_version"), osVersion: try body.string("os_version"),
            deviceModel: try body.string("device_model"), bundleID: try body.string("bundle_id"),
            attributes: try Self.required(body, "attributes") { (key) throws(HeraldError) in try body.object(key) }
                .members,
            snsEndpointARN: try body.string("sns_endpoint_arn"), valid: try Self.required(body, "valid", body.bool),
            failureCount: try Self.required(body, "failure_count") { (key) throws(HeraldError) in
                try body.integer(key, in: 0...Int(Int32.max))
            },
            lastFailureAt: try Self.date(body, "last_failure_at"),
            lastFailureReason: try body.string("last_failure_reason"),
            lastDeliveredAt: try Self.date(body, "last_delivered_at"), lastSeenAt: try Self.date(body, "last_seen_at"),
            createdAt: try Self.required(body, "created_at", { (key) throws(HeraldError) in try Self.date(body, key) }),
            updatedAt: try Self.required(body, "updated_at", { (key) throws(HeraldError) in try Self.date(body, key) }),
            invalidatedAt: try Self.date(body, "invalidated_at"),
            deleteWhenInvalid: try Self.required(body, "delete_when_invalid", body.bool))
        preferences = try body.members["preferences"].flatMap { (value) throws(HeraldError) -> Preferences? in
            value == .null ? nil : try Preferences(parsing: value, field: "preferences")
        }
        pushToStartTokens = [:]
        if let tokens = try body.object("push_to_start_tokens") {
            for type in tokens.members.keys { pushToStartTokens[type] = try Self.bytes(tokens, type) }
        }
    }

    /// A member that must be present and not null, read by `read`.
    private static func required<Value>(
        _ body: JSONObjectReader, _ key: String, _ read: (String) throws(HeraldError) -> Value?
    ) throws(HeraldError) -> Value {
        guard let value = try read(key) else { throw .missingField(body.name(key)) }
        return value
    }

    private static func required<Value: RawRepresentable & CaseIterable>(
        _ body: JSONObjectReader, _ key: String, as type: Value.Type
    ) throws(HeraldError) -> Value where Value.RawValue == String {
        try required(body, key) { (key) throws(HeraldError) in try body.enumeration(key, as: type) }
    }

    private static func nonEmpty(_ body: JSONObjectReader, _ key: String) throws(HeraldError) -> String {
        let value = try body.requiredString(key)
        guard !value.isEmpty else {
            throw .invalidValue(body.name(key), code: "invalid_length", "Field '\(body.name(key))' must not be empty.")
        }
        return value
    }

    /// An RFC 3339 instant (with an offset); nil when absent or null.
    private static func date(_ body: JSONObjectReader, _ key: String) throws(HeraldError) -> Date? {
        guard let text = try body.string(key) else { return nil }
        guard case .instant(let date)? = PushTime.parse(text) else {
            throw .invalidValue(
                body.name(key), code: "invalid_timestamp",
                "Field '\(body.name(key))' must be an RFC 3339 date-time with an offset, like 2026-12-24T09:00:00.5Z.")
        }
        return date
    }

    /// Non-empty base64url bytes.
    private static func bytes(_ object: JSONObjectReader, _ key: String) throws(HeraldError) -> [UInt8] {
        guard let bytes = Base64URL.decode(try object.requiredString(key)) else {
            throw .invalidValue(
                object.name(key), code: "invalid_token", "Field '\(object.name(key))' must be base64url bytes.")
        }
        return bytes
    }
}
