import Foundation

/// The webhook endpoints of each app and their outbox: the events of each fact are written, one row
/// per subscribed endpoint, by the transaction that commits the fact (a page commit's failures,
/// invalidations and final status), so a crash can neither lose an event nor tell one whose fact
/// did not commit. Any node claims due rows, delivers them and records the attempt; a claimed row
/// is only returned once the commits that wrote it are durable (docs/webhooks.md, "Delivery").
public protocol WebhookStore: Sendable {
    /// Stores a new endpoint (its secrets encrypted at rest).
    /// - Throws: `webhook_exists` (409) when the app has an endpoint with its id.
    func createWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws

    /// An app's endpoints, by id.
    func webhookEndpoints(appID: String) async throws -> [WebhookEndpoint]

    /// One endpoint of an app.
    func webhookEndpoint(appID: String, id: String) async throws -> WebhookEndpoint?

    /// Replaces a stored endpoint; false when the app has none with its id.
    func updateWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws -> Bool

    /// Deletes an endpoint and its outbox rows; false when there was none.
    func deleteWebhookEndpoint(appID: String, id: String) async throws -> Bool

    /// Writes events that no other write carries (a test event), for one endpoint or, with
    /// `endpointID` nil, for every enabled endpoint of the event's app subscribed to its type.
    /// - Returns: How many outbox rows were written.
    @discardableResult
    func enqueueWebhookEvents(_ events: [WebhookEvent], endpointID: String?) async throws -> Int

    /// Leases up to `limit` due outbox rows of enabled endpoints to `owner` until `lockedUntil`,
    /// oldest due first, and returns them once the commits that wrote them are durable.
    func claimWebhookDeliveries(
        owner: String, now: Date, lockedUntil: Date, limit: Int
    ) async throws
        -> [WebhookDelivery]

    /// Records an attempt of a claimed row (held by `owner`; false, nothing written, when the lease
    /// was lost) and the endpoint's health with it.
    func recordWebhookAttempt(_ attempt: WebhookAttempt) async throws -> Bool

    /// An endpoint's most recent outbox rows, newest first (the console, `herald webhooks`).
    func webhookDeliveries(appID: String, endpointID: String, limit: Int) async throws -> [WebhookDelivery]

    /// How many rows of an endpoint wait to be delivered.
    func webhookBacklog(appID: String, endpointID: String) async throws -> Int

    /// Makes the endpoint's events written at or after `since` (and still kept: ``CleanupPolicy/webhookRetention``)
    /// due again at `now`, whatever became of them, with their attempts counted afresh; rows still waiting stay as
    /// they are. Each keeps its event id, so a receiver can tell what it already has.
    /// - Returns: How many were made due.
    func replayWebhookDeliveries(appID: String, endpointID: String, since: Date, now: Date) async throws -> Int

    /// Drops the oldest waiting rows of every endpoint with more than `limit` waiting (state `dropped`).
    /// - Returns: What each endpoint that had too many lost.
    func trimWebhookBacklogs(limit: Int, now: Date) async throws -> [WebhookBacklogTrim]
}

/// What ``WebhookStore/trimWebhookBacklogs(limit:now:)`` dropped of one endpoint's backlog.
public struct WebhookBacklogTrim: Sendable, Equatable {
    public var appID: String
    public var endpointID: String
    public var dropped: Int

    /// Creates a record of a trim.
    public init(appID: String, endpointID: String, dropped: Int) {
        self.appID = appID
        self.endpointID = endpointID
        self.dropped = dropped
    }
}

/// One event for one endpoint: an outbox row, with what delivering it takes.
public struct WebhookDelivery: Sendable, Equatable {
    /// Where it stands.
    public enum State: String, Sendable, CaseIterable {
        /// Waiting for an attempt (the first, or another after a failure).
        case pending
        case delivered
        /// Every attempt failed, or the endpoint was gone (410).
        case failed
        /// Dropped unsent: the endpoint's backlog was over its limit (``WebhookStore/trimWebhookBacklogs(limit:now:)``).
        case dropped
    }

    public var id: Int64
    public var appID: String
    public var endpointID: String
    public var eventID: String
    public var eventType: WebhookEventType
    public var body: [UInt8]
    public var createdAt: Date
    public var state: State
    /// Attempts made so far.
    public var attempts: Int
    public var nextAttemptAt: Date?
    public var lastAttemptAt: Date?
    /// The receiver's last status code (nil: no answer).
    public var lastStatus: Int?
    public var lastError: String?
    /// The endpoint's URL and signing secrets when claimed (empty in listings).
    public var url: String
    public var secrets: [WebhookSecret]

    /// Creates a row's view.
    public init(
        id: Int64, appID: String, endpointID: String, eventID: String, eventType: WebhookEventType, body: [UInt8],
        createdAt: Date, state: State, attempts: Int, nextAttemptAt: Date?, lastAttemptAt: Date? = nil,
        lastStatus: Int? = nil, lastError: String? = nil, url: String = "", secrets: [WebhookSecret] = []
    ) {
        self.id = id
        self.appID = appID
        self.endpointID = endpointID
        self.eventID = eventID
        self.eventType = eventType
        self.body = body
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastAttemptAt = lastAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.url = url
        self.secrets = secrets
    }
}

/// The result of one attempt to deliver an outbox row.
public struct WebhookAttempt: Sendable, Equatable {
    /// What becomes of the row and its endpoint.
    public enum Outcome: Sendable, Equatable {
        /// A `2xx`: delivered; the endpoint is healthy.
        case delivered
        /// Failed; tried again at `nextAttemptAt`, or failed for good when nil (the schedule is used up).
        case failed(nextAttemptAt: Date?)
        /// `410 Gone`: the row fails and the endpoint is disabled (``WebhookEndpoint/DisabledReason/gone``).
        case gone
    }

    public var deliveryID: Int64
    public var owner: String
    public var at: Date
    public var outcome: Outcome
    public var status: Int?
    public var error: String?

    /// Creates an attempt's record.
    public init(deliveryID: Int64, owner: String, at: Date, outcome: Outcome, status: Int?, error: String?) {
        self.deliveryID = deliveryID
        self.owner = owner
        self.at = at
        self.outcome = outcome
        self.status = status
        self.error = error
    }
}
