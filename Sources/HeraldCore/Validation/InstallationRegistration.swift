/// A validated request to register (create or update) an installation.
///
/// Optional fields left as nil keep the stored value when the registration updates an existing
/// installation.
public struct InstallationRegistration: Sendable, Equatable {
    public var userID: String?
    public var deviceID: String?
    public var platform: Platform
    public var service: PushService
    public var environment: PushEnvironment
    public var token: PushToken
    public var channels: [String]?
    public var locale: String?
    public var timezone: String?
    public var badge: Int?
    public var appVersion: String?
    public var osVersion: String?
    public var deviceModel: String?
    public var bundleID: String?
    public var attributes: [String: JSONValue]?

    /// Creates a registration from already-validated values (dialects build it from their own bodies).
    public init(
        userID: String? = nil, deviceID: String? = nil, platform: Platform, service: PushService,
        environment: PushEnvironment = .production, token: PushToken, channels: [String]? = nil,
        locale: String? = nil, timezone: String? = nil, badge: Int? = nil, appVersion: String? = nil,
        osVersion: String? = nil, deviceModel: String? = nil, bundleID: String? = nil,
        attributes: [String: JSONValue]? = nil
    ) {
        self.userID = userID
        self.deviceID = deviceID
        self.platform = platform
        self.service = service
        self.environment = environment
        self.token = token
        self.channels = channels
        self.locale = locale
        self.timezone = timezone
        self.badge = badge
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.bundleID = bundleID
        self.attributes = attributes
    }

    /// The members a native registration body may carry.
    public static let fields: Set<String> = [
        "user_id", "device_id", "platform", "service", "environment", "token", "subscription", "channels",
        "locale", "timezone", "badge", "app_version", "os_version", "device_model", "bundle_id", "attributes",
    ]

    /// Parses and validates a native `POST /v1/installations` body.
    /// - Throws: `HeraldError` naming the first field at fault.
    public init(json: JSONValue) throws(HeraldError) {
        let body = try JSONObjectReader(json)
        try body.rejectUnknown(allowed: Self.fields)
        guard let platform = try body.enumeration("platform", as: Platform.self) else {
            throw .missingField("platform")
        }
        let service =
            try body.enumeration("service", as: PushService.self)
            ?? InstallationRules.defaultService(for: platform)
        try InstallationRules.validate(platform: platform, service: service)
        self.platform = platform
        self.service = service
        self.environment = try body.enumeration("environment", as: PushEnvironment.self) ?? .production
        self.token = try Self.readToken(body, service: service, platform: platform)
        let common = try InstallationCommonFields(body)
        self.userID = common.userID
        self.deviceID = common.deviceID
        self.channels = common.channels
        self.locale = common.locale
        self.timezone = common.timezone
        self.badge = common.badge
        self.appVersion = common.appVersion
        self.osVersion = common.osVersion
        self.deviceModel = common.deviceModel
        self.bundleID = common.bundleID
        self.attributes = common.attributes
    }

    /// Reads `token` (device services) or `subscription` (Web Push), whichever the service takes.
    static func readToken(
        _ body: JSONObjectReader, service: PushService, platform: Platform
    ) throws(HeraldError)
        -> PushToken
    {
        if service == .webpush {
            guard !body.contains("token") else {
                throw .invalidValue(
                    "token", code: "invalid_token", "Web Push installations take a 'subscription' object.")
            }
            guard let subscription = try body.object("subscription") else { throw .missingField("subscription") }
            return .webPush(try parseSubscription(subscription))
        }
        guard !body.contains("subscription") else {
            throw .unknownField("subscription")
        }
        let token = try body.requiredString("token")
        try InstallationRules.validateDeviceToken(token, service: service, platform: platform)
        return .device(token)
    }

    /// Parses a browser `PushSubscription` JSON object.
    public static func parseSubscription(_ object: JSONObjectReader) throws(HeraldError) -> WebPushSubscription {
        try object.rejectUnknown(allowed: ["endpoint", "keys", "expirationTime"])
        let endpoint = try object.requiredString("endpoint")
        guard let keys = try object.object("keys") else { throw .missingField(object.name("keys")) }
        try keys.rejectUnknown(allowed: ["p256dh", "auth"])
        let subscription = WebPushSubscription(
            endpoint: endpoint, p256dh: try keys.requiredString("p256dh"), auth: try keys.requiredString("auth"))
        try InstallationRules.validateWebPush(subscription, field: object.path)
        return subscription
    }
}

/// The optional, freely updatable installation fields, read the same way by registration and patch.
struct InstallationCommonFields {
    var userID: String?
    var deviceID: String?
    var channels: [String]?
    var locale: String?
    var timezone: String?
    var badge: Int?
    var appVersion: String?
    var osVersion: String?
    var deviceModel: String?
    var bundleID: String?
    var attributes: [String: JSONValue]?

    init(_ body: JSONObjectReader) throws(HeraldError) {
        let short = InstallationRules.maxShortText
        userID = try body.string("user_id", maxLength: short)
        deviceID = try body.string("device_id", maxLength: short)
        channels = try body.strings("channels").map { (list) throws(HeraldError) in
            try InstallationRules.normalizeChannels(list)
        }
        locale = try body.string("locale", maxLength: 64).map { (value) throws(HeraldError) in
            try InstallationRules.normalizeLocale(value)
        }
        timezone = try body.string("timezone", maxLength: 64)
        if let timezone { try InstallationRules.validateTimeZone(timezone) }
        badge = try body.integer("badge", in: 0...Int(Int32.max))
        appVersion = try body.string("app_version", maxLength: short)
        osVersion = try body.string("os_version", maxLength: short)
        deviceModel = try body.string("device_model", maxLength: short)
        bundleID = try body.string("bundle_id", maxLength: short)
        if let object = try body.object("attributes") {
            try InstallationRules.validateAttributes(object.members)
            attributes = object.members
        }
    }
}
