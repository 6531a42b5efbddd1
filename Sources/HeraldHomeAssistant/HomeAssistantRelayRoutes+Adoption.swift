import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import Logging

extension HomeAssistantRelayRoutes {
    /// The Companion apps' ids on Android (`.minimal`, `.debug` and other variants share the prefix).
    package static let androidCompanionPrefix = "io.homeassistant.companion.android"
    /// The Companion app's id on Apple platforms (iOS, and macOS through Catalyst; `.dev` and other
    /// variants share the prefix).
    package static let appleCompanionPrefix = "io.robbie.HomeAssistant"

    /// The platform of a Companion app id; an app id that is neither Companion app's follows the
    /// token's shape (an APNs token means an Apple device).
    package static func platform(companionAppID: String, token: String) -> Platform {
        if companionAppID.hasPrefix(androidCompanionPrefix) { return .android }
        if companionAppID.hasPrefix(appleCompanionPrefix) {
            return companionAppID.lowercased().contains("mac") ? .macos : .ios
        }
        return (try? InstallationRules.validateAPNsToken(token)) != nil ? .ios : .android
    }

    /// The services that can carry `token` to `platform`, best first: an APNs token on an Apple
    /// device goes to APNs, any other token to FCM (the Companion app for iOS registers an FCM
    /// token too); either can also go through AWS SNS.
    package static func services(platform: Platform, token: String) -> [PushService] {
        let apnsShaped = (try? InstallationRules.validateAPNsToken(token)) != nil
        if platform.isApple { return apnsShaped ? [.apns, .sns] : [.fcm] }
        return [.fcm, .sns]
    }

    /// The relay-enabled app that takes a push token it has never seen from this Companion app: the
    /// only one, or the one whose `app_ids` lists it.
    /// - Throws: `HomeAssistantRelayFailure` when no app takes it.
    package func adoptingApp(companionAppID: String) throws -> (id: String, settings: HomeAssistantRelayConfiguration) {
        let app =
            apps.count == 1 ? apps[0] : apps.first { $0.settings.companionAppIDs.contains(companionAppID) }
        guard let app else { throw HomeAssistantRelayFailure.unknownCompanionApp(companionAppID) }
        guard !app.settings.registeredOnly else { throw HomeAssistantRelayFailure.unknownToken() }
        return app
    }

    /// Registers a push token Herald has never seen from what Home Assistant sends, as the
    /// document's relay forwards any token: the app from ``adoptingApp(companionAppID:)``, the platform
    /// from the Companion app id, the device id from the webhook id, the service from the token's
    /// shape and the app's providers. Spends one of the address's new tokens of the minute.
    /// - Throws: `HomeAssistantRelayFailure` when the app, the token or the allowance refuses it.
    package func adopt(_ push: HomeAssistantPushRequest, address: String, logger: Logger) async throws -> Match {
        let app = try adoptingApp(companionAppID: push.registration.appID)
        let token = push.pushToken
        let platform = Self.platform(companionAppID: push.registration.appID, token: token)
        let candidates = Self.services(platform: platform, token: token)
        guard let service = candidates.first(where: { dispatcher.hasTransport(appID: app.id, service: $0) }) else {
            let names = candidates.map(\.rawValue).joined(separator: " or ")
            throw HomeAssistantRelayFailure.providerMisconfigured(
                "The app has no \(names) transport configured", appID: app.id)
        }
        do throws(HeraldError) {
            try InstallationRules.validateDeviceToken(token, service: service, platform: platform, field: "push_token")
        } catch {
            throw HomeAssistantRelayFailure.invalidRequest(error)
        }
        if app.settings.newTokensPerMinute > 0 {
            let decision = try await store.acquireToken(
                bucket: "ha-new-tokens:\(app.id):address:\(address)", capacity: app.settings.newTokensPerMinute,
                per: 60, now: now())
            if case .limited(let retryAfter) = decision {
                throw HomeAssistantRelayFailure.tooManyNewTokens(
                    perMinute: app.settings.newTokensPerMinute, retryAfter: retryAfter)
            }
        }
        func short(_ text: String?) -> String? {
            guard let text, !text.isEmpty, text.utf8.count <= InstallationRules.maxShortText else { return nil }
            return text
        }
        let registration = InstallationRegistration(
            platform: platform, service: service,
            environment: service == .apns || (service == .sns && platform.isApple)
                ? app.settings.apnsEnvironment : .production,
            token: .device(token),
            profile: InstallationProfile(
                deviceID: short(push.registration.webhookID), appVersion: short(push.registration.appVersion),
                osVersion: short(push.registration.osVersion),
                // The Companion app id is the app's bundle id: the APNs topic.
                bundleID: platform.isApple ? short(push.registration.appID) : nil))
        let installation = try await dispatcher.registrations.register(registration, appID: app.id, now: now())
            .installation
        // It follows the relay's APNs environment: a reload that changes it moves the installation.
        try await store.markRelayAdopted(appID: app.id, installationID: installation.id)
        logger.info(
            "home assistant push token registered",
            metadata: [
                "herald.installation": "\(installation.id)", "herald.app": "\(app.id)",
                "herald.service": "\(service.rawValue)", "herald.token": "\(SecretFingerprint.of(token))",
            ])
        return Match(installation: installation, settings: app.settings)
    }
}
