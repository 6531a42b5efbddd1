import Configuration
import Foundation
import HeraldCore

/// A publish-scoped key (`app.<id>.publish_keys`, or the generated `hpk_` key of the default app):
/// it may only publish through the ntfy and Gotify APIs, to any channel of its app or, when bound,
/// to one target.
public struct PublishKey: Sendable, Equatable {
    /// Who a bound key's messages go to.
    public enum Target: Sendable, Equatable {
        /// Every installation of the app.
        case all
        /// The installations subscribed to a channel.
        case channel(String)
        /// A user's installations.
        case user(String)

        /// Reads `all`, `channel:NAME` or `user:ID`.
        public init?(_ text: String) {
            if text == "all" {
                self = .all
            } else if text.hasPrefix("channel:"), text.count > 8, text.count <= 136 {
                self = .channel(String(text.dropFirst(8)))
            } else if text.hasPrefix("user:"), text.count > 5, text.count <= 133 {
                self = .user(String(text.dropFirst(5)))
            } else {
                return nil
            }
        }

        /// The notification target, restricted to `topic` for an unbound key's ntfy publish.
        public var notificationTarget: NotificationTarget {
            switch self {
            case .all: NotificationTarget(audience: .all)
            case .channel(let name): NotificationTarget(audience: .channels([name]))
            case .user(let id): NotificationTarget(audience: .userIDs([id]))
            }
        }
    }

    public var key: String
    /// Nil: any channel of the app (ntfy's topic); Gotify then sends to everyone of the app.
    public var target: Target?

    public init(key: String, target: Target? = nil) {
        self.key = key
        self.target = target
    }

    /// Reads one `app.<id>.publish_keys` entry: `KEY` or `KEY=TARGET`.
    /// - Returns: Nil for an entry that is not one (a key shorter than 12 characters, with
    ///   whitespace, or an unknown target).
    public init?(entry: String) {
        let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
        guard let key = parts.first, key.count >= 12, key.count <= 256,
            !key.contains(where: { $0.isWhitespace })
        else { return nil }
        self.key = key
        if parts.count == 2 {
            guard let target = Target(parts[1]) else { return nil }
            self.target = target
        } else {
            target = nil
        }
    }
}

/// A caller of a publish API, once its publish key matched.
public struct Publisher: Sendable, Equatable {
    public var appID: String
    public var target: PublishKey.Target?
}

/// What the publish APIs (ntfy, Gotify) share in an app's settings: whether the app takes them,
/// and how many messages one publish key publishes a minute.
public struct PublishConfiguration: Sendable, Equatable {
    /// Messages one publish key may publish a minute, by default.
    public static let defaultMessagesPerMinute = 60

    public var enabled: Bool
    /// A burst of this many, refilled over a minute.
    public var messagesPerMinute: Int

    public init(enabled: Bool = true, messagesPerMinute: Int = Self.defaultMessagesPerMinute) {
        self.enabled = enabled
        self.messagesPerMinute = messagesPerMinute
    }

    /// A publish API's two settings, `app.<id>.<dialect>.enabled` and `….messages_per_minute`.
    public struct Settings: Sendable {
        public let enabled: Setting<Bool>
        public let messagesPerMinute: Setting<Int>

        /// - Parameters:
        ///   - dialect: The settings key (`ntfy`).
        ///   - title: How the reference names the API ("ntfy publishing").
        ///   - routes: The routes it turns on or off, for the reference.
        public init(dialect: String, title: String, routes: String) {
            enabled = Setting<Bool>(
                "app.<id>.\(dialect).enabled", default: true,
                "\(title): whether the app's publish keys may publish through \(routes).")
            messagesPerMinute = Setting<Int>(
                "app.<id>.\(dialect).messages_per_minute", 1...100_000,
                default: PublishConfiguration.defaultMessagesPerMinute,
                "\(title): messages one publish key may publish a minute (a burst of this many, refilled over a minute)."
            )
        }

        /// Both, in the reference's order.
        public var all: [any DeclaredSetting] { [enabled, messagesPerMinute] }
    }

    /// Reads app `appID`'s `settings`.
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader, settings: Settings) throws {
        self.init(
            enabled: try reader.value(settings.enabled, app: appID),
            messagesPerMinute: try reader.value(settings.messagesPerMinute, app: appID))
    }
}
