import HeraldCore

/// One device a notification goes to: a registered installation, or a raw token of the target.
public struct Recipient: Sendable {
    /// The installation id, or `token:<index>` for a raw token (zero-padded, so keys sort in target order).
    public var key: String
    /// The installation, when the recipient is one (nil for a raw token).
    public var installationID: String?
    /// The whole token: a device token, or a Web Push subscription with its keys.
    public var token: PushToken
    public var service: PushService
    public var environment: PushEnvironment
    public var platform: Platform
    /// The installation's time zone and bundle id.
    public var timezone: String?
    public var bundleID: String?
    /// Attempts made before this one.
    public var attempts = 0
    /// The installation's stored badge when this notification already counted itself in it (an
    /// earlier attempt of an `increment` badge, retried now): sent as it is, not incremented again.
    public var countedBadge: Int?
    /// For a delivery that waited for a direct channel's confirmation: how it settled (one of
    /// ``PendingDelivery/Reason/settlements``), or `confirming` when its window passed with no word.
    /// Such a delivery is recorded from it, and does not go to a channel again unless it is direct-only.
    public var channelSettlement: PendingDelivery.Reason?
    /// Whether `token` is a Live Activity's token (an activity's or a push-to-start token) standing
    /// in for the installation's: it goes to APNs only, and a refusal drops that token alone.
    public var activityToken = false

    /// The recipient of an installation.
    public init(_ target: InstallationAddress) {
        key = target.installationID
        installationID = target.installationID
        token = target.token
        service = target.service
        environment = target.environment
        platform = target.platform
        timezone = target.timezone
        bundleID = target.bundleID
    }

    /// The recipient of the target's `index`th raw token.
    public init(rawToken: NotificationTarget.RawToken, index: Int) {
        key = Self.key(tokenIndex: index)
        installationID = nil
        token = .device(rawToken.token)
        service = rawToken.service
        environment = rawToken.environment
        platform = rawToken.platform
    }

    /// The recipient that stands for every installation of a service reached through a
    /// ``BroadcastRoute``: its key sorts before every installation id, so it is the fan-out's first.
    public init(broadcastTo address: String, service: PushService) {
        key = Self.broadcastKey(service)
        installationID = nil
        token = .device(address)
        self.service = service
        environment = .production
        platform = service.platforms.sorted { $0.rawValue < $1.rawValue }.first ?? .ios
    }

    /// Whether this recipient is a broadcast route's (every installation of its service at once).
    public var isBroadcast: Bool { key == Self.broadcastKey(service) }

    package static func broadcastKey(_ service: PushService) -> String { "!broadcast:" + service.rawValue }

    package static func key(tokenIndex: Int) -> String {
        let digits = String(tokenIndex)
        return "token:" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// The raw-token index a key names, if it names one.
    package static func tokenIndex(of key: String) -> Int? {
        guard key.hasPrefix("token:") else { return nil }
        return Int(key.dropFirst(6))
    }

    /// The recipient sent in the target's APNs environment, when it sets one and this is an APNs token.
    package func routed(by target: NotificationTarget) -> Recipient {
        guard let environment = target.apnsEnvironment, service == .apns else { return self }
        var routed = self
        routed.environment = environment
        return routed
    }

    /// The last characters of the token, for the ledger.
    package var tokenSuffix: String { token.suffix }
}
