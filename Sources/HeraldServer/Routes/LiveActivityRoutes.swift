import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging

/// Live Activities from the app's server: `/v1/live-activities` (server key only;
/// docs/live-activities.md): start one by push-to-start, read it, update or end it.
struct LiveActivityRoutes: Sendable {
    let store: any LiveActivityStore
    let dispatcher: Dispatcher
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.startOperation, use: start)
        table.on(group, prefix: prefix, Self.readOperation, use: read)
        table.on(group, prefix: prefix, Self.updateOperation, use: update)
        table.on(group, prefix: prefix, Self.createChannelOperation, use: createChannel)
        table.on(group, prefix: prefix, Self.listChannelsOperation, use: listChannels)
        table.on(group, prefix: prefix, Self.deleteChannelOperation, use: deleteChannel)
        table.on(group, prefix: prefix, Self.broadcastOperation, use: broadcast)
    }

    /// Creates a broadcast channel at APNs and keeps Herald's record of it.
    @Sendable func createChannel(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        try body.rejectUnknown(allowed: ["id", "message_storage_policy", "environment"])
        let now = now()
        let id = try LiveActivityRequest.identifier(body, "id") ?? Identifier.make(now: now)
        let policy = try body.enumeration("message_storage_policy", as: LiveActivityChannel.StoragePolicy.self) ?? .none
        let environment = try body.enumeration("environment", as: PushEnvironment.self) ?? .production
        guard try await store.liveActivityChannel(appID: appID, id: id) == nil else { throw Self.channelExists(id) }
        let service = try channels(appID)
        let apnsID = try await service.createChannel(storagePolicy: policy, environment: environment)
        let channel = LiveActivityChannel(
            appID: appID, id: id, apnsChannelID: apnsID, storagePolicy: policy, environment: environment, createdAt: now
        )
        guard try await store.createLiveActivityChannel(channel) else {
            // Another request took the id meanwhile: the channel just made at APNs is not kept.
            try? await service.deleteChannel(apnsID, environment: environment)
            throw Self.channelExists(id)
        }
        context.logger.info("live activity channel created", metadata: ["herald.channel": "\(id)"])
        return .json(.object(Self.json(channel)), status: .created)
    }

    @Sendable func listChannels(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let channels = try await store.liveActivityChannels(appID: appID)
        return .json(ListQuery.page(channels.map { .object(Self.json($0)) }, next: nil))
    }

    /// Deletes the channel at APNs (its subscribers' activities stop getting broadcasts), then Herald's record.
    @Sendable func deleteChannel(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let channel = try await channel(context)
        try await channels(channel.appID).deleteChannel(channel.apnsChannelID, environment: channel.environment)
        guard try await store.deleteLiveActivityChannel(appID: channel.appID, id: channel.id) else {
            throw HeraldError.notFound("Live Activity channel")
        }
        return Response(status: .noContent)
    }

    /// One broadcast push to every activity subscribed to the channel.
    @Sendable func broadcast(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let channel = try await channel(context)
        let body = try LiveActivityRequest(
            parsing: try await request.jsonBody(limit: maxBodyBytes), start: false,
            idempotencyKeyHeader: request.headers[.idempotencyKey])
        let accepted = try await dispatcher.broadcastLiveActivity(body, channel: channel)
        return .json(.object(Self.acceptance(accepted)), status: accepted.created ? .accepted : .ok)
    }

    private func channel(_ context: HeraldRequestContext) async throws -> LiveActivityChannel {
        let appID = try Self.server(context)
        guard let id = context.parameters.get("id"), (try? LiveActivityRequest.validateID(id, field: "id")) != nil,
            let channel = try await store.liveActivityChannel(appID: appID, id: id)
        else { throw HeraldError.notFound("Live Activity channel") }
        return channel
    }

    private func channels(_ appID: String) throws(HeraldError) -> any LiveActivityChannels {
        guard let service = dispatcher.liveActivityChannels(appID: appID), service.isConfigured else {
            throw HeraldError(
                kind: .conflict, code: "apns_not_configured",
                message: "Broadcast channels need the app's APNs credentials (app.\(appID).apns).")
        }
        return service
    }

    private static func channelExists(_ id: String) -> HeraldError {
        HeraldError(
            kind: .conflict, code: "live_activity_channel_exists", message: "A channel '\(id)' exists already.",
            field: "id")
    }

    static func json(_ channel: LiveActivityChannel) -> [String: JSONValue] {
        [
            "id": .string(channel.id), "apns_channel_id": .string(channel.apnsChannelID),
            "message_storage_policy": .string(channel.storagePolicy.rawValue),
            "environment": .string(channel.environment.rawValue),
            "created_at": InstallationView.timestamp(channel.createdAt),
        ]
    }

    @Sendable func start(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let body = try LiveActivityRequest(
            parsing: try await request.jsonBody(limit: maxBodyBytes), start: true,
            idempotencyKeyHeader: request.headers[.idempotencyKey])
        var channel: String?
        if let name = body.inputPushChannel {
            guard let found = try await store.liveActivityChannel(appID: appID, id: name) else {
                throw HeraldError.invalidValue(
                    "input_push_channel", code: "unknown_channel", "No Live Activity channel '\(name)'.")
            }
            channel = found.apnsChannelID
        }
        let accepted = try await dispatcher.startLiveActivity(body, appID: appID, inputPushChannel: channel)
        return .json(.object(Self.acceptance(accepted)), status: accepted.created ? .accepted : .ok)
    }

    @Sendable func read(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let id = try Self.activityID(context)
        guard let activity = try await store.liveActivity(appID: appID, id: id) else {
            throw HeraldError.notFound("Live Activity")
        }
        return .json(.object(Self.json(activity)))
    }

    @Sendable func update(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let id = try Self.activityID(context)
        let body = try LiveActivityRequest(
            parsing: try await request.jsonBody(limit: maxBodyBytes), start: false,
            idempotencyKeyHeader: request.headers[.idempotencyKey])
        let accepted = try await dispatcher.updateLiveActivity(body, activityID: id, appID: appID)
        return .json(.object(Self.acceptance(accepted)), status: accepted.created ? .accepted : .ok)
    }

    static func acceptance(_ accepted: LiveActivityAcceptance) -> [String: JSONValue] {
        [
            "id": .string(accepted.activityID), "notification_id": .string(accepted.notification.id),
            "revision": .number(JSONNumber(accepted.revision)),
            "priority": .string(accepted.highPriority ? "high" : "normal"),
            "status": .string(accepted.notification.status.rawValue),
        ]
    }

    static func json(_ activity: LiveActivity) -> [String: JSONValue] {
        [
            "id": .string(activity.id), "attributes_type": .string(activity.attributesType),
            "state": .string(activity.endedAt == nil ? "active" : "ended"),
            "revision": .number(JSONNumber(activity.revision)), "devices": .number(JSONNumber(activity.devices)),
            "ended_at": InstallationView.timestamp(activity.endedAt),
            "dismissal_at": InstallationView.timestamp(activity.dismissalAt),
            "created_at": InstallationView.timestamp(activity.createdAt),
            "updated_at": InstallationView.timestamp(activity.updatedAt),
        ]
    }

    /// The path's activity id; one that could not exist is the same 404 as a missing one.
    static func activityID(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        guard let id = context.parameters.get("id"), (try? LiveActivityRequest.validateID(id, field: "id")) != nil
        else { throw .notFound("Live Activity") }
        return id
    }

    /// Live Activities are sent with the server key.
    static func server(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        try context.requireServerKey("Live Activities are started and updated with the app's server key.")
    }
}
