import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging

/// The native installation registry: `/v1/installations`.
struct InstallationRoutes: Sendable {
    let store: any InstallationRegistry
    /// Tells transports with provider-side endpoints (SNS) about changes.
    let dispatcher: Dispatcher
    /// The client key's and user tokens' allowance of registrations.
    let limit: RegistrationLimit
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.createOperation, use: create)
        table.on(group, prefix: prefix, Self.listOperation, use: list)
        table.on(group, prefix: prefix, Self.readOperation, use: read)
        table.on(group, prefix: prefix, Self.updateOperation, use: update)
        table.on(group, prefix: prefix, Self.deleteOperation, use: delete)
    }

    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let principal = try context.principal()
        let caller: RegistrationLimit.Caller? =
            switch principal {
            case .client: .address(context.clientAddress)
            case .user(_, let userID): .user(userID)
            default: nil
            }
        if let caller, let retryAfter = try await limit.spend(appID: principal.appID, by: caller, now: now()) {
            var response = try RegistrationLimit.exceeded(retryAfter: retryAfter).response(
                from: request, context: context)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        var registration = try InstallationRegistration(json: try await request.jsonBody(limit: maxBodyBytes))
        if let userID = principal.userID {
            try Self.requireSameUser(registration.userID, as: userID)
            registration.userID = userID
            try await requireDeviceFree(registration, for: userID, appID: principal.appID)
        }
        let result = try await dispatcher.registrations.register(registration, appID: principal.appID, now: now())
        context.logger.info(
            "installation registered",
            metadata: [
                "herald.installation": "\(result.installation.id)",
                "herald.token": "\(SecretFingerprint.of(result.installation.token.identity))",
                "herald.created": "\(result.created)",
            ])
        return .json(
            InstallationView.json(result.installation, token: .full), status: result.created ? .created : .ok)
    }

    /// A user may not register a device id that another user's installation holds with another
    /// token: that installation is neither shown nor changed, and the registration is refused as
    /// `PATCH` refuses a device id in use. The same token is the device itself, signed into another
    /// account: it moves to this user. (Keys move an installation between users as it is; the
    /// previous owner deleting it frees the device id.)
    /// - Throws: `HeraldError` `device_id_in_use` (409).
    private func requireDeviceFree(
        _ registration: InstallationRegistration, for userID: String, appID: String
    )
        async throws
    {
        guard let deviceID = registration.deviceID else { return }
        let held = try await store.installations(appID: appID, deviceID: deviceID)
        if held.contains(where: {
            $0.service == registration.service && $0.userID != nil && $0.userID != userID
                && $0.token != registration.token
        }) {
            throw HeraldError(
                kind: .conflict, code: "device_id_in_use",
                message: "Another installation of this service already has this device_id.", field: "device_id")
        }
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let principal = try context.principal()
        if case .client = principal {
            throw HeraldError.forbidden("The client key may only register, update and delete installations.")
        }
        let query = try ListQuery(request.uri.queryParameters, declared: Self.listParameters)
        var filter = InstallationFilter(
            userID: query.string("user_id"), channel: query.string("channel"),
            platform: query.enumeration("platform", as: Platform.self),
            service: query.enumeration("service", as: PushService.self), valid: query.bool("valid"))
        if let userID = principal.userID {
            // A user lists only their own installations, whatever user_id the query names.
            if let asked = filter.userID, asked != userID { return .json(ListQuery.page([], next: nil)) }
            filter.userID = userID
        }
        let page = try query.page()
        var installations = try await store.installations(
            appID: principal.appID, filter: filter, page: PageRequest(after: page.after, limit: page.limit + 1))
        var next: String?
        if installations.count > page.limit {
            installations.removeLast()
            next = installations.last.map { ListQuery.cursor(after: $0.id) }
        }
        return .json(ListQuery.page(installations.map { InstallationView.json($0, token: .suffix) }, next: next))
    }

    @Sendable func read(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let principal = try context.principal()
        if case .client = principal {
            throw HeraldError.forbidden("The client key may only register, update and delete installations.")
        }
        let installation = try await owned(context)
        return .json(InstallationView.json(installation, token: .full))
    }

    @Sendable func update(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let principal = try context.principal()
        let changes = try InstallationChanges(json: try await request.jsonBody(limit: maxBodyBytes))
        var installation = try await owned(context)
        let previous = installation
        if let userID = principal.userID { try Self.requireSameUser(changes.profile.userID, as: userID) }
        try changes.apply(to: &installation)
        if let token = try changes.resolvedToken(for: installation.service, platform: installation.platform),
            token != installation.token
        {
            // A new token is a live token: the installation is deliverable again.
            installation.token = token
            installation.valid = true
            installation.invalidatedAt = nil
            installation.failureCount = 0
        }
        if case .server = principal {} else { installation.lastSeenAt = now() }
        guard let updated = try await dispatcher.registrations.update(installation, from: previous, now: now()) else {
            throw HeraldError.notFound("Installation")
        }
        return .json(InstallationView.json(updated, token: .full))
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await owned(context)
        guard try await dispatcher.registrations.delete(installation) else {
            throw HeraldError.notFound("Installation")
        }
        context.logger.info("installation deleted", metadata: ["herald.installation": "\(installation.id)"])
        return Response(status: .noContent)
    }

    /// The installation named in the path, if the caller may see it; a user's view of another
    /// user's installation is the same 404 as a missing one.
    private func owned(_ context: HeraldRequestContext) async throws -> Installation {
        let principal = try context.principal()
        guard let id = context.parameters.get("id"), id.count <= 64,
            let installation = try await store.installation(appID: principal.appID, id: id),
            principal.userID == nil || installation.userID == principal.userID
        else { throw HeraldError.notFound("Installation") }
        return installation
    }

    private static func requireSameUser(_ requested: String?, as userID: String) throws(HeraldError) {
        if let requested, requested != userID {
            throw .invalidValue("user_id", code: "user_mismatch", "A user may only register devices as themselves.")
        }
    }
}
