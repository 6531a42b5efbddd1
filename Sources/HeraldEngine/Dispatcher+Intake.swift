import Foundation
import HeraldCore
import Logging

/// The result of a send request.
public enum SendResult: Sendable {
    /// Stored with its job; `created` is false when an idempotency key returned an earlier one.
    case accepted(PushNotification, created: Bool)
    /// A dry run: the audience by service, nothing stored or sent.
    case dryRun(audience: [PushService: Int])
}

extension Dispatcher {
    /// The furthest ahead a notification may be scheduled.
    static let maxScheduleAhead: TimeInterval = 366 * 86_400

    /// Validates a send request and stores it with its job; a dry run resolves the audience and
    /// renders the payload without storing anything.
    /// - Throws: `HeraldError` naming the field at fault; nothing is stored then.
    public func submit(_ request: SendRequest, appID: String) async throws -> SendResult {
        let now = self.now()
        var notification = try notification(for: request, appID: appID, now: now)
        if request.dryRun {
            if case .tokens(let tokens) = request.target.audience {
                var audience: [PushService: Int] = [:]
                for token in tokens where request.target.admits(token) { audience[token.service, default: 0] += 1 }
                return .dryRun(audience: audience)
            }
            return .dryRun(audience: try await store.count(request.target, appID: appID))
        }
        if notification.revision?.number == 1 { try await createRevisionCounter(for: notification, now: now) }
        let lease = handoffLease(for: notification, now: now)
        let stored: (notification: PushNotification, created: Bool)
        do {
            stored = try await store.insertNotification(
                notification, runAt: notification.notBefore ?? now, idempotencyWindow: configuration.idempotencyWindow,
                lease: lease)
        } catch {
            if let lease { handoff.drop(lease) }
            throw error
        }
        notification = stored.notification
        if stored.created {
            accepted(notification, dialect: request.dialect, lease: lease, addresses: knownAddresses(of: request))
        } else if let lease {
            handoff.drop(lease)
        }
        return .accepted(notification, created: stored.created)
    }

    /// The notification a send request makes at `now`: its schedule and expiration checked against
    /// the clock, its payload against every provider the target can reach. Nothing is stored.
    /// - Throws: `HeraldError` naming the field at fault.
    public func notification(
        for request: SendRequest, appID: String, now: Date
    ) throws(HeraldError) -> PushNotification {
        var notBefore: Date?
        if let time = request.pushTime {
            let (earliest, latest) =
                if case .instant(let date) = time { (date, date) } else { (time.earliestInstant, time.latestInstant) }
            guard latest.timeIntervalSince(now) <= Self.maxScheduleAhead else {
                throw .invalidValue("push_time", code: "invalid_push_time", "push_time is more than a year ahead.")
            }
            if earliest > now { notBefore = earliest }
        }
        var expiresAt: Date?
        switch request.expiration {
        case nil: break
        case .at(let date): expiresAt = date
        case .after(let seconds): expiresAt = (notBefore ?? now).addingTimeInterval(TimeInterval(seconds))
        }
        if let expiresAt, !request.acceptsExpired {
            guard expiresAt > now else {
                let field = if case .at = request.expiration { "expiration_time" } else { "expiration_interval" }
                throw .invalidValue(
                    field, code: "invalid_expiration", "The notification would expire before it is sent.")
            }
            if expiresAt <= (notBefore ?? now) {
                throw .invalidValue(
                    "expiration_time", code: "invalid_expiration", "The notification expires before its push time.")
            }
        }
        var notification = PushNotification(
            id: Identifier.make(now: now), appID: appID, target: request.target, payload: request.payload,
            source: request.source, category: request.category, pushTime: request.pushTime?.rfc3339,
            notBefore: notBefore, expiresAt: expiresAt, respectPreferences: request.respectPreferences,
            idempotencyKey: request.idempotencyKey, status: notBefore == nil ? .queued : .scheduled, createdAt: now,
            requestID: RequestTrace.requestID)
        notification.waitsForChannel = request.waitsForChannel
        notification.liveActivity = request.liveActivity
        if request.updatable {
            guard request.liveActivity == nil else {
                throw .invalidValue("updatable", "A Live Activity is updated through its own revisions.")
            }
            if case .tokens = request.target.audience {
                throw .invalidValue(
                    "target.tokens", code: "invalid_target",
                    "An updatable notification goes to installations: Herald keeps them as its recipients.")
            }
            notification.updatable = true
            notification.payload.collapseID =
                request.payload.collapseID ?? PushNotification.replacementKey(for: notification.id)
            notification.revision = request.revision ?? NotificationRevision(of: notification.id, number: 1)
        }
        if let template = request.template {
            guard request.liveActivity == nil else {
                throw .invalidValue("template", "A Live Activity push takes its content state, not a template.")
            }
            guard template.content != nil else { throw .internal("Template \(template.name) was not resolved.") }
            notification.template = template
        }
        do {
            try validateSizes(notification, now: now)
        } catch  where request.waitsForChannel && error.code == "payload_too_large" {
            // Too large for the cloud route: it waits for the device's channel (see `sendWithChannels`).
        }
        return notification
    }

    /// The lease to store a new notification's job with when this node's workers are to get it in
    /// memory (see ``LocalHandoff``); nil when it goes through the store's queue.
    func handoffLease(for notification: PushNotification, now: Date) -> JobLease? {
        handoff.lease(for: notification, until: now.addingTimeInterval(configuration.lease.timeInterval))
    }

    /// A notification was stored: count it (by the dialect that built it, `native` for the API's),
    /// log it, hand it to a local worker when its job was stored leased to them, and wake one worker.
    func accepted(
        _ notification: PushNotification, dialect: String?, lease: JobLease?, addresses: [InstallationAddress]? = nil
    ) {
        EngineMetrics.accepted(notification, dialect: dialect ?? "native")
        logger.debug("notification accepted", metadata: notification.logMetadata)
        if let lease, handoff.hand(lease, notification: notification, at: now(), addresses: addresses) {
            wakeups.signal()
        } else {
            wake()
        }
    }

    /// The request's ``SendRequest/knownAddresses`` when they are the whole first page of its target:
    /// an `installationIDs` target naming exactly them (fewer than a batch), of services it admits,
    /// without preferences to read.
    private func knownAddresses(of request: SendRequest) -> [InstallationAddress]? {
        guard let addresses = request.knownAddresses, !request.respectPreferences,
            case .installationIDs(let ids) = request.target.audience, addresses.count < configuration.batchSize,
            Set(ids) == Set(addresses.map(\.installationID)),
            addresses.allSatisfy({ request.target.services?.contains($0.service) ?? true })
        else { return nil }
        return addresses.sorted { $0.installationID < $1.installationID }
    }

    /// A lease given out for a write that stored no new job.
    func dropLease(_ lease: JobLease) {
        handoff.drop(lease)
    }

    /// Every provider the target can reach must take the rendered payload.
    private func validateSizes(_ notification: PushNotification, now: Date) throws(HeraldError) {
        let services: Set<PushService> =
            if case .tokens(let tokens) = notification.target.audience {
                Set(tokens.map(\.service))
            } else {
                notification.target.services ?? Set(PushService.allCases)
            }
        let transports = transports(of: notification.appID)
        guard notification.template != nil || !notification.payload.localizations.isEmpty else {
            return try transports.validate(notification, services: services, now: now)
        }
        // Each language the notification carries must fit, its default words first.
        for language in try Self.languages(of: notification) {
            try transports.validate(language.notification, services: services, now: now)
        }
    }
}

extension PushNotification {
    /// What every log line about the notification carries: its id, app and the request that made it.
    var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["herald.notification": "\(id)", "herald.app": "\(appID)"]
        if let requestID { metadata[LogKey.requestID] = "\(requestID)" }
        return metadata
    }
}
