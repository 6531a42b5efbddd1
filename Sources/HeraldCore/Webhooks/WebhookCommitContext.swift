import Foundation

/// An endpoint as a fact's transaction sees it: its id and the event types it wants.
public struct WebhookSubscription: Sendable, Equatable {
    public var id: String
    public var events: Set<WebhookEventType>

    /// Creates a subscription.
    public init(id: String, events: Set<WebhookEventType>) {
        self.id = id
        self.events = events
    }

    /// A subscription from its stored `events` column (a JSON array of type names; unknown names are ignored).
    public init(id: String, eventsJSON: String) {
        let names = (try? JSONDecoder().decode([String].self, from: Data(eventsJSON.utf8))) ?? []
        self.init(id: id, events: Set(names.compactMap(WebhookEventType.init)))
    }

    /// The stored form of an endpoint's event types.
    public static func eventsJSON(_ events: [WebhookEventType]) -> String {
        let names = events.map(\.rawValue).sorted()
        return String(decoding: (try? JSONEncoder().encode(names)) ?? Data("[]".utf8), as: UTF8.self)
    }
}

/// What a page commit's events are made of, read in its transaction by the store: the app's
/// subscriptions and the installations its failures and invalidations concern. Which events a page
/// makes is decided here, once, for both stores.
public struct WebhookCommitContext: Sendable {
    public var appID: String
    public var subscriptions: [WebhookSubscription]
    /// What the events say of each installation involved, by id (read before the commit changes them).
    public var installations: [String: WebhookEvent.Installation]
    /// Those of them that were valid before the commit: only their invalidation is news.
    public var validBefore: Set<String>

    /// Creates a context.
    public init(
        appID: String, subscriptions: [WebhookSubscription], installations: [String: WebhookEvent.Installation],
        validBefore: Set<String> = []
    ) {
        self.appID = appID
        self.subscriptions = subscriptions
        self.installations = installations
        self.validBefore = validBefore
    }

    /// Whether a page may tell anything at all: a failure, an invalidation or a final status. A page of
    /// deliveries alone (most pages) does not read the app's endpoints.
    public static func mayTell(_ page: PageCommit) -> Bool {
        if let status = page.status, WebhookEvent.finishedStatuses.contains(status) { return true }
        if page.ledger.contains(where: failing) { return true }
        return page.installationEvents.contains { _, event in
            switch event {
            case .invalidated, .rejected: true
            case .delivered, .failed: false
            }
        }
    }

    /// The installations a page's events concern: those of its failures and invalidations.
    public static func installationIDs(of page: PageCommit) -> Set<String> {
        var ids = Set(page.ledger.compactMap { failing($0) ? $0.installationID : nil })
        for (id, event) in page.installationEvents {
            switch event {
            case .invalidated, .rejected: ids.insert(id)
            case .delivered, .failed: break
            }
        }
        return ids
    }

    /// Whether a ledger entry is a failure a `delivery.failed` event reports.
    public static func failing(_ record: DeliveryRecord) -> Bool {
        [.failed, .invalid, .retrying].contains(record.outcome)
    }

    /// Whether any endpoint wants events of this type.
    public func wants(_ type: WebhookEventType) -> Bool {
        subscriptions.contains { $0.events.contains(type) }
    }

    /// The events of a committed page: one `delivery.failed` per failed ledger entry, one
    /// `installation.invalidated` per installation the commit invalidated (`invalidated`: the store
    /// knows which of the page's invalidations changed a row; one that was invalid already is not
    /// news), and the notification's final event.
    public func events(
        for page: PageCommit, invalidated: [(id: String, reason: String, at: Date)], finished: WebhookEvent?
    ) -> [WebhookEvent] {
        var events: [WebhookEvent] = []
        if wants(.deliveryFailed) {
            let retries = Dictionary(
                page.pending.filter { $0.reason == .retry }.map { ($0.recipient, $0.runAt) }, uniquingKeysWith: max)
            for record in page.ledger where Self.failing(record) {
                let installation = record.installationID.flatMap { installations[$0] }
                let next = record.outcome == .retrying ? record.installationID.flatMap { retries[$0] } : nil
                if let event = WebhookEvent.deliveryFailed(
                    appID: appID, record: record, installation: installation, nextAttemptAt: next)
                {
                    events.append(event)
                }
            }
        }
        if wants(.installationInvalidated) {
            for (id, reason, at) in invalidated where validBefore.contains(id) {
                guard let installation = installations[id] else { continue }
                events.append(
                    WebhookEvent.invalidated(
                        appID: appID, installation: installation, reason: reason, notificationID: page.notificationID,
                        at: at))
            }
        }
        if let finished, wants(finished.type) { events.append(finished) }
        return events
    }
}

extension WebhookEvent {
    /// The statuses a notification's final event reports.
    public static let finishedStatuses: Set<NotificationStatus> = [.done, .failed, .expired, .canceled]
}

extension HeraldError {
    /// An app already has a webhook endpoint with this id.
    public static func webhookExists(_ id: String) -> Self {
        HeraldError(
            kind: .conflict, code: "webhook_exists", message: "A webhook endpoint with id \(id) exists.", field: "id")
    }
}
