import Foundation

/// A device that can receive pushes: its token, who it belongs to, and its delivery lifecycle.
public struct Installation: Sendable, Equatable {
    /// Herald's id (time-ordered UUID text).
    public var id: String
    /// The app the installation belongs to.
    public var appID: String
    /// The app user the device is signed in as, if any.
    public var userID: String?
    /// The client's stable id for the device, if it sends one.
    public var deviceID: String?
    public var platform: Platform
    public var service: PushService
    public var environment: PushEnvironment
    /// The push token, in plain text (the store encrypts it).
    public var token: PushToken
    public var channels: [String]
    public var locale: String?
    public var timezone: String?
    public var badge: Int
    public var appVersion: String?
    public var osVersion: String?
    public var deviceModel: String?
    public var bundleID: String?
    /// Free-form JSON object of the app's own fields.
    public var attributes: [String: JSONValue]
    public var snsEndpointARN: String?
    public var valid: Bool
    public var failureCount: Int
    public var lastFailureAt: Date?
    public var lastFailureReason: String?
    public var lastDeliveredAt: Date?
    public var lastSeenAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
    public var invalidatedAt: Date?
    /// Whether the installation is deleted as soon as a provider says its token is dead (APNs 410,
    /// FCM `UNREGISTERED`: ArgusAI's rule) rather than kept with `valid` false (the native rule).
    public var deleteWhenInvalid: Bool

    /// Creates an installation from all its fields.
    public init(
        id: String, appID: String, userID: String? = nil, deviceID: String? = nil, platform: Platform,
        service: PushService, environment: PushEnvironment, token: PushToken, channels: [String] = [],
        locale: String? = nil, timezone: String? = nil, badge: Int = 0, appVersion: String? = nil,
        osVersion: String? = nil, deviceModel: String? = nil, bundleID: String? = nil,
        attributes: [String: JSONValue] = [:], snsEndpointARN: String? = nil, valid: Bool = true,
        failureCount: Int = 0, lastFailureAt: Date? = nil, lastFailureReason: String? = nil,
        lastDeliveredAt: Date? = nil, lastSeenAt: Date? = nil, createdAt: Date, updatedAt: Date,
        invalidatedAt: Date? = nil, deleteWhenInvalid: Bool = false
    ) {
        self.id = id
        self.appID = appID
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
        self.snsEndpointARN = snsEndpointARN
        self.valid = valid
        self.failureCount = failureCount
        self.lastFailureAt = lastFailureAt
        self.lastFailureReason = lastFailureReason
        self.lastDeliveredAt = lastDeliveredAt
        self.lastSeenAt = lastSeenAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.invalidatedAt = invalidatedAt
        self.deleteWhenInvalid = deleteWhenInvalid
    }
}

/// A push token: a provider's opaque device token, or a Web Push subscription.
public enum PushToken: Sendable, Hashable {
    /// An APNs, FCM or SNS device token.
    case device(String)
    /// A Web Push subscription (RFC 8030 endpoint and RFC 8291 keys, base64url as browsers give them).
    case webPush(WebPushSubscription)

    /// The string that identifies the token uniquely within its service: the device token, or the
    /// subscription's endpoint URL. The keyed uniqueness hash is computed over it.
    public var identity: String {
        switch self {
        case .device(let token): token
        case .webPush(let subscription): subscription.endpoint
        }
    }

    /// What an unreachable-provider pause holds back with this token (``ProviderPause/scope``): for a
    /// Web Push subscription its push service's origin (`https://updates.push.services.mozilla.com`),
    /// since browsers of one app use several push services that fail apart; empty for a device token,
    /// whose provider is one service.
    public var pauseScope: String {
        guard case .webPush(let subscription) = self else { return "" }
        let endpoint = subscription.endpoint
        guard let scheme = endpoint.range(of: "://") else { return "" }
        let rest = endpoint[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return (endpoint[..<scheme.upperBound] + authority).lowercased()
    }

    /// The last eight characters of the identity, the only part list views show.
    public var suffix: String { String(identity.suffix(8)) }

    /// The bytes kept (encrypted) at rest.
    public var storageBytes: [UInt8] {
        switch self {
        case .device(let token): Array(token.utf8)
        case .webPush(let subscription):
            JSONValue.object([
                "endpoint": .string(subscription.endpoint),
                "keys": .object(["p256dh": .string(subscription.p256dh), "auth": .string(subscription.auth)]),
            ]).serialized()
        }
    }

    /// Rebuilds a token from its stored bytes.
    /// - Throws: `HeraldError.internal` when the bytes are not a token of the service.
    public init(storageBytes: [UInt8], service: PushService) throws(HeraldError) {
        guard service == .webpush else {
            self = .device(String(decoding: storageBytes, as: UTF8.self))
            return
        }
        guard case .object(let members) = try JSONValue.parse(storageBytes),
            case .string(let endpoint) = members["endpoint"],
            case .object(let keys) = members["keys"],
            case .string(let p256dh) = keys["p256dh"], case .string(let auth) = keys["auth"]
        else { throw .internal("A stored Web Push subscription is unreadable.") }
        self = .webPush(WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: auth))
    }
}

/// A browser's push subscription (the `PushSubscription.toJSON()` shape).
public struct WebPushSubscription: Sendable, Hashable {
    /// The push service URL to POST messages to.
    public var endpoint: String
    /// The user agent's P-256 ECDH public key, uncompressed, base64url.
    public var p256dh: String
    /// The 16-byte authentication secret, base64url.
    public var auth: String

    /// Creates a subscription from its three parts.
    public init(endpoint: String, p256dh: String, auth: String) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }
}

extension Installation {
    /// A new installation from a registration.
    public init(_ registration: InstallationRegistration, id: String, appID: String, now: Date) {
        self.init(
            id: id, appID: appID, platform: registration.platform, service: registration.service,
            environment: registration.environment, token: registration.token, lastSeenAt: now, createdAt: now,
            updatedAt: now)
        registration.profile.apply(to: &self)
    }

    /// Applies a re-registration: given fields replace stored ones, and the installation is valid
    /// again with its failure count reset (a token the device presents again is live).
    public mutating func merge(_ registration: InstallationRegistration, now: Date) {
        platform = registration.platform
        environment = registration.environment
        token = registration.token
        registration.profile.apply(to: &self)
        revalidate()
        lastSeenAt = now
        updatedAt = now
    }

    /// Makes the installation valid again with its failure count reset: the device showed it is in use.
    public mutating func revalidate() {
        valid = true
        invalidatedAt = nil
        failureCount = 0
    }
}
