import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird

/// An installation's Live Activity tokens (docs/live-activities.md): its push-to-start token per
/// attributes type, and its part in each activity with the activity's push token. The client key,
/// the installation's user, or the server key.
struct LiveActivityTokenRoutes: Sendable {
    let store: any InstallationRegistry & LiveActivityStore
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.listOperation, use: list)
        table.on(group, prefix: prefix, Self.setPushToStartOperation, use: setPushToStart)
        table.on(group, prefix: prefix, Self.removePushToStartOperation, use: removePushToStart)
        table.on(group, prefix: prefix, Self.setActivityOperation, use: setActivity)
        table.on(group, prefix: prefix, Self.removeActivityOperation, use: removeActivity)
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        let tokens = try await store.liveActivityTokens(installationID: installation.id)
        let starts = tokens.filter { $0.activityID == nil }.map { token -> JSONValue in
            .object([
                "attributes_type": .string(token.attributesType),
                "token_suffix": token.tokenSuffix.map(JSONValue.string) ?? .null,
                "updated_at": InstallationView.timestamp(token.updatedAt),
            ])
        }
        let activities = tokens.compactMap { token -> JSONValue? in
            guard let id = token.activityID else { return nil }
            return .object([
                "activity_id": .string(id), "attributes_type": .string(token.attributesType),
                "token_suffix": token.tokenSuffix.map(JSONValue.string) ?? .null,
                "updated_at": InstallationView.timestamp(token.updatedAt),
            ])
        }
        return .json(.object(["push_to_start": .array(starts), "activities": .array(activities)]))
    }

    @Sendable func setPushToStart(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        let type = try Self.attributesType(context)
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        try body.rejectUnknown(allowed: ["token"])
        guard installation.service == .apns else {
            throw HeraldError.invalidValue(
                "token", code: "unsupported_service",
                "Push-to-start tokens are APNs tokens: this installation delivers through \(installation.service.rawValue)."
            )
        }
        let token = try body.requiredString("token")
        try InstallationRules.validateAPNsToken(token, field: "token")
        let now = now()
        try await store.setPushToStartToken(
            installationID: installation.id, attributesType: type, token: token, service: .apns, now: now)
        return .json(
            .object([
                "attributes_type": .string(type), "token_suffix": .string(String(token.suffix(8))),
                "updated_at": InstallationView.timestamp(now),
            ]))
    }

    @Sendable func removePushToStart(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        guard
            try await store.removePushToStartToken(
                installationID: installation.id, attributesType: try Self.attributesType(context))
        else { throw HeraldError.notFound("Push-to-start token") }
        return Response(status: .noContent)
    }

    @Sendable func setActivity(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        guard let id = context.parameters.get("activity_id") else { throw HeraldError.notFound("Live Activity") }
        try LiveActivityRequest.validateID(id, field: "activity_id")
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        try body.rejectUnknown(allowed: ["token", "attributes_type"])
        guard let type = try body.string("attributes_type", maxLength: LiveActivityRequest.maxTypeLength) else {
            throw HeraldError.missingField("attributes_type")
        }
        let token = try body.string("token")
        if let token {
            guard installation.service == .apns else {
                throw HeraldError.invalidValue(
                    "token", code: "unsupported_service",
                    "Activity tokens are APNs tokens; a \(installation.service.rawValue) installation takes part without one."
                )
            }
            try InstallationRules.validateAPNsToken(token, field: "token")
        } else if installation.service == .apns {
            throw HeraldError.missingField("token")
        }
        let now = now()
        try await store.setActivityToken(
            appID: installation.appID, installationID: installation.id, activityID: id, attributesType: type,
            token: token, service: installation.service, now: now)
        return .json(
            .object([
                "activity_id": .string(id), "attributes_type": .string(type),
                "token_suffix": token.map { .string(String($0.suffix(8))) } ?? .null,
                "updated_at": InstallationView.timestamp(now),
            ]))
    }

    @Sendable func removeActivity(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        guard let id = context.parameters.get("activity_id"),
            try await store.removeActivityToken(installationID: installation.id, activityID: id)
        else { throw HeraldError.notFound("Live Activity token") }
        return Response(status: .noContent)
    }

    /// The installation named in the path, if the caller may change it; another user's is the same
    /// 404 as a missing one.
    private func owned(_ context: HeraldRequestContext) async throws -> Installation {
        let principal = try context.principal()
        guard let id = context.parameters.get("id"), id.count <= NotificationTarget.maxInstallationIDLength,
            let installation = try await store.installation(appID: principal.appID, id: id),
            principal.userID == nil || installation.userID == principal.userID
        else { throw HeraldError.notFound("Installation") }
        return installation
    }

    private static func attributesType(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        guard let type = context.parameters.get("attributes_type"), !type.isEmpty,
            type.count <= LiveActivityRequest.maxTypeLength
        else { throw .notFound("Push-to-start token") }
        return type
    }
}
