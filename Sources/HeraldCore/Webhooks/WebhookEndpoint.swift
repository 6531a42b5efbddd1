import Foundation

/// Where an app's backend receives webhook events: a URL, the event types it wants and the secrets
/// that sign them. Created through `/v1/webhooks` or configured (`app.<id>.webhooks`); stored with
/// its secrets encrypted at rest (docs/webhooks.md).
public struct WebhookEndpoint: Sendable, Equatable {
    /// Why an endpoint no longer receives events.
    public enum DisabledReason: String, Sendable, Codable, CaseIterable {
        /// Its owner disabled it (`PATCH … {"enabled": false}`).
        case manual
        /// The receiver answered `410 Gone`.
        case gone
        /// Every attempt failed for ``WebhookEndpoint/failingLimit``.
        case failing
    }

    /// Unique within the app: generated for one the API creates, the configuration's name for a configured one.
    public var id: String
    public var appID: String
    public var url: String
    /// The event types it receives, sorted, at least one.
    public var events: [WebhookEventType]
    public var description: String?
    /// The secrets that sign its events: the newest first, an older one until its `expiresAt` (a rotation's overlap).
    public var secrets: [WebhookSecret]
    /// Whether it came from the configuration (then the configuration is the only place it changes).
    public var configured: Bool
    /// Nil while it receives events.
    public var disabledReason: DisabledReason?
    /// When the failures that continue until now began (nil after a success).
    public var failingSince: Date?
    public var lastSuccessAt: Date?
    public var createdAt: Date
    public var updatedAt: Date

    /// How long an endpoint may fail every attempt before it is disabled (``DisabledReason/failing``).
    public static let failingLimit: Duration = .seconds(5 * 86_400)

    /// Creates an endpoint.
    public init(
        id: String, appID: String, url: String, events: [WebhookEventType], description: String? = nil,
        secrets: [WebhookSecret], configured: Bool = false, disabledReason: DisabledReason? = nil,
        failingSince: Date? = nil, lastSuccessAt: Date? = nil, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.url = url
        self.events = Array(Set(events)).sorted()
        self.description = description
        self.secrets = secrets
        self.configured = configured
        self.disabledReason = disabledReason
        self.failingSince = failingSince
        self.lastSuccessAt = lastSuccessAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Whether it receives events.
    public var enabled: Bool { disabledReason == nil }

    /// The secrets that sign at `now`: every one not expired.
    public func signingSecrets(at now: Date) -> [WebhookSecret] {
        secrets.filter { $0.expiresAt.map { $0 > now } ?? true }
    }
}

/// A Standard Webhooks signing secret: `whsec_` and the base64 of its key bytes.
public struct WebhookSecret: Sendable, Equatable, Codable {
    /// The secret as receivers configure it (`whsec_…`).
    public var value: String
    /// When it stops signing (the end of a rotation's overlap); nil: the current secret.
    public var expiresAt: Date?

    /// How many random bytes a generated secret has (Standard Webhooks: 24 to 64).
    public static let keyLength = 32
    /// The prefix of every secret.
    public static let prefix = "whsec_"

    /// Creates a secret from its text.
    /// - Throws: `invalid_webhook_secret` when it is not `whsec_` and base64 of 24 to 64 bytes.
    public init(_ value: String, expiresAt: Date? = nil) throws(HeraldError) {
        guard value.hasPrefix(Self.prefix), let key = Data(base64Encoded: String(value.dropFirst(Self.prefix.count))),
            (24...64).contains(key.count)
        else {
            throw .invalidValue(
                "secret", code: "invalid_webhook_secret",
                "A webhook secret is `whsec_` followed by the base64 of 24 to 64 random bytes.")
        }
        self.value = value
        self.expiresAt = expiresAt
    }

    /// A new random secret.
    public static func generate() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // A generated secret is well formed by construction.
        return try! WebhookSecret(prefix + Data(key).base64EncodedString())
    }

    /// The key bytes the signature's HMAC uses.
    public var key: [UInt8] { Array(Data(base64Encoded: String(value.dropFirst(Self.prefix.count))) ?? Data()) }
}
