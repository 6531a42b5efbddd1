import Foundation
import HeraldAPI
import HeraldCore

/// `POST /1.1/push` read into the engine's typed send request.
///
/// `data` becomes the unified payload: `alert` (a string, or an APNs alert object whose
/// localisation keys go to APNs as given) is the body, `title` the title, `badge` a number or
/// `"Increment"` (the engine's per-device increment), `sound`, `content-available`,
/// `mutable-content`, `category`; `action` and every other key travel as custom data. Without
/// `alert` and `title` the push is data-only (an Android intent, LeanCloud's silent push).
/// Each platform gets the fields the guide gives it: `title` is Android's (an iOS device shows the
/// `alert` text alone), `badge` and `sound` are iOS's (not in Android's notification); the
/// payload's provider overrides say so, and `data.ios` / `data.android` replace them.
/// `channels` and `where` (LeanCloud's names, see ``LeanCloudQuery``) select the installations,
/// `prod` (`dev` or `prod`) sends every APNs recipient through the sandbox or production, `push_time`,
/// `expiration_time` / `expiration_interval` and `notification_id` (idempotency) are the engine's.
package enum LeanCloudPush {
    /// The `data` keys with a meaning of their own; the rest is custom data.
    package static let reserved: Set<String> = [
        "alert", "title", "badge", "sound", "content-available", "mutable-content", "category", "ios", "android",
    ]

    /// The push's `where` and its `cql` together: CQL becomes the same where query (LeanCloud:
    /// "CQL is converted to where conditions"), ANDed with a `where` when both are given.
    /// - Throws: `LeanCloudFailure` 102 for a statement that does not parse or selects from another class.
    package static func selection(_ body: [String: JSONValue]) throws(LeanCloudFailure) -> JSONValue? {
        let whereValue = body["where"].flatMap { $0 == .null ? nil : $0 }
        switch body["cql"] {
        case nil, .null?: return whereValue
        case .string(let text)?:
            let statement: CQLStatement
            do throws(HeraldError) {
                statement = try CQLStatement(parsing: text, field: "cql")
            } catch { throw .invalidQuery(error.message) }
            guard statement.className == "_Installation" else {
                throw .invalidQuery("A push's cql selects from _Installation, not \(statement.className).")
            }
            guard let whereValue else { return statement.whereObject }
            return .object(["$and": .array([whereValue, statement.whereObject])])
        default: throw .invalidType("cql must be a string: select * from _Installation where …")
        }
    }

    /// The send request of a push body.
    /// - Throws: `LeanCloudFailure` naming what is wrong.
    /// - Parameter whereValue: the body's `where`, its token conditions already resolved
    ///   (``LeanCloudQuery/tokensResolved(_:lookup:)``).
    package static func request(
        _ body: [String: JSONValue], where whereValue: JSONValue?, now: Date
    ) throws(LeanCloudFailure) -> SendRequest {
        guard case .object(let data)? = body["data"] else { throw .invalidType("data must be an object.") }
        let payload = try payload(data)
        var conditions: [InstallationQuery] = []
        if let whereValue, whereValue != .null {
            do throws(HeraldError) {
                conditions.append(
                    try AudienceQuery(parsing: whereValue, field: "where", resolver: LeanCloudQuery.resolve).query)
            } catch { throw .invalidQuery(error.message) }
        }
        if let channels = body["channels"], channels != .null {
            guard case .array(let items) = channels, !items.isEmpty else {
                throw .invalidType("channels must be a non-empty array of strings.")
            }
            var names: [QueryValue] = []
            for item in items {
                guard case .string(let name) = item else { throw .invalidType("channels must be strings.") }
                names.append(.string(name))
            }
            conditions.append(.condition(field: .column(.channels), op: .in(names)))
        }
        var apnsEnvironment: PushEnvironment?
        switch body["prod"] {
        case nil, .null?: break
        case .string("dev")?: apnsEnvironment = .sandbox
        case .string("prod")?: apnsEnvironment = .production
        default: throw .invalidType("prod must be 'dev' or 'prod'.")
        }
        let audience: NotificationTarget.Audience
        if conditions.isEmpty {
            audience = .all
        } else {
            do throws(HeraldError) {
                audience = .query(try AudienceQuery(parsing: InstallationQuery.and(conditions).json))
            } catch { throw .invalidQuery(error.message) }
        }
        var request = SendRequest(
            target: NotificationTarget(audience: audience, apnsEnvironment: apnsEnvironment), payload: payload)
        request.source = LeanCloudRoutes.source
        request.dialect = LeanCloudRoutes.settingsKey
        // LeanCloud accepts a push that expired before it could be sent and reports it expired.
        request.acceptsExpired = true
        if let text = try LeanCloudInstallation.string(body, "push_time") {
            do throws(HeraldError) {
                request.pushTime = try PushTime(parsing: text, field: "push_time")
            } catch { throw .invalidType(error.message) }
        }
        if let text = try LeanCloudInstallation.string(body, "expiration_time") {
            guard let date = LeanCloudDate.parse(text) else {
                throw .invalidType("expiration_time must be an ISO 8601 date with a time zone.")
            }
            request.expiration = .at(date)
        }
        switch body["expiration_interval"] {
        case nil, .null?: break
        // Counted from the API call, as the REST guide says ("从推送API调用开始算起"), not from push_time;
        // the guide allows the seconds as a numeric string too.
        case .number(let number)?:
            request.expiration = .at(
                now.addingTimeInterval(TimeInterval(try interval(number.integerValue.map { Int($0) }))))
        case .string(let text)?: request.expiration = .at(now.addingTimeInterval(TimeInterval(try interval(Int(text)))))
        default: throw .invalidType("expiration_interval must be a number of seconds.")
        }
        if let key = try LeanCloudInstallation.string(body, "notification_id") {
            guard (1...SendRequest.maxIdempotencyKeyLength).contains(key.count) else {
                throw .invalidType("notification_id is 1 to \(SendRequest.maxIdempotencyKeyLength) characters.")
            }
            request.idempotencyKey = key
        }
        return request
    }

    private static func interval(_ seconds: Int?) throws(LeanCloudFailure) -> Int {
        guard let seconds, (1...SendRequest.maxExpirationInterval).contains(seconds) else {
            throw .invalidType("expiration_interval must be 1 to \(SendRequest.maxExpirationInterval) seconds.")
        }
        return seconds
    }

    /// The unified payload of `data`.
    package static func payload(_ data: [String: JSONValue]) throws(LeanCloudFailure) -> NotificationPayload {
        var payload = NotificationPayload()
        switch data["alert"] {
        case nil, .null?: break
        case .string(let text)?: payload.body = text
        case .object(let alert)?:
            if case .string(let body)? = alert["body"] { payload.body = body }
            if case .string(let title)? = alert["title"] { payload.title = title }
            if case .string(let subtitle)? = alert["subtitle"] { payload.subtitle = subtitle }
            // Localisation keys (loc-key, loc-args, title-loc-key…) reach APNs as written, and
            // nothing else does: not `data.title`, which is Android's.
            var exact = alert
            for key in ["title", "subtitle", "body"] where exact[key] == nil { exact[key] = .null }
            payload.overrides["apns"] = .object(["aps": .object(["alert": .object(exact)])])
        default: throw .invalidType("alert must be a string or an object.")
        }
        if let title = try LeanCloudInstallation.string(data, "title") { payload.title = title }
        payload.badge = try badge(data["badge"])
        payload.sound = try LeanCloudInstallation.string(data, "sound")
        payload.category = try LeanCloudInstallation.string(data, "category")
        payload.contentAvailable = try flag(data, "content-available")
        payload.mutableContent = try flag(data, "mutable-content")
        payload.data = data.filter { !reserved.contains($0.key) }
        if payload.title != nil, payload.overrides["apns"] == nil {
            payload.overrides["apns"] = iOSWithoutTitle(payload)
        }
        if case .object(let ios)? = data["ios"] {
            try LeanCloudPlatformData.apply(ios: ios, to: &payload)
        } else if let ios = data["ios"], ios != .null {
            throw .invalidType("data.ios must be an object.")
        }
        if case .object(let android)? = data["android"] {
            try LeanCloudPlatformData.apply(android: android, to: &payload)
        } else if let android = data["android"], android != .null {
            throw .invalidType("data.android must be an object.")
        }
        androidWithoutIOSFields(&payload)
        if payload.title == nil, payload.body == nil, payload.data.isEmpty, payload.badge == nil,
            !payload.contentAvailable, payload.overrides.isEmpty
        {
            throw .invalidType("data needs an alert, a title, a badge, content-available or custom keys.")
        }
        return payload
    }

    /// The APNs override that leaves `title` (Android only, as the guide marks it) out of the iOS
    /// rendering: the alert is the `alert` text alone, or, without one, no alert at all (a push with
    /// only `content-available` then goes as the background push it is).
    private static func iOSWithoutTitle(_ payload: NotificationPayload) -> JSONValue {
        guard payload.body == nil else { return .object(["aps": .object(["alert": .object(["title": .null])])]) }
        var apns: [String: JSONValue] = ["aps": .object(["alert": .null])]
        if payload.contentAvailable, payload.sound == nil, payload.badge == nil {
            // Apple: a background push goes with priority 5.
            apns["headers"] = .object(["apns-push-type": .string("background"), "apns-priority": .string("5")])
        }
        return .object(apns)
    }

    /// Leaves `sound` and `badge` (iOS only, as the guide marks them) out of the Android
    /// notification FCM shows: the engine renders them as `android.notification`'s `sound` and
    /// `notification_count`, which this removes. Only when FCM gets a notification at all: the
    /// override would otherwise add an empty one to a data message.
    private static func androidWithoutIOSFields(_ payload: inout NotificationPayload) {
        guard payload.sound != nil || payload.badge != nil else { return }
        var fcm = payload.overrides["fcm"]?.objectValue ?? [:]
        let notifies: Bool =
            switch fcm["notification"] {
            case .null?: false
            case .object?: true
            default: payload.title != nil || payload.body != nil
            }
        guard notifies else { return }
        fcm["android"] = .object(["notification": .object(["sound": .null, "notification_count": .null])])
        payload.overrides["fcm"] = .object(fcm)
    }

    /// `badge`: a number, or `"Increment"` (each device's stored badge plus one).
    package static func badge(_ value: JSONValue?) throws(LeanCloudFailure) -> NotificationPayload.Badge? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)? where text.lowercased() == "increment": return .increment
        case .number(let number)?:
            guard let value = number.integerValue, (0...999_999).contains(value) else {
                throw .invalidType("badge must be 0 to 999999.")
            }
            return .set(Int(value))
        default: throw .invalidType("badge must be a number or \"Increment\".")
        }
    }

    /// `content-available` / `mutable-content`: `1`, `true`, or absent.
    package static func flag(_ data: [String: JSONValue], _ key: String) throws(LeanCloudFailure) -> Bool {
        switch data[key] {
        case nil, .null?: return false
        case .bool(let flag)?: return flag
        case .number(let number)?: return number.integerValue == 1
        default: throw .invalidType("\(key) must be 1 or 0.")
        }
    }
}
