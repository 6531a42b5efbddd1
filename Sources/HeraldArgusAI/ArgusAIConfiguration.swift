import Configuration
import Foundation
import HeraldAPI
import HeraldCore

/// An app's settings for the ArgusAI dialect (`app.<id>.argus.*`).
public struct ArgusAIConfiguration: Sendable {
    /// The ArgusAI server's public URL (`https://argusai.local`), which event notifications'
    /// `thumbnail_url` is resolved against; without it, events are refused.
    public var publicBaseURL: String?
    /// Registrations a user may make per minute (a burst of this many, refilled over a minute).
    public var registerRateLimit: Int

    /// The default registration limit per user and minute.
    public static let defaultRegisterRateLimit = 20

    /// Creates settings; the defaults have no public URL and 20 registrations per user and minute. A
    /// trailing `/` of the URL is dropped (paths are appended to it).
    public init(publicBaseURL: String? = nil, registerRateLimit: Int = Self.defaultRegisterRateLimit) {
        self.publicBaseURL = publicBaseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.registerRateLimit = registerRateLimit
    }

    /// Reads app `appID`'s ``Settings``.
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let publicBaseURL = try reader.publicBaseURL(
            Settings.publicBaseURL, app: appID, example: "https://argusai.local")
        self.init(
            publicBaseURL: publicBaseURL, registerRateLimit: try reader.value(Settings.registerRateLimit, app: appID))
    }

    /// An app's ArgusAI settings.
    public enum Settings {
        public static let publicBaseURL = Setting<String?>(
            "app.<id>.argus.public_base_url", .url(schemes: ["http", "https"]),
            """
            ArgusAI: the server's public URL (`https://argusai.local`, no query; a trailing `/` is dropped), which \
            events' `thumbnail_url` is resolved against. Without it, events are refused.
            """)
        public static let registerRateLimit = Setting<Int>(
            "app.<id>.argus.register_rate_limit", 1...10_000, default: ArgusAIConfiguration.defaultRegisterRateLimit,
            "ArgusAI: registrations a user may make per minute (a burst of this many, refilled over a minute).")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [publicBaseURL, registerRateLimit]
    }
}

extension ArgusAIRoutes {
    package static func settings(appID: String, reader: ConfigReader) throws -> ArgusAIConfiguration {
        try ArgusAIConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// ArgusAI's settings, by app.
    public var argus: [String: ArgusAIConfiguration] {
        get { settings(of: ArgusAIRoutes.self) }
        set { replace(ArgusAIRoutes.self, with: newValue) }
    }
}
