import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging

/// The ArgusAI dialect (its mobile push architecture document): device registration, token refresh
/// and removal, per-device preferences and the device list under `/api/v1` for the app's users (user
/// JWT), and camera-event intake for the ArgusAI server (server key). A thin translation onto native
/// installations, preferences and notifications: every rule is the engine's.
package struct ArgusAIRoutes: Dialect {
    package static let settingsKey = "argus"

    package let store: any DispatchStore & EventStore
    package let apps: AppDirectory
    package let dispatcher: Dispatcher
    package let settings: [String: ArgusAIConfiguration]
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    package init(context: DialectContext, settings: [String: ArgusAIConfiguration]) {
        store = context.store
        apps = context.apps
        dispatcher = context.dispatcher
        self.settings = settings
        maxBodyBytes = context.maxBodyBytes
        now = context.now
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        let group = router.group("api/v1").add(middleware: BearerAuthenticator(apps: apps))
        let prefix = Self.prefix
        table.on(group, prefix: prefix, Self.registerOperation, use: registerDevice)
        table.on(group, prefix: prefix, Self.updateTokenOperation, use: updateToken)
        table.on(group, prefix: prefix, Self.deleteTokenOperation, use: deleteToken)
        table.on(group, prefix: prefix, Self.readPreferencesOperation, use: readPreferences)
        table.on(group, prefix: prefix, Self.updatePreferencesOperation, use: updatePreferences)
        table.on(group, prefix: prefix, Self.notifyEventOperation, use: notifyEvent)
        table.on(group, prefix: prefix, Self.listDevicesOperation, use: listDevices)
        table.on(group, prefix: prefix, Self.renameDeviceOperation, use: renameDevice)
        table.on(group, prefix: prefix, Self.revokeDeviceOperation, use: revokeDevice)
    }

    package func settings(_ appID: String) -> ArgusAIConfiguration { settings[appID] ?? ArgusAIConfiguration() }

    /// `POST /api/v1/push/mobile/register`: creates or updates the installation identified by
    /// (`device_id`, `push_service`) for the calling user, and gives it default preferences unless it
    /// has some. A device registered by another user before moves to the caller (a phone signed into
    /// another account) and starts from default preferences: the previous account's choices stay
    /// behind. Always `201`, as the document answers.
    @Sendable package func registerDevice(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let (appID, userID) = try Self.user(context)
        let now = self.now()
        // The allowance lives in the store: every node sharing it counts the same registrations.
        if case .limited(let retryAfter) = try await store.acquireToken(
            bucket: "argusai.register:\(appID):\(userID)", capacity: settings(appID).registerRateLimit, per: 60,
            now: now)
        {
            let error = HeraldError(
                kind: .tooManyRequests, code: "rate_limited",
                message: "Too many registrations; try again in \(retryAfter) seconds.")
            var response = try error.response(from: request, context: context)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        let parsed = try ArgusAIRegistration(json: try await request.jsonBody(limit: maxBodyBytes), userID: userID)
        var registration = parsed.registration
        let previous = try await store.installations(appID: appID, deviceID: parsed.deviceID)
            .first { $0.service == registration.service }
        var channels = previous?.channels ?? []
        if !channels.contains(ArgusAIEvent.channel) { channels.append(ArgusAIEvent.channel) }
        registration.channels = channels
        if let name = parsed.deviceName {
            var attributes = previous?.attributes ?? [:]
            attributes[ArgusAIDeviceView.nameAttribute] = .string(name)
            try InstallationRules.validateAttributes(attributes)
            registration.attributes = attributes
        }
        let result = try await dispatcher.registrations.register(
            registration, appID: appID, now: now, previous: previous)
        let installation = result.installation
        let defaults = Preferences()
        let preferencesCreated: Bool
        if !result.created, let owner = previous?.userID, owner != userID {
            preferencesCreated = try await store.setPreferences(
                appID: appID, installationID: installation.id, preferences: defaults, now: now)
        } else {
            preferencesCreated = try await store.insertPreferences(
                appID: appID, installationID: installation.id, preferences: defaults, now: now)
        }
        context.logger.info(
            "argusai device registered",
            metadata: [
                "herald.installation": "\(installation.id)",
                "herald.token": "\(SecretFingerprint.of(installation.token.identity))",
                "herald.created": "\(result.created)",
            ])
        return .json(
            ArgusAIDeviceView.registration(installation, preferencesCreated: preferencesCreated), status: .created)
    }

    /// `PUT /api/v1/push/mobile/tokens/{device_id}`: a new token for the caller's device. The token
    /// goes to the device's installation whose service takes it (the most recently updated first),
    /// which becomes valid again with its failure count reset, even when the token is the same.
    @Sendable package func updateToken(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let (appID, userID) = try Self.user(context)
        let deviceID = try ArgusAIRegistration.deviceID(context.parameters.get("device_id") ?? "")
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        let token = try body.requiredString("device_token")
        try ArgusAIRegistration.validateTokenCharacters(token)
        let devices = try await ownDevices(appID: appID, userID: userID, deviceID: deviceID)
        var chosen: Installation?
        var refusal: HeraldError?
        for device in devices {
            do throws(HeraldError) {
                try InstallationRules.validateDeviceToken(
                    token, service: device.service, platform: device.platform, field: "device_token")
                chosen = device
                break
            } catch {
                refusal = refusal ?? error
            }
        }
        guard var installation = chosen else { throw refusal ?? HeraldError.notFound("Device") }
        let previous = installation
        installation.token = .device(token)
        installation.valid = true
        installation.invalidatedAt = nil
        installation.failureCount = 0
        installation.lastSeenAt = now()
        guard let updated = try await dispatcher.registrations.update(installation, from: previous, now: now()) else {
            throw HeraldError.notFound("Device")
        }
        context.logger.info(
            "argusai token updated",
            metadata: [
                "herald.installation": "\(updated.id)", "herald.token": "\(SecretFingerprint.of(token))",
            ])
        return .json(
            .object([
                // The document's answer: true once the update succeeded, whether or not the token differed.
                "id": .string(updated.id), "device_token_updated": .bool(true),
                "updated_at": ArgusAIDeviceView.timestamp(updated.updatedAt),
            ]))
    }

    /// `DELETE /api/v1/push/mobile/tokens/{device_id}`: unregisters the caller's device (each of its
    /// services).
    @Sendable package func deleteToken(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let (appID, userID) = try Self.user(context)
        let deviceID = try ArgusAIRegistration.deviceID(context.parameters.get("device_id") ?? "")
        for device in try await ownDevices(appID: appID, userID: userID, deviceID: deviceID) {
            _ = try await dispatcher.registrations.delete(device)
            context.logger.info("argusai device unregistered", metadata: ["herald.installation": "\(device.id)"])
        }
        return Response(status: .noContent)
    }

    /// The caller's installations with this device id, most recently updated first; another user's
    /// device is the same `404` as a missing one.
    package func ownDevices(appID: String, userID: String, deviceID: String) async throws -> [Installation] {
        let devices = try await store.installations(appID: appID, deviceID: deviceID).filter { $0.userID == userID }
        guard !devices.isEmpty else { throw HeraldError.notFound("Device") }
        return devices.sorted { $0.updatedAt > $1.updatedAt }
    }

    /// The calling user; the dialect's device routes take a user token only.
    package static func user(_ context: HeraldRequestContext) throws(HeraldError) -> (appID: String, userID: String) {
        guard case .user(let appID, let userID) = try context.principal() else {
            throw .forbidden("This route takes a user token (JWT): devices belong to users.")
        }
        return (appID, userID)
    }
}

extension ArgusAIRoutes {
    package static let name = "ArgusAI"
    package static let settingsTitle = "ArgusAI dialect"
    package static var declaredSettings: [any DeclaredSetting] { ArgusAIConfiguration.Settings.all }
    package static var routesSummary: String { "/api/v1/push/mobile/…" }

    package static func status(_ settings: ArgusAIConfiguration?) -> (enabled: Bool, detail: String) {
        let argus = settings ?? ArgusAIConfiguration()
        return (
            true,
            (argus.publicBaseURL.map { "public URL \($0)" } ?? "no public_base_url: events refused")
                + ", \(argus.registerRateLimit) registrations per user and minute"
        )
    }
}
