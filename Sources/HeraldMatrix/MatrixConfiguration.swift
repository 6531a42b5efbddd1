import Configuration
import Foundation
import HeraldAPI
import HeraldCore

/// An app's Matrix push gateway settings: which Matrix app ids (a pusher's `app_id`) it serves, and
/// through which route each one's pushkeys go.
public struct MatrixConfiguration: Sendable, Equatable {
    /// New pushkeys one client address may register a minute, by default.
    public static let defaultNewPushkeysPerMinute = 30

    /// Where a Matrix app id's pushkeys are delivered.
    public enum Route: String, Sendable, Equatable, CaseIterable {
        /// APNs production: the pushkey is an APNs device token of an Apple app.
        case apns
        /// APNs sandbox (development builds).
        case apnsSandbox = "apns_sandbox"
        /// FCM: the pushkey is an FCM registration token of an Android app.
        case fcm

        var service: PushService { self == .fcm ? .fcm : .apns }
        var platform: Platform { self == .fcm ? .android : .ios }
        var environment: PushEnvironment { self == .apnsSandbox ? .sandbox : .production }
    }

    /// The app's Matrix app ids and their routes.
    public var appIDs: [String: Route]
    /// New pushkeys one address may register a minute (0: none are registered on first use).
    public var newPushkeysPerMinute: Int

    /// Creates the settings.
    public init(appIDs: [String: Route] = [:], newPushkeysPerMinute: Int = Self.defaultNewPushkeysPerMinute) {
        self.appIDs = appIDs
        self.newPushkeysPerMinute = newPushkeysPerMinute
    }

    /// Reads app `appID`'s ``Settings``.
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        var appIDs: [String: Route] = [:]
        let key = "app.\(appID).matrix.app_ids"
        for entry in reader.value(Settings.appIDs, app: appID) {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, let route = Route(rawValue: parts[1])
            else {
                throw HeraldError.invalidConfiguration(
                    key,
                    "has '\(entry)', which is not MATRIX_APP_ID=ROUTE with a route of apns, apns_sandbox or fcm "
                        + "(e.g. im.example.app.ios=apns)")
            }
            guard appIDs.updateValue(route, forKey: parts[0]) == nil else {
                throw HeraldError.invalidConfiguration(key, "lists the Matrix app id '\(parts[0])' twice")
            }
        }
        self.init(appIDs: appIDs, newPushkeysPerMinute: try reader.value(Settings.newPushkeysPerMinute, app: appID))
    }

    /// An app's Matrix push gateway settings.
    public enum Settings {
        public static let appIDs = Setting<[String]>(
            "app.<id>.matrix.app_ids", .stringArray,
            """
            Matrix push gateway: the Matrix app ids (a pusher's `app_id`) this app serves, each as \
            `MATRIX_APP_ID=ROUTE` with ROUTE `apns`, `apns_sandbox` or `fcm` (`["im.example.app.ios=apns", \
            "im.example.app.ios.dev=apns_sandbox", "im.example.app.android=fcm"]`). A pushkey of an app id no app \
            lists is answered in `rejected`. Empty: the app takes no Matrix pushes.
            """)
        public static let newPushkeysPerMinute = Setting<Int>(
            "app.<id>.matrix.new_pushkeys_per_minute", 0...100_000, default: defaultNewPushkeysPerMinute,
            """
            Matrix push gateway: pushkeys Herald has never seen that one client address may register a minute \
            (the homeserver's pushers, registered on first use as a device of the app); past it the notify is \
            answered 429 M_LIMIT_EXCEEDED and the homeserver retries later. 0: only registered pushkeys are served.
            """)
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [appIDs, newPushkeysPerMinute]
    }
}

extension MatrixRoutes {
    package static func settings(appID: String, reader: ConfigReader) throws -> MatrixConfiguration {
        try MatrixConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// The Matrix push gateway's settings, by app.
    public var matrix: [String: MatrixConfiguration] {
        get { settings(of: MatrixRoutes.self) }
        set { replace(MatrixRoutes.self, with: newValue) }
    }
}
