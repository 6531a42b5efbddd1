import CoreMetrics
import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the apps' credentials and keys without a restart: on `SIGHUP`, and when the configuration
/// file changes. A reload builds every provider client and app from the new configuration first and
/// swaps them in only when all of it loads — a bad file changes nothing and is logged. Pages already
/// sending finish on the old clients, which are closed after ``drainDelay``. Settings read only at
/// start (listening address, database, engine) are named in a warning when they changed.
///
/// It also checks the credentials' expiry (``CredentialExpiry``) at start, at each reload and daily.
/// Its timers (the file's poll, the drain, the daily check) sleep on the node's clock, the dispatcher's.
public struct ConfigurationReloader: Service {
    /// Loads the configuration again, the way the process loaded it at start.
    public typealias Loader = @Sendable () async throws -> HeraldConfiguration

    let initial: HeraldConfiguration
    let load: Loader
    let file: String?
    let store: any HeraldStore
    let apps: AppDirectory
    let dispatcher: Dispatcher
    let logger: Logger
    let makeTransports: @Sendable ([String: ProviderConfiguration]) throws -> [String: AppTransports]
    /// How long replaced provider clients stay open for the pages still sending on them.
    let drainDelay: Duration
    /// How often the file's modification time is compared.
    let pollInterval: Duration
    let now: @Sendable () -> Date

    /// Creates the reloader.
    /// - Parameters:
    ///   - file: The configuration file to watch; nil watches nothing (SIGHUP still reloads).
    public init(
        configuration: HeraldConfiguration, file: String?, store: any HeraldStore, apps: AppDirectory,
        dispatcher: Dispatcher, logger: Logger, drainDelay: Duration = .seconds(60),
        pollInterval: Duration = .seconds(2), now: @escaping @Sendable () -> Date = Date.init,
        load: @escaping Loader
    ) {
        self.initial = configuration
        self.file = file
        self.store = store
        self.apps = apps
        self.dispatcher = dispatcher
        self.logger = logger
        self.drainDelay = drainDelay
        self.pollInterval = pollInterval
        self.now = now
        self.load = load
        self.makeTransports = { try TransportFactory.make($0) }
    }

    public func run() async throws {
        CredentialExpiry.check(initial, now: now(), logger: logger)
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await withDiscardingTaskGroup { group in
            let (triggers, trigger) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(1))
            group.addTask {
                for await _ in signals { trigger.yield("SIGHUP") }
            }
            group.addTask { await watchFile(trigger) }
            group.addTask {
                // Expiry is re-checked daily, so a warning repeats until the credential is replaced.
                while (try? await dispatcher.clock.sleep(for: .seconds(86_400))) != nil { trigger.yield("daily") }
            }
            await cancelWhenGracefulShutdown {
                var current = initial
                await withDiscardingTaskGroup { closing in
                    for await reason in triggers {
                        if reason == "daily" {
                            CredentialExpiry.check(current, now: now(), logger: logger)
                            continue
                        }
                        if let (configuration, old) = await reload(from: current, reason: reason) {
                            current = configuration
                            let delay = drainDelay
                            closing.addTask {
                                try? await dispatcher.clock.sleep(for: delay)
                                for transports in old.values { await transports.shutdown() }
                            }
                        }
                    }
                }
            }
            trigger.finish()
            group.cancelAll()
        }
    }

    /// Loads and applies the configuration; returns it with the transports it replaced, or nil when
    /// it did not load (nothing changed).
    func reload(
        from current: HeraldConfiguration, reason: String
    ) async -> (HeraldConfiguration, [String: AppTransports])? {
        do {
            let configuration = try await load()
            let transports = try makeTransports(configuration.providers)
            do {
                try await apps.reload(configuration: configuration, store: store, now: now)
                if let webhooks = store as? any WebhookStore {
                    try await ConfiguredWebhooks.apply(
                        configuration.configuredWebhooks, appIDs: apps.appIDs, store: webhooks, now: now(),
                        logger: logger)
                }
                if let templates = store as? any TemplateStore {
                    try await ConfiguredTemplates.apply(
                        configuration.configuredTemplates, appIDs: apps.appIDs, store: templates, now: now(),
                        logger: logger)
                }
            } catch {
                for app in transports.values { await app.shutdown() }
                throw error
            }
            let old = dispatcher.replaceTransports(transports)
            // The dialects adapt what they keep by their settings and credentials (the Home Assistant
            // relay moves the installations it registered to its new APNs environment).
            await apps.reloaded(DialectReload(previous: current.dialects, current: configuration.dialects))
            let restart = Self.restartOnly(current, configuration)
            if !restart.isEmpty {
                logger.warning(
                    "configuration reloaded; some changes need a restart",
                    metadata: ["herald.settings": "\(restart.joined(separator: ","))"])
            }
            logger.notice(
                "configuration reloaded",
                metadata: ["herald.reason": "\(reason)", "herald.apps": "\(apps.appIDs.joined(separator: ","))"])
            Counter(label: "herald_config_reloads_total", dimensions: [("result", "ok")]).increment()
            CredentialExpiry.check(configuration, now: now(), logger: logger)
            return (configuration, old)
        } catch {
            logger.error(
                "configuration not reloaded; the running one stays",
                metadata: ["herald.reason": "\(reason)", "error": "\(error)"])
            Counter(label: "herald_config_reloads_total", dimensions: [("result", "failed")]).increment()
            return nil
        }
    }

    /// Yields when the configuration file's modification time or size changes.
    private func watchFile(_ trigger: AsyncStream<String>.Continuation) async {
        guard let file else { return }
        func stamp() -> [String]? {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file) else { return nil }
            return ["\(attributes[.modificationDate] ?? "")", "\(attributes[.size] ?? "")"]
        }
        var last = stamp()
        while (try? await dispatcher.clock.sleep(for: pollInterval)) != nil {
            let next = stamp()
            if next != last, next != nil { trigger.yield("file changed") }
            last = next
        }
    }

    /// The settings read only at start that differ between two configurations.
    static func restartOnly(_ old: HeraldConfiguration, _ new: HeraldConfiguration) -> [String] {
        var changed: [String] = []
        if old.host != new.host { changed.append("server.host") }
        if old.port != new.port { changed.append("server.port") }
        if old.database != new.database { changed.append("database") }
        if old.logLevel != new.logLevel { changed.append("log.level") }
        if old.logFormat != new.logFormat { changed.append("log.format") }
        if old.maxBodyBytes != new.maxBodyBytes { changed.append("http.max_body_bytes") }
        if old.http != new.http { changed.append("http") }
        if old.metricsToken != new.metricsToken || old.metricsEnabled != new.metricsEnabled {
            changed.append("metrics")
        }
        if old.webhooks != new.webhooks { changed.append("webhooks") }
        return changed
    }
}

extension ConfigurationReloader: CustomStringConvertible {
    /// Names the service only: its configuration holds keys and secrets, and service lifecycle logs
    /// print each service's description.
    public var description: String { "ConfigurationReloader(file: \(file ?? "none"))" }
}
