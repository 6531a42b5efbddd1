import Foundation
import HeraldAPI
import HeraldCore
import Hummingbird

/// Per-installation preferences: `/v1/installations/{id}/preferences` (server key, or the
/// installation's own user).
struct PreferenceRoutes: Sendable {
    let store: any DispatchStore
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.readOperation, use: read)
        table.on(group, prefix: prefix, Self.replaceOperation, use: replace)
    }

    @Sendable func read(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        let stored = try await store.preferences(appID: installation.appID, installationID: installation.id)
        return .json((stored ?? Preferences()).json)
    }

    @Sendable func replace(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let body = try await request.jsonBody(limit: maxBodyBytes)
        let preferences = try Preferences(parsing: body)
        if let zone = preferences.quietHours?.timezone {
            try InstallationRules.validateTimeZone(zone, field: "quiet_hours.timezone")
        }
        let installation = try await owned(context)
        guard
            try await store.setPreferences(
                appID: installation.appID, installationID: installation.id, preferences: preferences, now: now())
        else { throw HeraldError.notFound("Installation") }
        return .json(preferences.json)
    }

    private func owned(_ context: HeraldRequestContext) async throws -> Installation {
        let principal = try context.principal()
        if case .client = principal {
            throw HeraldError.forbidden("Preferences take the server key or the installation's user.")
        }
        guard let id = context.parameters.get("id"), id.count <= 64,
            let installation = try await store.installation(appID: principal.appID, id: id),
            principal.userID == nil || installation.userID == principal.userID
        else { throw HeraldError.notFound("Installation") }
        return installation
    }
}
