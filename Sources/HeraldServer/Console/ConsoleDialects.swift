import HeraldAPI
import HeraldCore

/// What the console says about each dialect for one app: whether it serves the app, where, and how
/// it is set up (never a secret).
enum ConsoleDialects {
    static func describe(appID: String, configuration: HeraldConfiguration) -> [JSONValue] {
        HeraldApplication.dialects.map { dialect in
            let status = dialect.status(appID: appID, in: configuration.dialects)
            return .object([
                "name": .string(dialect.name), "key": .string(dialect.settingsKey),
                "routes": .string(dialect.routesSummary), "enabled": .bool(status.enabled),
                "detail": .string(status.detail),
            ])
        }
    }
}
