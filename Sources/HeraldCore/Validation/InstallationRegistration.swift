/// A validated request to register (create or update) an installation: the token and where it
/// delivers, plus the profile (fields left nil keep the stored value on an update).
@dynamicMemberLookup
public struct InstallationRegistration: Sendable, Equatable {
    public var platform: Platform
    public var service: PushService
    public var environment: PushEnvironment
    public var token: PushToken
    public var profile: InstallationProfile

    /// Creates a registration from already-validated values (dialects build it from their own bodies).
    public init(
        platform: Platform, service: PushService, environment: PushEnvironment = .production, token: PushToken,
        profile: InstallationProfile = .init()
    ) {
        self.platform = platform
        self.service = service
        self.environment = environment
        self.token = token
        self.profile = profile
    }

    /// The profile's fields, read and written as the registration's own (`registration.userID`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<InstallationProfile, Value>) -> Value {
        get { profile[keyPath: keyPath] }
        set { profile[keyPath: keyPath] = newValue }
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
        self.profile = try InstallationProfile(body)
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
