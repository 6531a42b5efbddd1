import ArgumentParser
import HeraldAPI
import HeraldCore
import HeraldServer

/// `herald keys`: API key administration.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or rotate the generated API keys.", subcommands: [Show.self, Rotate.self],
        defaultSubcommand: Show.self)

    /// `herald keys show`: prints the generated keys of the default app.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the server and client keys Herald generated for the default app.",
            discussion: """
                With no apps configured, herald serve generates the default app's keys on its first run \
                and keeps them (sealed) in the database; this prints them again. Configured apps' keys are \
                in the configuration (app.<id>.server_key, app.<id>.client_key).

                Examples:
                  herald keys show --database sqlite:///var/lib/herald/herald.sqlite
                  herald keys show --config /etc/herald/herald.yaml | grep 'server key'
                """)

        @OptionGroup var common: CommonOptions

        func run() async throws {
            let configuration = try await common.load()
            guard configuration.apps.isEmpty else {
                print(
                    "Apps are configured (\(configuration.apps.map(\.id).joined(separator: ", "))); their keys are in the configuration."
                )
                return
            }
            let logger = bootstrapLogging(level: configuration.logLevel)
            let store = try await common.openStore(configuration, logger: logger)
            guard let keys = try await store.appKeys(appID: AppConfiguration.defaultID) else {
                throw ValidationError("No keys yet: run `herald serve` once to generate them.")
            }
            print("app: \(keys.appID)")
            print("server key: \(keys.serverKey)")
            print("client key: \(keys.clientKey)")
            if let publish = keys.publishKey { print("publish key: \(publish)") }
        }
    }

    /// `herald keys rotate`: replaces the default app's generated keys in the database.
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the default app's generated server, client or publish key, and print the new ones once.",
            discussion: """
                Writes new keys to the database; the old ones stop working when each running server \
                reloads (kill -HUP <pid>, systemctl reload herald) or restarts. Rotating the client key \
                means shipping it in a new app release: old releases stop registering devices. Apps whose \
                keys are in the configuration are rotated by editing app.<id>.server_key / client_key there \
                (and reloading).

                Examples:
                  herald keys rotate --server --config /etc/herald/herald.yaml
                  herald keys rotate --both --database sqlite:///var/lib/herald/herald.sqlite
                  herald keys rotate --publish   # the hpk_ key of the ntfy and Gotify publish APIs
                """)

        /// Which keys to replace.
        enum Which: String, EnumerableFlag {
            /// `both` is the server and client keys; the publish key is rotated on its own.
            case server, client, both, publish
        }

        @OptionGroup var common: CommonOptions
        @Option(help: "The app (only the generated default app keeps its keys in the database).")
        var app = AppConfiguration.defaultID
        @Flag(help: "Which keys to replace (default: both).") var which: Which = .both

        func run() async throws {
            let configuration = try await common.load()
            if let configured = configuration.apps.first(where: { $0.id == app }) {
                say(
                    "App '\(configured.id)' has its keys in the configuration: edit app.\(configured.id).server_key "
                        + "and app.\(configured.id).client_key there (hsk_ / hck_ followed by 32+ random characters), "
                        + "then reload each server (kill -HUP <pid>).")
                throw ExitCode(1)
            }
            guard configuration.apps.isEmpty, app == AppConfiguration.defaultID else {
                throw ValidationError(
                    "No app '\(app)': apps are configured (\(configuration.apps.map(\.id).joined(separator: ", "))).")
            }
            let logger = bootstrapLogging(level: configuration.logLevel)
            let store = try await common.openStore(configuration, logger: logger)
            guard let rotation = store as? any AppKeyRotation else {
                throw ValidationError("This store cannot replace app keys.")
            }
            guard let current = try await store.appKeys(appID: app) else {
                throw ValidationError("No keys yet: run `herald serve` once to generate them.")
            }
            let fresh = AppKeys.generate(appID: app)
            let keys = AppKeys(
                appID: app, serverKey: [.server, .both].contains(which) ? fresh.serverKey : current.serverKey,
                clientKey: [.client, .both].contains(which) ? fresh.clientKey : current.clientKey,
                publishKey: which == .publish ? fresh.publishKey : current.publishKey)
            try await rotation.replaceAppKeys(keys)
            say("New keys for app '\(app)', shown this once (`herald keys show` prints them again):")
            if [.server, .both].contains(which) { say("server key: \(keys.serverKey)") }
            if [.client, .both].contains(which) { say("client key: \(keys.clientKey)") }
            if which == .publish, let publish = keys.publishKey { say("publish key: \(publish)") }
            say(
                "The old \(which == .both ? "keys work" : "\(which.rawValue) key works") until each running herald "
                    + "serve reloads (kill -HUP <pid>, systemctl reload herald) or restarts.")
        }
    }
}
