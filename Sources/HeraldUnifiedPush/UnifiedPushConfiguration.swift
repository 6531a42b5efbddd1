import Configuration
import Foundation
import HeraldAPI
import HeraldCore

/// An app's UnifiedPush (RFC 8030) settings.
public struct UnifiedPushConfiguration: Sendable, Equatable {
    /// Messages one endpoint accepts a minute, by default.
    public static let defaultMessagesPerMinute = 60

    /// The server's public URL that endpoint URLs start with; nil: the request's own `Host`, over http.
    public var publicBaseURL: String?
    /// Messages one endpoint accepts a minute (a burst of this many, refilled over a minute).
    public var messagesPerMinute: Int

    /// Creates the settings.
    public init(publicBaseURL: String? = nil, messagesPerMinute: Int = Self.defaultMessagesPerMinute) {
        self.publicBaseURL = publicBaseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.messagesPerMinute = messagesPerMinute
    }

    /// Reads app `appID`'s ``Settings``.
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let publicBaseURL = try reader.publicBaseURL(
            Settings.publicBaseURL, app: appID, example: "https://push.example.com")
        self.init(
            publicBaseURL: publicBaseURL, messagesPerMinute: try reader.value(Settings.messagesPerMinute, app: appID))
    }

    /// An app's UnifiedPush settings.
    public enum Settings {
        public static let publicBaseURL = Setting<String?>(
            "app.<id>.unifiedpush.public_base_url", .url(schemes: ["http", "https"]),
            """
            UnifiedPush: the server's public URL (`https://push.example.com`, no query; a trailing `/` is dropped) \
            that push endpoint URLs start with. Without it, an endpoint's URL is built from the request's `Host` \
            header over http: set it behind a TLS proxy.
            """)
        public static let messagesPerMinute = Setting<Int>(
            "app.<id>.unifiedpush.messages_per_minute", 1...100_000,
            default: UnifiedPushConfiguration.defaultMessagesPerMinute,
            "UnifiedPush: messages one push endpoint accepts a minute (a burst of this many, refilled over a minute).")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [publicBaseURL, messagesPerMinute]
    }
}

extension UnifiedPushRoutes {
    package static func settings(appID: String, reader: ConfigReader) throws -> UnifiedPushConfiguration {
        try UnifiedPushConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// UnifiedPush's settings, by app.
    public var unifiedPush: [String: UnifiedPushConfiguration] {
        get { settings(of: UnifiedPushRoutes.self) }
        set { replace(UnifiedPushRoutes.self, with: newValue) }
    }
}
