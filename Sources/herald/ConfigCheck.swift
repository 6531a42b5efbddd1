import ArgumentParser
import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldSNS
import HeraldServer
import SystemPackage

/// `herald config`: configuration tools.
struct Config: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the configuration and its credential files, or print its reference.",
        subcommands: [ConfigCheck.self, ConfigReference.self],
        defaultSubcommand: ConfigCheck.self)
}

/// `herald config check`: loads the configuration as `herald serve` does, then checks every
/// credential file and, with `--connect`, each provider.
struct ConfigCheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate the configuration and every credential file; --connect also reaches each provider.",
        discussion: """
            Loads the configuration the way herald serve does (file, HERALD_* environment, defaults), then \
            checks each app's credentials: the APNs .p8 key or .p12 / PEM certificate, the FCM service \
            account, the VAPID key, the SNS settings and the user-token public keys are read and parsed. \
            A file holding a secret (keys, the service account, the master key file, a configuration file \
            with secrets in it) must not be readable by group or others. One line per check, OK or the \
            problem with the key at fault; the exit status is 1 when any check fails.

            --connect also opens a real connection to each provider: APNs (TLS, HTTP/2 and the \
            configured auth, with a push to a made-up token that APNs refuses), FCM (an OAuth access \
            token, then the same probe), SNS (GetPlatformApplicationAttributes, read-only, for each \
            application ARN). Web Push has nothing to connect to until a browser subscribes.

            Examples:
              herald config check --config /etc/herald/herald.yaml
              herald config check --config herald.yaml --connect
              HERALD_CONFIG=herald.yaml herald config check
            """)

    @OptionGroup var common: CommonOptions

    @Flag(help: "Also connect to each configured provider (APNs, FCM, SNS).") var connect = false

    func run() async throws {
        var report = ConfigReport()
        let file = common.config ?? ProcessInfo.processInfo.environment["HERALD_CONFIG"]
        let configuration: HeraldConfiguration
        do {
            configuration = try await common.load()
        } catch {
            report.fail("configuration", "\(error)")
            throw ExitCode(1)
        }
        let raw = try await Self.rawReader(file: file, environment: true)
        if let file {
            let secrets = Self.secretKeys(
                in: try await Self.rawReader(file: file, environment: false), configuration: configuration)
            if secrets.isEmpty {
                report.ok("configuration", file)
            } else {
                report.check("configuration", file, secret: true, detail: "holds \(secrets.joined(separator: ", "))")
            }
        } else {
            report.ok("configuration", "no file: the environment and defaults")
        }
        if configuration.secretKey == nil, let keyFile = configuration.resolvedSecretKeyFile,
            FileManager.default.fileExists(atPath: keyFile)
        {
            report.check("secret_key_file", keyFile, secret: true, detail: "the master key")
        }
        let appIDs = configuration.apps.isEmpty ? [AppConfiguration.defaultID] : configuration.apps.map(\.id)
        for appID in appIDs {
            let providers = configuration.providers[appID] ?? ProviderConfiguration()
            var configured = 0
            if let apns = providers.apns {
                configured += 1
                await checkAPNs(apns, appID: appID, report: &report)
            }
            if let fcm = providers.fcm {
                configured += 1
                await checkFCM(fcm, appID: appID, report: &report)
            }
            if let webPush = providers.webPush {
                configured += 1
                let name = "app \(appID) webpush"
                // Each browser subscription names its own push service: nothing to reach before one exists.
                let connected = connect ? "; --connect: nothing to connect to until a browser subscribes" : ""
                let keyFile = ProviderConfiguration.WebPush.Settings.privateKeyFile.key(app: appID)
                if let file = raw.string(forKey: ConfigKey(keyFile)) {
                    report.check(
                        name, file, secret: true, detail: "VAPID key, subject \(webPush.subject)" + connected)
                } else {
                    report.ok(name, "VAPID key (inline), subject \(webPush.subject)" + connected)
                }
            }
            if let sns = providers.sns {
                configured += 1
                await checkSNS(sns, appID: appID, report: &report)
            }
            if configured == 0 {
                report.note("app \(appID)", "no push provider configured (only the direct WebSocket channel delivers)")
            }
            await checkUserTokens(appID: appID, configuration: configuration, report: &report)
        }
        guard report.problems == 0 else {
            say("\(report.problems) problem\(report.problems == 1 ? "" : "s") found")
            throw ExitCode(1)
        }
        say("configuration OK")
    }

    // MARK: Providers

    private func checkAPNs(_ apns: ProviderConfiguration.APNs, appID: String, report: inout ConfigReport) async {
        let name = "app \(appID) apns"
        let prefix = "app.\(appID).apns"
        if let keyFile = apns.keyFile {
            guard report.readable(name, "\(prefix).key_file", keyFile, secret: true) else { return }
        }
        if let p12 = apns.p12File {
            guard report.readable(name, "\(prefix).p12_file", p12, secret: true) else { return }
        }
        if let key = apns.certificateKeyFile {
            guard report.readable(name, "\(prefix).certificate_key_file", key, secret: true) else { return }
        }
        var single = ProviderConfiguration()
        single.apns = apns
        guard let transports = report.transports(name, single, appID: appID) else { return }
        let auth =
            apns.keyFile != nil
            ? "token auth, key \(apns.keyID ?? "?") of team \(apns.teamID ?? "?")" : "certificate auth"
        let topic = apns.topic.map { ", topic \($0)" } ?? ", no default topic"
        guard connect else {
            report.ok(name, auth + topic)
            await transports.shutdown()
            return
        }
        // A push to a made-up token: APNs authenticates the connection and the provider token, then
        // refuses the device token (BadDeviceToken) without delivering anything.
        let environments: [PushEnvironment] = apns.url == nil ? [.production, .sandbox] : [.production]
        var answers: [String] = []
        for environment in environments {
            let outcome = await transports.send(
                Self.probe(appID), token: String(repeating: "0", count: 64), service: .apns,
                environment: environment, platform: .ios)
            guard let answer = Self.connected(outcome) else {
                report.fail(name, "\(environment.rawValue): \(Self.describe(outcome))")
                await transports.shutdown()
                return
            }
            answers.append("\(environment.rawValue) \(answer)")
        }
        await transports.shutdown()
        report.ok(name, auth + topic + "; connected: " + answers.joined(separator: ", "))
    }

    private func checkFCM(_ fcm: ProviderConfiguration.FCM, appID: String, report: inout ConfigReport) async {
        let name = "app \(appID) fcm"
        guard
            report.readable(name, "app.\(appID).fcm.service_account_file", fcm.serviceAccountFile, secret: true)
        else { return }
        var single = ProviderConfiguration()
        single.fcm = fcm
        guard let transports = report.transports(name, single, appID: appID) else { return }
        guard connect else {
            report.ok(name, "service account \(fcm.serviceAccountFile)")
            await transports.shutdown()
            return
        }
        // The probe needs an OAuth access token first (the service account's signed assertion),
        // then FCM refuses the made-up registration token.
        let outcome = await transports.send(
            Self.probe(appID), token: "herald-config-check-probe", service: .fcm, environment: .production,
            platform: .android)
        await transports.shutdown()
        guard let answer = Self.connected(outcome) else {
            report.fail(name, Self.describe(outcome))
            return
        }
        report.ok(name, "service account \(fcm.serviceAccountFile); OAuth token obtained, connected: \(answer)")
    }

    private func checkSNS(_ sns: ProviderConfiguration.SNS, appID: String, report: inout ConfigReport) async {
        let name = "app \(appID) sns"
        let applications = [
            ("apns_application_arn", sns.applications.apns),
            ("apns_sandbox_application_arn", sns.applications.apnsSandbox),
            ("gcm_application_arn", sns.applications.gcm),
        ].compactMap { key, arn in arn.map { (key, $0) } }
        for (key, arn) in applications where !Self.isPlatformApplicationARN(arn) {
            report.fail(name, "app.\(appID).sns.\(key): '\(arn)' is not an SNS platform application ARN")
            return
        }
        let client: SNSClient
        do {
            client = try SNSClient(
                configuration: .init(region: sns.region, credentials: sns.credentials, endpoint: sns.endpointURL))
        } catch {
            report.fail(name, "app.\(appID).sns: \(error.message)")
            return
        }
        let summary =
            "region \(sns.region), \(applications.count) application\(applications.count == 1 ? "" : "s")"
            + (sns.credentials == nil ? ", credentials from AWS_* environment" : "")
        guard connect else {
            report.ok(name, summary)
            return
        }
        guard !applications.isEmpty else {
            report.note(name, summary + "; no application ARN to read, nothing connected")
            return
        }
        for (key, arn) in applications {
            do {
                _ = try await client.getPlatformApplicationAttributes(applicationARN: arn)
            } catch {
                report.fail(name, "app.\(appID).sns.\(key): GetPlatformApplicationAttributes failed: \(error)")
                return
            }
        }
        report.ok(name, summary + "; connected: every application readable")
    }

    private func checkUserTokens(appID: String, configuration: HeraldConfiguration, report: inout ConfigReport) async {
        let tokens =
            configuration.apps.first { $0.id == appID }?.userTokens ?? configuration.defaultAppUserTokens
        guard tokens.isEnabled else { return }
        let name = "app \(appID) jwt"
        for path in tokens.publicKeyFiles {
            guard report.readable(name, "app.\(appID).jwt.public_key_files", path, secret: false) else { return }
        }
        do {
            _ = try await UserTokenVerifier(configuration: tokens, appID: appID)
        } catch {
            report.fail(name, "\(error)")
            return
        }
        var parts: [String] = []
        if tokens.hs256Secret != nil { parts.append("HS256 secret") }
        if !tokens.publicKeyFiles.isEmpty { parts.append("\(tokens.publicKeyFiles.count) public key file(s)") }
        if let jwks = tokens.jwksFile { parts.append("JWKS \(jwks)") }
        report.ok(name, parts.joined(separator: ", "))
    }

    // MARK: Helpers

    /// The harmless notification the probes send: silent, to a token that does not exist.
    private static func probe(_ appID: String) -> PushNotification {
        PushNotification(
            id: Identifier.make(now: Date()), appID: appID, target: NotificationTarget(audience: .all),
            payload: NotificationPayload(contentAvailable: true), createdAt: Date())
    }

    /// What a probe's outcome says when the provider was reached and authenticated us: it delivered
    /// (a mock) or refused the made-up token. Nil for any other answer.
    private static func connected(_ outcome: DeliveryOutcome) -> String? {
        switch outcome {
        case .delivered: "accepted"
        case .invalidToken(let reason, _), .rejectedToken(let reason): "token refused as expected (\(reason))"
        case .retry, .configurationFailure, .rejected: nil
        }
    }

    private static func describe(_ outcome: DeliveryOutcome) -> String {
        switch outcome {
        case .retry(let reason, _): "not reachable or failing: \(reason)"
        case .configurationFailure(let reason): "credentials refused: \(reason)"
        case .rejected(let reason): "refused the probe: \(reason)"
        case .delivered, .invalidToken, .rejectedToken: "connected"
        }
    }

    /// `arn:aws:sns:<region>:<account>:app/<APNS|APNS_SANDBOX|GCM|…>/<name>` (any AWS partition).
    static func isPlatformApplicationARN(_ arn: String) -> Bool {
        let parts = arn.split(separator: ":", maxSplits: 5, omittingEmptySubsequences: false)
        return parts.count == 6 && parts[0] == "arn" && parts[1].hasPrefix("aws") && parts[2] == "sns"
            && !parts[3].isEmpty && !parts[4].isEmpty && parts[5].hasPrefix("app/")
            && parts[5].split(separator: "/").count == 3
    }

    /// The configuration file (and environment) as plain keys, for what the typed configuration
    /// does not keep (file paths read at load time, which keys hold secrets).
    private static func rawReader(file: String?, environment: Bool) async throws -> ConfigReader {
        var providers: [any ConfigProvider] = []
        if environment {
            providers.append(
                EnvironmentVariablesProvider(environmentVariables: ProcessInfo.processInfo.environment)
                    .prefixKeys(with: "herald"))
        }
        if let file {
            if file.hasSuffix(".yaml") || file.hasSuffix(".yml") {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file)))
            } else {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file)))
            }
        }
        return ConfigReader(providers: providers)
    }

    /// The secret keys a configuration file sets (so it must be private like a key file); `reader`
    /// reads the file alone.
    private static func secretKeys(in reader: ConfigReader, configuration: HeraldConfiguration) -> [String] {
        let apps = configuration.apps.map(\.id) + [AppConfiguration.defaultID]
        let keys = SettingsCatalog.settings.filter(\.isSecret).flatMap { setting in
            setting.isPerApp ? apps.map { setting.key(app: $0) } : [setting.key]
        }
        return keys.filter { reader.string(forKey: ConfigKey($0), isSecret: true) != nil }
    }
}

/// The lines `herald config check` prints and the problems it found.
struct ConfigReport {
    private(set) var problems = 0

    mutating func ok(_ name: String, _ detail: String) { line(name, "OK", detail) }

    mutating func note(_ name: String, _ detail: String) { line(name, "--", detail) }

    mutating func fail(_ name: String, _ detail: String) {
        problems += 1
        line(name, "FAIL", detail)
    }

    /// Checks that `path` (named by configuration key `key`) can be read and, when it holds a
    /// secret, that only its owner can; prints a FAIL line otherwise.
    /// - Returns: Whether the file passed.
    mutating func readable(_ name: String, _ key: String, _ path: String, secret: Bool) -> Bool {
        guard FileManager.default.isReadableFile(atPath: path) else {
            fail(name, "\(key): '\(path)' cannot be read")
            return false
        }
        if secret, let mode = Self.mode(path), mode & 0o077 != 0 {
            fail(
                name,
                "\(key): '\(path)' holds a secret but is readable by group or others (mode \(String(mode, radix: 8))); "
                    + "chmod 600 it")
            return false
        }
        return true
    }

    /// `readable` for a file checked on its own line: OK with `detail` when it passes.
    mutating func check(_ name: String, _ path: String, secret: Bool, detail: String) {
        guard readable(name, name, path, secret: secret) else { return }
        ok(name, "\(path): \(detail)")
    }

    /// The app's transports for the one provider `single` configures, which reads and parses its
    /// credential files; a FAIL line and nil when they do not load.
    mutating func transports(_ name: String, _ single: ProviderConfiguration, appID: String) -> AppTransports? {
        do {
            return try TransportFactory.make([appID: single])[appID]
        } catch {
            fail(name, "\(error)")
            return nil
        }
    }

    private func line(_ name: String, _ status: String, _ detail: String) {
        say(
            name.padding(toLength: max(22, name.count + 1), withPad: " ", startingAt: 0)
                + status.padding(toLength: 5, withPad: " ", startingAt: 0) + detail)
    }

    private static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }
}
