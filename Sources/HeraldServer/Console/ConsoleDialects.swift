import HeraldCore

/// What the console says about each dialect for one app: whether it serves the app, where, and how
/// it is set up (never a secret).
enum ConsoleDialects {
    static func describe(appID: String, configuration: HeraldConfiguration) -> [JSONValue] {
        let dialects = configuration.dialects
        var entries: [JSONValue] = []
        func add(_ name: String, _ key: String, _ routes: String, enabled: Bool, _ detail: String) {
            entries.append(
                .object([
                    "name": .string(name), "key": .string(key), "routes": .string(routes), "enabled": .bool(enabled),
                    "detail": .string(detail),
                ]))
        }
        let aovis = dialects.settings(of: AOVISRoutes.self)[appID] ?? AOVISConfiguration()
        add(
            "AOVIS", AOVISRoutes.settingsKey, AOVISRoutes.prefix + "/…", enabled: true,
            "delivery \(aovis.deliverThroughSNS ? "through SNS" : "direct"), APNs \(aovis.apnsEnvironment.rawValue)")
        let argus = dialects.settings(of: ArgusAIRoutes.self)[appID] ?? ArgusAIConfiguration()
        add(
            "ArgusAI", ArgusAIRoutes.settingsKey, "/api/v1/push/mobile/…", enabled: true,
            (argus.publicBaseURL.map { "public URL \($0)" } ?? "no public_base_url: events refused")
                + ", \(argus.registerRateLimit) registrations per user and minute")
        let sns = dialects.settings(of: SNSAPIRoutes.self)[appID]
        add(
            "SNS API", SNSAPIRoutes.settingsKey, SNSAPIRoutes.prefix, enabled: sns?.credentials != nil,
            sns?.credentials != nil
                ? "region \(sns?.region ?? ""), account \(sns?.accountID ?? "")" : "no access key configured")
        let relay = dialects.settings(of: HomeAssistantRelayRoutes.self)[appID] ?? HomeAssistantRelayConfiguration()
        add(
            "Home Assistant", HomeAssistantRelayRoutes.settingsKey, HomeAssistantRelayRoutes.prefix,
            enabled: relay.relay,
            relay.relay ? "relay on, \(relay.maximumPerDay) per token per day" : "relay off")
        let leancloud = dialects.settings(of: LeanCloudRoutes.self)[appID] ?? LeanCloudConfiguration()
        add(
            "LeanCloud", LeanCloudRoutes.settingsKey, LeanCloudRoutes.prefix, enabled: leancloud.isEnabled,
            leancloud.isEnabled
                ? "client push \(leancloud.clientPush ? "allowed" : "off"), master key \(leancloud.masterKey == nil ? "none" : "set")"
                : "no app_id / app_key configured")
        return entries
    }
}
