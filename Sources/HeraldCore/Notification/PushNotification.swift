import Foundation

/// Where a notification is in its life.
public enum NotificationStatus: String, Sendable, CaseIterable, Codable {
    /// Waiting for its push time.
    case scheduled
    /// Due, waiting for a worker.
    case queued
    /// A worker is fanning it out, or deliveries wait for a retry or a device's local time.
    case sending
    /// Every recipient has an outcome.
    case done
    /// Canceled before it finished; what was sent stays sent.
    case canceled
    /// Its expiration passed before every recipient had an outcome.
    case expired
    /// Nothing could be delivered (for example: no credentials for any targeted provider).
    case failed

    /// Whether the notification will not change any more.
    public var isFinal: Bool {
        switch self {
        case .done, .canceled, .expired, .failed: true
        case .scheduled, .queued, .sending: false
        }
    }
}

/// What happened to a notification's recipients so far.
public struct NotificationCounts: Sendable, Equatable {
    /// Recipients resolved from the target.
    public var targeted = 0
    /// Accepted by the provider.
    public var sent = 0
    /// Failed for good (rejected, configuration failure, retries exhausted).
    public var failed = 0
    /// The provider said the token is no longer valid.
    public var invalid = 0
    /// Skipped by the recipient's preferences (sources, categories, mute, quiet hours).
    public var skippedPreferences = 0
    /// Still undelivered when the notification expired.
    public var skippedExpired = 0
    /// Deferred because the provider asked Herald to slow down.
    public var rateLimited = 0
    /// Installations that reported opening it (`POST /v1/opens`), each counted once.
    public var opened = 0
    /// Of `sent`, how many went in each localization (its tag, or ``defaultLocale`` for the default
    /// words); empty for a notification without localizations (docs/content.md).
    public var byLocale: [String: Int] = [:]

    /// The `byLocale` key of the default words.
    public static let defaultLocale = "default"

    /// Adds what a page of the fan-out counted (every count but `opened`, which pages do not touch).
    public mutating func add(_ page: NotificationCounts) {
        targeted += page.targeted
        sent += page.sent
        failed += page.failed
        invalid += page.invalid
        skippedPreferences += page.skippedPreferences
        skippedExpired += page.skippedExpired
        rateLimited += page.rateLimited
        byLocale.merge(page.byLocale, uniquingKeysWith: +)
    }

    /// Creates counts.
    public init(
        targeted: Int = 0, sent: Int = 0, failed: Int = 0, invalid: Int = 0, skippedPreferences: Int = 0,
        skippedExpired: Int = 0, rateLimited: Int = 0, opened: Int = 0
    ) {
        self.targeted = targeted
        self.sent = sent
        self.failed = failed
        self.invalid = invalid
        self.skippedPreferences = skippedPreferences
        self.skippedExpired = skippedExpired
        self.rateLimited = rateLimited
        self.opened = opened
    }

    /// Adds another set of counts.
    public static func + (lhs: Self, rhs: Self) -> Self {
        var sum = Self(
            targeted: lhs.targeted + rhs.targeted, sent: lhs.sent + rhs.sent, failed: lhs.failed + rhs.failed,
            invalid: lhs.invalid + rhs.invalid, skippedPreferences: lhs.skippedPreferences + rhs.skippedPreferences,
            skippedExpired: lhs.skippedExpired + rhs.skippedExpired, rateLimited: lhs.rateLimited + rhs.rateLimited,
            opened: lhs.opened + rhs.opened)
        sum.byLocale = lhs.byLocale.merging(rhs.byLocale, uniquingKeysWith: +)
        return sum
    }

    /// The counts as the API writes them.
    public var json: JSONValue {
        .object(
            [
                "targeted": .number(JSONNumber(targeted)), "sent": .number(JSONNumber(sent)),
                "failed": .number(JSONNumber(failed)),
                "invalid": .number(JSONNumber(invalid)), "skipped_preferences": .number(JSONNumber(skippedPreferences)),
                "skipped_expired": .number(JSONNumber(skippedExpired)),
                "rate_limited": .number(JSONNumber(rateLimited)),
                "opened": .number(JSONNumber(opened)),
            ].merging(byLocale.isEmpty ? [:] : ["by_locale": .object(byLocale.mapValues { .number(JSONNumber($0)) })]) {
                first, _ in first
            })
    }

    /// Reads stored per-locale counts (a JSON object of integers); empty when there are none.
    public static func byLocale(stored text: String?) -> [String: Int] {
        guard let text, case .object(let members)? = try? JSONValue.parse(Array(text.utf8)) else { return [:] }
        return members.compactMapValues { value in
            if case .number(let number) = value { return number.integerValue.map(Int.init) }
            return nil
        }
    }
}

/// One send request, as accepted and stored: what to send, to whom, when, and how far it got.
public struct PushNotification: Sendable, Equatable {
    public var id: String
    public var appID: String
    public var target: NotificationTarget
    public var payload: NotificationPayload
    /// What sent it (a camera id, a service name), matched against `enabled_sources` preferences.
    public var source: String?
    /// What kind of event it is (an object type such as `person`), matched against
    /// `enabled_categories` preferences; nil leaves that to `payload.category`.
    public var category: String?
    /// The push time as sent (RFC 3339; without an offset it is each device's local time).
    public var pushTime: String?
    /// Nothing is sent before this instant (the push time, or its earliest local instant).
    public var notBefore: Date?
    /// Nothing is sent at or after this instant.
    public var expiresAt: Date?
    public var respectPreferences: Bool
    public var idempotencyKey: String?
    public var status: NotificationStatus
    public var counts: NotificationCounts
    public var createdAt: Date
    public var startedAt: Date?
    public var completedAt: Date?
    /// The request that created it (`X-Request-Id`), carried into its jobs' log lines.
    public var requestID: String?
    /// A push its device's cloud route cannot carry (too large) waits for the device's direct
    /// channel until the notification expires, instead of failing (``SendRequest/waitsForChannel``).
    public var waitsForChannel = false
    /// The Live Activity this notification starts, updates or ends, when it is a Live Activity push
    /// (docs/live-activities.md): sent to activity and push-to-start tokens, in revision order.
    public var liveActivity: LiveActivityPush?
    /// The template its words are rendered from, at the revision it was accepted with
    /// (docs/content.md, "Templates").
    public var template: TemplateUse?
    /// Sent with a replacement key (its `payload.collapseID`, by default ``replacementKey(for:)``) on
    /// every provider, so a later change replaces it on the device (docs/content.md, "Updating and
    /// deleting").
    public var updatable = false
    /// An updatable notification's place among its revisions (revision 1 for the first send).
    public var revision: NotificationRevision?

    /// The replacement key of an updatable notification that gives no `collapse_id`.
    public static func replacementKey(for id: String) -> String { "herald-\(id)" }

    /// The category preferences filter on: `category` when set, else `payload.category` (which is
    /// also the APNs category, so a sender whose APNs category is not the event's kind sets both).
    public var preferenceCategory: String? { category ?? payload.category }

    /// Creates a notification record.
    public init(
        id: String, appID: String, target: NotificationTarget, payload: NotificationPayload, source: String? = nil,
        category: String? = nil, pushTime: String? = nil, notBefore: Date? = nil, expiresAt: Date? = nil,
        respectPreferences: Bool = true, idempotencyKey: String? = nil, status: NotificationStatus = .queued,
        counts: NotificationCounts = .init(), createdAt: Date, startedAt: Date? = nil, completedAt: Date? = nil,
        requestID: String? = nil
    ) {
        self.id = id
        self.appID = appID
        self.target = target
        self.payload = payload
        self.source = source
        self.category = category
        self.pushTime = pushTime
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.respectPreferences = respectPreferences
        self.idempotencyKey = idempotencyKey
        self.status = status
        self.counts = counts
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.requestID = requestID
    }
}

/// One recipient's outcome in a notification's ledger.
public struct DeliveryRecord: Sendable, Equatable {
    /// The ledger's outcome names.
    public enum Outcome: String, Sendable, CaseIterable {
        case delivered, invalid, failed, skipped, expired
        /// A transient failure; another attempt is scheduled.
        case retrying
        /// Sent over the device's direct channel, not confirmed in time (or the channel closed):
        /// the device's cloud route takes it once.
        case fellBack = "fell_back"
    }

    public var notificationID: String
    /// The installation, or nil for a raw token.
    public var installationID: String?
    /// The last characters of the token, to recognise it without revealing it.
    public var tokenSuffix: String
    public var service: PushService
    public var outcome: Outcome
    /// The provider's id for the push (apns-id, FCM message name).
    public var providerID: String?
    public var reason: String?
    public var attempts: Int
    public var at: Date

    /// Creates a ledger entry.
    public init(
        notificationID: String, installationID: String?, tokenSuffix: String, service: PushService, outcome: Outcome,
        providerID: String? = nil, reason: String? = nil, attempts: Int, at: Date
    ) {
        self.notificationID = notificationID
        self.installationID = installationID
        self.tokenSuffix = tokenSuffix
        self.service = service
        self.outcome = outcome
        self.providerID = providerID
        self.reason = reason
        self.attempts = attempts
        self.at = at
    }
}

extension PushNotification {
    /// The data key that carries the notification's id to the app (FCM's `data`, a Web Push
    /// notification's `data`), which reports an open with it (`POST /v1/opens`).
    public static let idDataKey = "herald_id"
}
