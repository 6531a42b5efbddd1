import Foundation
import HeraldAPI
import HeraldCore

/// The `_Installation` class over Herald's installations: LeanCloud's fields and operations read
/// into a registration, and an installation written back in LeanCloud's shape.
///
/// `deviceType` `ios` with `deviceToken` is an APNs installation; `android` with `registrationId`
/// and `vendor: "fcm"` an FCM one; `android` with only `installationId` a `service: direct`
/// installation (Herald's direct WebSocket channel; LeanCloud's own Android SDK kept a socket to
/// its push server). `installationId` is the installation's device id; `timeZone`, `badge`,
/// `channels`, `apnsTopic` (the bundle id) and `appVersion` are columns; every other field is an
/// attribute, returned as saved.
package enum LeanCloudInstallation {
    package static let className = "_Installation"
    /// Fields Herald keeps in its own columns, or computes.
    package static let builtIn: Set<String> = [
        "objectId", "createdAt", "updatedAt", "deviceType", "deviceToken", "installationId", "registrationId",
        "vendor", "badge", "timeZone", "channels", "apnsTopic", "appVersion", "valid", "ACL",
    ]

    /// One save: the fields given (operations applied to `existing`) as a registration.
    package struct Save {
        package var registration: InstallationRegistration
        /// `valid` as written (master key only).
        package var valid: Bool?
    }

    /// Reads a create or update body over `existing` (nil: a new installation).
    /// - Throws: `LeanCloudFailure` for a missing or unsupported device type, a bad token, a field
    ///   of the wrong type or an unknown operation.
    package static func save(_ body: [String: JSONValue], over existing: Installation?) throws(LeanCloudFailure) -> Save
    {
        let deviceType = try string(body, "deviceType") ?? existing.map(deviceType(of:))
        guard let deviceType else { throw .invalidDeviceType("deviceType is required.") }
        let installationID = try string(body, "installationId") ?? existing?.deviceID
        var platform: Platform
        var service: PushService
        var token: String
        switch deviceType {
        case "ios":
            platform = existing?.platform.isApple == true ? existing!.platform : .ios
            service = .apns
            guard let deviceToken = try string(body, "deviceToken") ?? existingToken(existing, .apns) else {
                throw .invalidDeviceToken("An ios installation needs a deviceToken.")
            }
            token = deviceToken.lowercased()
        case "android":
            platform = .android
            let vendor = try string(body, "vendor")
            if let registrationID = try string(body, "registrationId") {
                guard vendor == nil || vendor == "fcm" else {
                    throw .invalidType("Only the 'fcm' vendor is supported; '\(vendor!)' is not.")
                }
                service = .fcm
                token = registrationID
            } else if let stored = existingToken(existing, .fcm) {
                service = .fcm
                token = stored
            } else {
                guard let installationID else {
                    throw .invalidDeviceType("An android installation needs an installationId or a registrationId.")
                }
                service = .direct
                token = installationID
            }
        case "wp", "windows", "winphone":
            throw .invalidDeviceType(
                "deviceType '\(deviceType)' is not supported: Microsoft retired the push service (MPNS) it used.")
        default:
            throw .invalidDeviceType("Unknown deviceType '\(deviceType)': use 'ios' or 'android'.")
        }
        if let existing, existing.service == .direct, service == .direct { platform = existing.platform }
        do throws(HeraldError) {
            try InstallationRules.validateDeviceToken(token, service: service, platform: platform)
        } catch {
            if service == .apns { throw .invalidDeviceToken(error.message) }
            throw .invalidType(error.message)
        }
        var profile = InstallationProfile(deviceID: installationID)
        profile.channels = try channels(body["channels"], current: existing?.channels ?? [])
        profile.badge = try badge(body["badge"], current: existing?.badge ?? 0)
        if let zone = try string(body, "timeZone") {
            do throws(HeraldError) {
                try InstallationRules.validateTimeZone(zone)
            } catch { throw .invalidType(error.message) }
            profile.timezone = zone
        }
        profile.bundleID = try string(body, "apnsTopic")
        profile.appVersion = try string(body, "appVersion")
        profile.attributes = try attributes(body, current: existing?.attributes ?? [:])
        var save = Save(
            registration: InstallationRegistration(
                platform: platform, service: service, environment: existing?.environment ?? .production,
                token: .device(token), profile: profile))
        switch body["valid"] {
        case nil: break
        case .bool(let valid)?: save.valid = valid
        default: throw .invalidType("valid must be a boolean.")
        }
        return save
    }

    /// LeanCloud's `deviceType` of an installation.
    package static func deviceType(of installation: Installation) -> String {
        installation.platform.isApple ? "ios" : "android"
    }

    private static func existingToken(_ installation: Installation?, _ service: PushService) -> String? {
        guard let installation, installation.service == service, case .device(let token) = installation.token
        else { return nil }
        return token
    }

    /// A string field; `{"__op": "Delete"}` or null reads as absent.
    package static func string(_ body: [String: JSONValue], _ key: String) throws(LeanCloudFailure) -> String? {
        switch body[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case .object(let op)? where op["__op"] == .string("Delete"): return nil
        default: throw .invalidType("\(key) must be a string.")
        }
    }

    /// `channels`: an array, or `AddUnique` / `Add` / `Remove` / `Delete` over the current ones.
    package static func channels(_ value: JSONValue?, current: [String]) throws(LeanCloudFailure) -> [String]? {
        guard let value else { return nil }
        func names(_ value: JSONValue?) throws(LeanCloudFailure) -> [String] {
            guard case .array(let items)? = value else { throw .invalidType("channels must be an array of strings.") }
            var names: [String] = []
            for item in items {
                guard case .string(let name) = item else { throw .invalidType("channels must be an array of strings.") }
                names.append(name)
            }
            return names
        }
        var result: [String]
        switch value {
        case .null: result = []
        case .array: result = try names(value)
        case .object(let op):
            switch op["__op"] {
            case .string("AddUnique")?, .string("Add")?:
                result = current
                for name in try names(op["objects"]) where !result.contains(name) { result.append(name) }
            case .string("Remove")?:
                let removed = try names(op["objects"])
                result = current.filter { !removed.contains($0) }
            case .string("Delete")?: result = []
            default: throw .invalidType("Unsupported operation on channels.")
            }
        default: throw .invalidType("channels must be an array of strings.")
        }
        do throws(HeraldError) {
            return try InstallationRules.normalizeChannels(result)
        } catch { throw LeanCloudFailure.invalidChannel(error.message) }
    }

    /// `badge`: a number, or `Increment` (by `amount`) / `Delete` over the current one.
    package static func badge(_ value: JSONValue?, current: Int) throws(LeanCloudFailure) -> Int? {
        let result: Int
        switch value {
        case nil: return nil
        case .null?: result = 0
        case .number(let number)?:
            guard let integer = number.integerValue else { throw .invalidType("badge must be an integer.") }
            result = Int(integer)
        case .object(let op)? where op["__op"] == .string("Increment"):
            var amount = 1
            if let given = op["amount"] {
                guard case .number(let number) = given, let integer = number.integerValue else {
                    throw .invalidType("Increment's amount must be an integer.")
                }
                amount = Int(integer)
            }
            result = current + amount
        case .object(let op)? where op["__op"] == .string("Delete"): result = 0
        default: throw .invalidType("badge must be an integer.")
        }
        guard (0...Int(Int32.max)).contains(result) else { throw .invalidType("badge must be 0 to 2147483647.") }
        return result
    }

    /// The custom fields over the current attributes: set, `Delete`d, or `Add`/`AddUnique`/`Remove`
    /// on arrays, `Increment` on numbers.
    package static func attributes(
        _ body: [String: JSONValue], current: [String: JSONValue]
    ) throws(LeanCloudFailure) -> [String: JSONValue] {
        var attributes = current
        for (key, value) in body where !builtIn.contains(key) {
            guard QueryField.isValidKey(key), !key.hasPrefix("_") else {
                throw LeanCloudFailure.invalidKeyName(key)
            }
            guard case .object(let op) = value, case .string(let name)? = op["__op"] else {
                attributes[key] = value
                continue
            }
            switch name {
            case "Delete": attributes[key] = nil
            case "Increment":
                guard case .number(let amount)? = op["amount"] ?? .number(JSONNumber(1)),
                    case let base = attributes[key] ?? .number(JSONNumber(0)), case .number(let number) = base,
                    let sum = number.integerValue.flatMap({ a in amount.integerValue.map { a + $0 } })
                else { throw .invalidType("Increment applies to integers.") }
                attributes[key] = .number(JSONNumber(sum))
            case "Add", "AddUnique", "Remove":
                guard case .array(let objects)? = op["objects"] else { throw .invalidType("\(name) needs objects.") }
                var items: [JSONValue] = []
                switch attributes[key] {
                case .array(let stored)?: items = stored
                case nil, .null?: break
                default: throw .invalidType("\(key) is not an array.")
                }
                switch name {
                case "Add": items += objects
                case "AddUnique": for item in objects where !items.contains(item) { items.append(item) }
                default: items.removeAll { objects.contains($0) }
                }
                attributes[key] = .array(items)
            default: throw .invalidType("Unsupported operation '\(name)' on \(key).")
            }
        }
        do throws(HeraldError) {
            try InstallationRules.validateAttributes(attributes)
        } catch { throw .objectTooLarge(error.message) }
        return attributes
    }

    /// The installation as LeanCloud returns it; `keys` (when given) limits the fields.
    package static func json(_ installation: Installation, keys: Set<String>? = nil) -> JSONValue {
        var object = installation.attributes
        object["objectId"] = .string(installation.id)
        object["deviceType"] = .string(deviceType(of: installation))
        switch (installation.service, installation.token) {
        case (.apns, .device(let token)): object["deviceToken"] = .string(token)
        case (.fcm, .device(let token)):
            object["registrationId"] = .string(token)
            object["vendor"] = .string("fcm")
        default: break
        }
        if let deviceID = installation.deviceID { object["installationId"] = .string(deviceID) }
        object["badge"] = .number(JSONNumber(installation.badge))
        object["channels"] = .array(installation.channels.map(JSONValue.string))
        object["timeZone"] = installation.timezone.map(JSONValue.string)
        object["apnsTopic"] = installation.bundleID.map(JSONValue.string)
        object["appVersion"] = installation.appVersion.map(JSONValue.string)
        object["valid"] = .bool(installation.valid)
        object["createdAt"] = .string(LeanCloudDate.string(installation.createdAt))
        object["updatedAt"] = .string(LeanCloudDate.string(installation.updatedAt))
        if let keys {
            let always: Set<String> = ["objectId", "createdAt", "updatedAt"]
            object = object.filter { keys.contains($0.key) || always.contains($0.key) }
        }
        return .object(object)
    }
}

/// LeanCloud's timestamps: ISO 8601, UTC, milliseconds, `Z` (`2013-06-29T11:33:53.323Z`).
package enum LeanCloudDate {
    package static func string(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// An ISO 8601 instant with a time zone, with or without fractional seconds.
    package static func parse(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
