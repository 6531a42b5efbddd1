import Configuration
import Foundation
import HeraldCore

/// A webhook endpoint kept in the configuration (`app.<id>.webhooks`), for set-ups kept in files:
/// `herald serve` writes it to the store at start and on reload, where it wins over an endpoint of
/// the same id made through the API, and the API can read it but not change it (docs/webhooks.md).
public struct ConfiguredWebhook: Sendable, Equatable {
    public var appID: String
    public var id: String
    public var url: String
    public var events: [WebhookEventType]
    public var description: String?
    public var enabled: Bool
    /// `secret` (or `secret_file`) first, then `previous_secret`: both sign while both are configured.
    public var secrets: [WebhookSecret]

    /// The configured endpoints of app `appID`: each name of `app.<id>.webhooks` with its `app.<id>.webhook.<name>.*`.
    /// - Throws: `invalid_configuration` naming the key at fault.
    public static func read(appID: String, reader: ConfigReader) throws -> [ConfiguredWebhook] {
        typealias Settings = AppConfiguration.WebhookSettings
        var endpoints: [ConfiguredWebhook] = []
        for name in reader.value(Settings.names, app: appID) {
            let key = Settings.names.key(app: appID)
            guard !name.isEmpty, name.count <= WebhookEndpointChange.maxIDLength,
                name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }),
                !endpoints.contains(where: { $0.id == name })
            else {
                throw HeraldError.invalidConfiguration(
                    key, "'\(name)' is not a unique name of letters, digits, - and _")
            }
            func setting<Value>(_ setting: Setting<Value>) -> Setting<Value> { setting.named(name) }
            guard let url = try reader.value(setting(Settings.url), app: appID) else {
                throw HeraldError.invalidConfiguration(setting(Settings.url).key(app: appID), "is required")
            }
            let eventsKey = setting(Settings.events).key(app: appID)
            let events: [WebhookEventType]
            do {
                events = try WebhookEndpointChange.events(
                    reader.value(setting(Settings.events), app: appID), field: eventsKey)
            } catch {
                throw HeraldError.invalidConfiguration(eventsKey, error.message)
            }
            var secrets: [WebhookSecret] = []
            let inline = try reader.value(setting(Settings.secret), app: appID)
            let file = try reader.value(setting(Settings.secretFile), app: appID)
            let secretKey = setting(Settings.secret).key(app: appID)
            switch (inline, file) {
            case (let text?, nil): secrets.append(try secret(text, key: secretKey))
            case (nil, let path?):
                let fileKey = setting(Settings.secretFile).key(app: appID)
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw HeraldError.invalidConfiguration(fileKey, "names \(path), which cannot be read")
                }
                secrets.append(try secret(text.trimmingCharacters(in: .whitespacesAndNewlines), key: fileKey))
            case (nil, nil):
                throw HeraldError.invalidConfiguration(secretKey, "or `secret_file` is required")
            case (_?, _?):
                throw HeraldError.invalidConfiguration(secretKey, "and `secret_file` are both set: set one")
            }
            if let previous = try reader.value(setting(Settings.previousSecret), app: appID) {
                secrets.append(try secret(previous, key: setting(Settings.previousSecret).key(app: appID)))
            }
            endpoints.append(
                ConfiguredWebhook(
                    appID: appID, id: name, url: url, events: events,
                    description: try reader.value(setting(Settings.description), app: appID),
                    enabled: try reader.value(setting(Settings.enabled), app: appID), secrets: secrets))
        }
        return endpoints
    }

    private static func secret(_ text: String, key: String) throws -> WebhookSecret {
        do {
            return try WebhookSecret(text)
        } catch {
            throw HeraldError.invalidConfiguration(key, "is not a webhook secret: \(error.message)")
        }
    }
}

extension AppConfiguration {
    /// The settings of configured webhook endpoints (docs/webhooks.md).
    public enum WebhookSettings {
        public static let names = Setting<[String]>(
            "app.<id>.webhooks", .stringArray, defaultText: "none",
            """
            Webhook endpoints kept in the configuration, by name (letters, digits, `-`, `_`): each is set by the \
            `app.<id>.webhook.<name>.*` settings below and is the app's endpoint of that id. Herald writes them to \
            its store at start and on reload; one the API made with the same id is replaced, and the API may read \
            them but not change or delete them. A name dropped from the list deletes its endpoint.
            """)
        public static let url = Setting<String?>(
            "app.<id>.webhook.<name>.url", .url(schemes: ["http", "https"]),
            "Where the endpoint's events are posted (required; `https` unless `webhooks.allow_http`).")
        public static let events = Setting<[String]>(
            "app.<id>.webhook.<name>.events", .stringArray, defaultText: "required",
            "The event types it receives (docs/webhooks.md), or `[\"*\"]` for all.")
        public static let secret = Setting<String?>(
            "app.<id>.webhook.<name>.secret", .text, secret: true,
            """
            The signing secret (`whsec_` and the base64 of 24 to 64 random bytes: `openssl rand -base64 32`); \
            or `secret_file`, a file holding it (readable by Herald alone).
            """)
        public static let secretFile = Setting<String?>(
            "app.<id>.webhook.<name>.secret_file", .path, "A file holding the signing secret, instead of `secret`.")
        public static let previousSecret = Setting<String?>(
            "app.<id>.webhook.<name>.previous_secret", .text, secret: true,
            """
            During a rotation: the secret being replaced, which signs beside the new one (each request carries both \
            signatures) until it is removed, so receivers can switch without losing an event.
            """)
        public static let description = Setting<String?>(
            "app.<id>.webhook.<name>.description", .text, "What the endpoint is for (shown in the console and the API)."
        )
        public static let enabled = Setting<Bool>(
            "app.<id>.webhook.<name>.enabled", default: true, "Whether it receives events.")

        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            names, url, events, secret, secretFile, previousSecret, description, enabled,
        ]
    }
}
