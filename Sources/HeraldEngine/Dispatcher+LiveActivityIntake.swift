import Foundation
import HeraldCore

/// A Live Activity push accepted: the activity's id, the notification that carries it, and its revision.
public struct LiveActivityAcceptance: Sendable {
    public internal(set) var activityID: String
    public var notification: PushNotification
    public var revision: Int
    /// Whether it goes at APNs priority 10 (asked for, and within the budget).
    public var highPriority: Bool
    /// false when an idempotency key returned an earlier notification.
    public var created: Bool
}

// Starting, updating and ending Live Activities (docs/live-activities.md): each push is a
// notification like any other — stored with its job, fanned out, retried, expired, in the ledger and
// the webhooks — whose `liveActivity` carries the store-assigned revision.
extension Dispatcher {
    /// Starts an activity by push-to-start on the request's target.
    /// - Throws: `HeraldError` naming the field at fault; `live_activity_exists` for a taken id.
    public func startLiveActivity(
        _ request: LiveActivityRequest, appID: String, inputPushChannel: String? = nil
    ) async throws -> LiveActivityAcceptance {
        let store = try requireLiveActivities()
        let now = self.now()
        let id = request.activityID ?? Identifier.make(now: now)
        var attributes = request.attributes ?? [:]
        attributes[LiveActivityPush.activityIDAttribute] = .string(id)
        let timestamp = LiveActivityRevision.timestamp(after: 0, now: now)
        var budget = LiveActivityBudget(windowStart: nil, count: 0)
        let high = request.highPriority && budget.take(perHour: highPriorityPerHour(appID), now: now)
        let live = LiveActivityPush(
            activityID: id, event: .start, revision: 1, timestamp: timestamp,
            attributesType: request.attributesType ?? "", attributes: attributes, contentState: request.contentState,
            staleDate: request.staleDate, dismissalDate: request.dismissalDate, relevanceScore: request.relevanceScore,
            inputPushToken: request.inputPushToken, inputPushChannel: inputPushChannel, highPriority: high)
        let send = sendRequest(request, target: request.target ?? NotificationTarget(audience: .liveActivity(id)), live)
        // Checked before anything is stored: a refused start leaves no activity behind.
        _ = try notification(for: send, appID: appID, now: now)
        let created = try await store.createLiveActivity(
            LiveActivity(
                appID: appID, id: id, attributesType: live.attributesType, revision: 1, createdAt: now, updatedAt: now))
        guard created else {
            throw HeraldError(
                kind: .conflict, code: "live_activity_exists", message: "A Live Activity '\(id)' exists already.",
                field: "id")
        }
        return try await accept(send, appID: appID, live: live)
    }

    /// Updates or ends an activity: the next revision, to every device taking part.
    /// - Throws: `HeraldError` `not_found`, `live_activity_ended`, or naming the field at fault.
    public func updateLiveActivity(
        _ request: LiveActivityRequest, activityID: String, appID: String
    ) async throws -> LiveActivityAcceptance {
        let store = try requireLiveActivities()
        let now = self.now()
        guard let activity = try await store.liveActivity(appID: appID, id: activityID) else {
            throw HeraldError.notFound("Live Activity")
        }
        var live = LiveActivityPush(
            activityID: activityID, event: request.event, attributesType: activity.attributesType,
            contentState: request.contentState, staleDate: request.staleDate, dismissalDate: request.dismissalDate,
            relevanceScore: request.relevanceScore)
        let send = sendRequest(request, target: NotificationTarget(audience: .liveActivity(activityID)), live)
        _ = try notification(for: send, appID: appID, now: now)
        guard
            let revision = try await store.nextLiveActivityRevision(
                appID: appID, id: activityID, end: request.event == .end,
                dismissalAt: request.dismissalDate.map { Date(timeIntervalSince1970: TimeInterval($0)) },
                wantsHighPriority: request.highPriority, highPriorityPerHour: highPriorityPerHour(appID), now: now)
        else { throw HeraldError.notFound("Live Activity") }
        live.revision = revision.revision
        live.timestamp = revision.timestamp
        live.highPriority = revision.highPriority
        return try await accept(send, appID: appID, live: live)
    }

    /// Broadcasts an update or an end to a channel's subscribers: one push to APNs. The channel
    /// keeps a revision counter and a budget of its own (``LiveActivityChannel/counterID``), so its pushes'
    /// timestamps never go back and its high-priority pushes are counted like an activity's.
    public func broadcastLiveActivity(
        _ request: LiveActivityRequest, channel: LiveActivityChannel
    ) async throws -> LiveActivityAcceptance {
        let store = try requireLiveActivities()
        let now = self.now()
        let counter = channel.counterID
        var live = LiveActivityPush(
            activityID: counter, event: request.event, attributesType: "", contentState: request.contentState,
            staleDate: request.staleDate, dismissalDate: request.dismissalDate, relevanceScore: request.relevanceScore,
            channel: channel.apnsChannelID)
        let target = NotificationTarget(
            audience: .liveActivityChannel(channel.id), apnsEnvironment: channel.environment)
        let send = sendRequest(request, target: target, live)
        _ = try notification(for: send, appID: channel.appID, now: now)
        _ = try await store.createLiveActivity(
            LiveActivity(
                appID: channel.appID, id: counter, attributesType: "", revision: 0, createdAt: now, updatedAt: now))
        guard
            let revision = try await store.nextLiveActivityRevision(
                appID: channel.appID, id: counter, end: false, dismissalAt: nil,
                wantsHighPriority: request.highPriority, highPriorityPerHour: highPriorityPerHour(channel.appID),
                now: now)
        else { throw HeraldError.notFound("Live Activity channel") }
        live.revision = revision.revision
        live.timestamp = revision.timestamp
        live.highPriority = revision.highPriority
        var accepted = try await accept(send, appID: channel.appID, live: live)
        accepted.activityID = channel.id
        return accepted
    }

    /// The transport that manages the app's broadcast channels (APNs), if it has one.
    public func liveActivityChannels(appID: String) -> (any LiveActivityChannels)? {
        transports(of: appID).liveActivityChannels
    }

    private func accept(
        _ send: SendRequest, appID: String, live: LiveActivityPush
    ) async throws -> LiveActivityAcceptance {
        var send = send
        send.liveActivity = live
        send.payload.priority = live.highPriority ? .high : .normal
        guard case .accepted(let notification, let created) = try await submit(send, appID: appID) else {
            throw HeraldError.internal("A Live Activity push is never a dry run.")
        }
        let stored = notification.liveActivity ?? live
        return LiveActivityAcceptance(
            activityID: stored.activityID, notification: notification, revision: stored.revision,
            highPriority: stored.highPriority, created: created)
    }

    private func sendRequest(
        _ request: LiveActivityRequest, target: NotificationTarget, _ live: LiveActivityPush
    ) -> SendRequest {
        var send = SendRequest(
            target: target, payload: request.payload,
            expiration: request.expirationInterval.map { .after(seconds: $0) },
            respectPreferences: false, idempotencyKey: request.idempotencyKey)
        send.liveActivity = live
        send.dialect = "live_activities"
        return send
    }

    private func highPriorityPerHour(_ appID: String) -> Int {
        configuration.liveActivityHighPriorityPerHour[appID] ?? LiveActivityBudget.defaultPerHour
    }

    private func requireLiveActivities() throws(HeraldError) -> any LiveActivityStore {
        guard let store = liveActivityStore else {
            throw HeraldError.unavailable("This store keeps no Live Activities.")
        }
        return store
    }
}
