import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird

extension ArgusAIRoutes {
    /// `POST /api/v1/push/mobile/preferences`: with `{device_id}` alone, the device's preferences,
    /// created with the defaults when it has none; with preference members too (the document's
    /// "Cross-Platform Preference API" request), creates or updates them as `PUT` does.
    @Sendable package func readPreferences(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let (appID, userID) = try Self.user(context)
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        let deviceID = try ArgusAIRegistration.deviceID(try body.requiredString("device_id"))
        if ArgusAIPreferences.fields.contains(where: body.contains) {
            return try await storePreferences(body, deviceID: deviceID, appID: appID, userID: userID)
        }
        let installation = try await ownDevices(appID: appID, userID: userID, deviceID: deviceID)[0]
        _ = try await store.insertPreferences(
            appID: appID, installationID: installation.id, preferences: Preferences(), now: now())
        let preferences = try await storedPreferences(of: installation)
        return .json(ArgusAIPreferences.json(preferences, of: installation))
    }

    /// `PUT /api/v1/push/mobile/preferences`: changes the members given, for each of the device's
    /// installations. Nothing is stored unless every member is valid.
    @Sendable package func updatePreferences(_ request: Request, context: HeraldRequestContext) async throws -> Response
    {
        let (appID, userID) = try Self.user(context)
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        let deviceID = try ArgusAIRegistration.deviceID(try body.requiredString("device_id"))
        return try await storePreferences(body, deviceID: deviceID, appID: appID, userID: userID)
    }

    /// Applies the members of `body` to the preferences of each of the user's installations of the device.
    private func storePreferences(
        _ body: JSONObjectReader, deviceID: String, appID: String, userID: String
    ) async throws -> Response {
        let timezone = try body.string("timezone", maxLength: 64)
        if let timezone { try InstallationRules.validateTimeZone(timezone) }
        let devices = try await ownDevices(appID: appID, userID: userID, deviceID: deviceID)
        let preferences = try ArgusAIPreferences.apply(body, over: try await storedPreferences(of: devices[0]))
        var answered = devices[0]
        for var device in devices {
            if body.contains("timezone"), device.timezone != timezone {
                let previous = device
                device.timezone = timezone
                guard let updated = try await dispatcher.registrations.update(device, from: previous, now: now()) else {
                    throw HeraldError.notFound("Device")
                }
                device = updated
            }
            guard
                try await store.setPreferences(
                    appID: appID, installationID: device.id, preferences: preferences, now: now())
            else { throw HeraldError.notFound("Device") }
            if device.id == answered.id { answered = device }
        }
        return .json(ArgusAIPreferences.json(preferences, of: answered))
    }

    private func storedPreferences(of installation: Installation) async throws -> Preferences {
        try await store.preferences(appID: installation.appID, installationID: installation.id) ?? Preferences()
    }
}
