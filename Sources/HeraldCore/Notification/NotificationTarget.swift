/// Who a notification goes to: exactly one audience form, optionally narrowed by platform or service.
public struct NotificationTarget: Sendable, Equatable {
    /// A device token sent without registration (like gorush): the service and environment say where.
    public struct RawToken: Sendable, Equatable {
        public var token: String
        public var service: PushService
        public var environment: PushEnvironment
        public var platform: Platform

        /// Creates a raw token recipient.
        public init(token: String, service: PushService, environment: PushEnvironment, platform: Platform) {
            self.token = token
            self.service = service
            self.environment = environment
            self.platform = platform
        }
    }

    /// The audience.
    public enum Audience: Sendable, Equatable {
        case installationIDs([String])
        case tokens([RawToken])
        case userIDs([String])
        /// Installations subscribed to any of the channels.
        case channels([String])
        /// A LeanCloud/Parse query over installation fields and attributes, parsed once.
        case query(AudienceQuery)
        case all
        /// The installations taking part in a Live Activity (its start's recipients and those that
        /// registered its token): the audience of its updates, never of a send request.
        case liveActivity(String)
        /// A Live Activity broadcast channel's subscribers, reached with one push to its APNs id
        /// (the notification's ``LiveActivityPush/channel``): no installation of Herald's.
        case liveActivityChannel(String)
    }

    public var audience: Audience
    /// Only these platforms, when set.
    public var platforms: Set<Platform>?
    /// Only these services, when set.
    public var services: Set<PushService>?
    /// The APNs environment every APNs recipient is sent in, whatever its installation's (LeanCloud's
    /// `prod`, which picks the certificate per push); nil: each installation's own.
    public var apnsEnvironment: PushEnvironment?

    /// Creates a target.
    public init(
        audience: Audience, platforms: Set<Platform>? = nil, services: Set<PushService>? = nil,
        apnsEnvironment: PushEnvironment? = nil
    ) {
        self.audience = audience
        self.platforms = platforms
        self.services = services
        self.apnsEnvironment = apnsEnvironment
    }

    /// The largest explicit list a target accepts (ids, users, channels, tokens).
    public static let maxListCount = 10_000
    /// Installation ids in a target are at most this many characters.
    public static let maxInstallationIDLength = 64
    /// User ids in a target are at most this many characters.
    public static let maxUserIDLength = 256
    /// Channels in a target are at most this many characters.
    public static let maxChannelLength = 128

    /// Checks an explicit list of a target (ids, users, channels): not empty, at most
    /// ``maxListCount`` entries, each 1 to `maxLength` characters.
    /// - Throws: `HeraldError` naming `field` or the entry at fault.
    public static func validateList(_ items: [String], field: String, maxLength: Int) throws(HeraldError) {
        guard !items.isEmpty else { throw .invalidValue(field, code: "empty_target", "'\(field)' is empty.") }
        guard items.count <= maxListCount else {
            throw .invalidValue(field, code: "target_too_large", "'\(field)' lists more than \(maxListCount) entries.")
        }
        for (index, item) in items.enumerated() where item.isEmpty || item.count > maxLength {
            throw .invalidValue(
                "\(field)[\(index)]", code: "invalid_length", "Entries must be 1 to \(maxLength) characters long.")
        }
    }

    /// Whether a raw token passes the target's platform and service filters.
    public func admits(_ token: RawToken) -> Bool {
        services?.contains(token.service) ?? true && platforms?.contains(token.platform) ?? true
    }

    /// Reads the `target` object of a send request, its `where` query included.
    /// - Throws: `HeraldError` naming the field at fault.
    /// - Parameter stored: Whether the target is one a store kept, which may also be a Live
    ///   Activity's (`live_activity`: Herald's own audience, not the API's).
    public init(parsing value: JSONValue, field: String = "target", stored: Bool = false) throws(HeraldError) {
        let reader = try JSONObjectReader(value, path: field)
        if stored, let activity = try reader.string("live_activity") {
            (audience, platforms, services, apnsEnvironment) = (.liveActivity(activity), nil, nil, nil)
            return
        }
        if stored, let channel = try reader.string("live_activity_channel") {
            let environment = try reader.enumeration("apns_environment", as: PushEnvironment.self)
            (audience, platforms, services, apnsEnvironment) = (.liveActivityChannel(channel), nil, nil, environment)
            return
        }
        let forms = ["installation_ids", "tokens", "user_ids", "channels", "where", "all"]
        try reader.rejectUnknown(allowed: Set(forms + ["platforms", "services", "apns_environment"]))
        let present = forms.filter { reader.members[$0] != nil && reader.members[$0] != .null }
        guard present.count == 1, let form = present.first else {
            throw .invalidValue(
                field, code: "invalid_target",
                "The target needs exactly one of: \(forms.joined(separator: ", ")); it has \(present.count).")
        }
        func list(_ key: String, maxLength: Int) throws(HeraldError) -> [String] {
            let items = try reader.strings(key) ?? []
            try Self.validateList(items, field: reader.name(key), maxLength: maxLength)
            return items
        }
        switch form {
        case "installation_ids": audience = .installationIDs(try list(form, maxLength: Self.maxInstallationIDLength))
        case "user_ids": audience = .userIDs(try list(form, maxLength: Self.maxUserIDLength))
        case "channels": audience = .channels(try list(form, maxLength: Self.maxChannelLength))
        case "where":
            guard case .object = reader.members[form] else {
                throw .invalidType(reader.name(form), expected: "an object")
            }
            audience = .query(
                try AudienceQuery(parsing: reader.members[form] ?? .object([:]), field: reader.name(form)))
        case "all":
            guard try reader.bool("all") == true else {
                throw .invalidValue(reader.name("all"), code: "invalid_target", "'\(reader.name("all"))' must be true.")
            }
            audience = .all
        default:
            audience = .tokens(try Self.rawTokens(reader, key: form))
        }
        platforms = try Self.set("platforms", of: Platform.self, in: reader)
        services = try Self.set("services", of: PushService.self, in: reader)
        apnsEnvironment = try reader.enumeration("apns_environment", as: PushEnvironment.self)
    }

    /// A filter list of enum values, nil when absent.
    private static func set<Value: RawRepresentable & CaseIterable & Hashable>(
        _ key: String, of type: Value.Type, in reader: JSONObjectReader
    ) throws(HeraldError) -> Set<Value>? where Value.RawValue == String {
        guard let names = try reader.strings(key) else { return nil }
        var values = Set<Value>()
        for (index, raw) in names.enumerated() {
            guard let value = Value(rawValue: raw) else {
                throw .invalidValue(
                    "\(reader.name(key))[\(index)]",
                    "Allowed values: \(Value.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            values.insert(value)
        }
        return values
    }

    private static func rawTokens(_ reader: JSONObjectReader, key: String) throws(HeraldError) -> [RawToken] {
        guard case .array(let items)? = reader.members[key] else {
            throw .invalidType(reader.name(key), expected: "an array of token objects")
        }
        guard !items.isEmpty else {
            throw .invalidValue(reader.name(key), code: "empty_target", "'\(reader.name(key))' is empty.")
        }
        guard items.count <= maxListCount else {
            throw .invalidValue(
                reader.name(key), code: "target_too_large", "'\(reader.name(key))' lists more than \(maxListCount).")
        }
        var tokens: [RawToken] = []
        for (index, item) in items.enumerated() {
            let entry = try JSONObjectReader(item, path: "\(reader.name(key))[\(index)]")
            try entry.rejectUnknown(allowed: ["token", "service", "environment", "platform"])
            let service = try entry.enumeration("service", as: PushService.self)
            guard let service else { throw .missingField(entry.name("service")) }
            guard service == .apns || service == .fcm else {
                throw .invalidValue(
                    entry.name("service"), code: "unsupported_service",
                    "Raw tokens can be sent through apns or fcm; register \(service.rawValue) installations instead.")
            }
            let token = try entry.requiredString("token")
            if service == .apns {
                try InstallationRules.validateAPNsToken(token, field: entry.name("token"))
            } else {
                try InstallationRules.validateFCMToken(token, field: entry.name("token"))
            }
            let environment = try entry.enumeration("environment", as: PushEnvironment.self) ?? .production
            let platform = try entry.enumeration("platform", as: Platform.self) ?? (service == .apns ? .ios : .android)
            tokens.append(RawToken(token: token, service: service, environment: environment, platform: platform))
        }
        return tokens
    }

    /// The target as the send API writes it (raw tokens included: store it sealed).
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        switch audience {
        case .installationIDs(let ids): object["installation_ids"] = .array(ids.map(JSONValue.string))
        case .userIDs(let ids): object["user_ids"] = .array(ids.map(JSONValue.string))
        case .channels(let channels): object["channels"] = .array(channels.map(JSONValue.string))
        case .query(let query): object["where"] = query.json
        case .all: object["all"] = .bool(true)
        case .liveActivity(let id): object["live_activity"] = .string(id)
        case .liveActivityChannel(let id): object["live_activity_channel"] = .string(id)
        case .tokens(let tokens):
            object["tokens"] = .array(
                tokens.map {
                    .object([
                        "token": .string($0.token), "service": .string($0.service.rawValue),
                        "environment": .string($0.environment.rawValue), "platform": .string($0.platform.rawValue),
                    ])
                })
        }
        if let platforms { object["platforms"] = .array(platforms.map(\.rawValue).sorted().map(JSONValue.string)) }
        if let services { object["services"] = .array(services.map(\.rawValue).sorted().map(JSONValue.string)) }
        if let apnsEnvironment { object["apns_environment"] = .string(apnsEnvironment.rawValue) }
        return .object(object)
    }

    /// Whether the target holds raw tokens (secrets that must be stored sealed).
    public var holdsTokens: Bool {
        if case .tokens = audience { return true }
        return false
    }
}
