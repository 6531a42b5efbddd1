import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging

extension ArgusAIRoutes {
    /// `GET /api/v1/devices`: the caller's registered devices, oldest first, `{"devices": [...]}`.
    @Sendable package func listDevices(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let (appID, userID) = try Self.user(context)
        var devices: [Installation] = []
        var after: String?
        while true {
            let page = try await store.installations(
                appID: appID, filter: InstallationFilter(userID: userID),
                page: PageRequest(after: after, limit: PageRequest.maxLimit))
            devices += page
            guard page.count == PageRequest.maxLimit, let last = page.last else { break }
            after = last.id
        }
        return .json(.object(["devices": .array(devices.map(ArgusAIDeviceView.device))]))
    }

    /// `PATCH /api/v1/devices/{id}` `{"name": "Kitchen iPad"}`: names the caller's device (`null`
    /// clears the name).
    @Sendable package func renameDevice(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        try body.rejectUnknown(allowed: ["name"])
        guard body.contains("name") else { throw HeraldError.missingField("name") }
        let name = try body.string("name", maxLength: ArgusAIDeviceView.maxNameLength)
        var installation = try await ownDevice(context)
        let previous = installation
        installation.attributes[ArgusAIDeviceView.nameAttribute] = name.map(JSONValue.string)
        guard let updated = try await dispatcher.registrations.update(installation, from: previous, now: now()) else {
            throw HeraldError.notFound("Device")
        }
        return .json(ArgusAIDeviceView.device(updated))
    }

    /// `DELETE /api/v1/devices/{id}`: revokes the caller's device; it receives nothing more.
    @Sendable package func revokeDevice(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let installation = try await ownDevice(context)
        guard try await dispatcher.registrations.delete(installation) else { throw HeraldError.notFound("Device") }
        context.logger.info("argusai device revoked", metadata: ["herald.installation": "\(installation.id)"])
        return Response(status: .noContent)
    }

    /// The caller's installation named by the path's `id`; anyone else's is the same `404` as a
    /// missing one.
    private func ownDevice(_ context: HeraldRequestContext) async throws -> Installation {
        let (appID, userID) = try Self.user(context)
        guard let id = context.parameters.get("id"), id.count <= 64,
            let installation = try await store.installation(appID: appID, id: id), installation.userID == userID
        else { throw HeraldError.notFound("Device") }
        return installation
    }
}
