import HeraldCore

/// One device a notification goes to: a registered installation, or a raw token of the target.
struct Recipient: Sendable {
    /// The installation id, or `token:<index>` for a raw token (zero-padded, so keys sort in target order).
    var key: String
    /// The installation, when the recipient is one (nil for a raw token).
    var installationID: String?
    var token: String
    var service: PushService
    var environment: PushEnvironment
    var platform: Platform
    /// The installation's time zone and bundle id.
    var timezone: String?
    var bundleID: String?
    /// Attempts made before this one.
    var attempts = 0

    init(_ target: DeliveryTarget) {
        key = target.installationID
        installationID = target.installationID
        token = target.token.identity
        service = target.service
        environment = target.environment
        platform = target.platform
        timezone = target.timezone
        bundleID = target.bundleID
    }

    init(rawToken: NotificationTarget.RawToken, index: Int) {
        key = Self.key(tokenIndex: index)
        installationID = nil
        token = rawToken.token
        service = rawToken.service
        environment = rawToken.environment
        platform = rawToken.platform
    }

    static func key(tokenIndex: Int) -> String {
        let digits = String(tokenIndex)
        return "token:" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// The raw-token index a key names, if it names one.
    static func tokenIndex(of key: String) -> Int? {
        guard key.hasPrefix("token:") else { return nil }
        return Int(key.dropFirst(6))
    }

    /// The last characters of the token, for the ledger.
    var tokenSuffix: String { String(token.suffix(8)) }
}

/// What a transport sends to one recipient: the rendered content's inputs.
struct OutgoingPush: Sendable {
    var recipient: Recipient
    /// The badge to send (after an increment), if any.
    var badge: Int?
    var soundEnabled: Bool
}

/// A provider's answer to one push.
struct TransportResult: Sendable {
    var outcome: DeliveryOutcome
    /// True when the provider asked every sender to slow down (not only this device).
    var providerWide: Bool

    init(_ outcome: DeliveryOutcome, providerWide: Bool = false) {
        self.outcome = outcome
        self.providerWide = providerWide
    }
}
