import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCore
import HeraldServer

/// `herald webhooks`: the webhook endpoints of an app and their outbox, from the store (docs/webhooks.md).
struct Webhooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List an app's webhook endpoints with their health, show an endpoint's recent events, replay them.",
        subcommands: [List.self, Deliveries.self, Replay.self], defaultSubcommand: List.self)

    /// What every subcommand takes: the configuration and the app.
    struct Target: ParsableArguments {
        @OptionGroup var common: CommonOptions
        @Option(help: "The app (default: the only configured app, or the generated default app).")
        var app: String?

        /// The configuration, the app's id and the store (opened, migrated).
        func open() async throws -> (HeraldConfiguration, String, any WebhookStore) {
            let configuration = try await common.load()
            let ids = configuration.apps.map(\.id)
            let app =
                try app ?? (ids.isEmpty ? AppConfiguration.defaultID : ids.count == 1 ? ids[0] : nil)
                ?? { throw ValidationError("Several apps are configured: name one with --app.") }()
            guard ids.isEmpty || ids.contains(app) else { throw ValidationError("No app \(app) is configured.") }
            let store = try await common.openStore(
                configuration, logger: bootstrapLogging(level: configuration.logLevel))
            guard let webhooks = store as? any WebhookStore else {
                throw ValidationError("This store keeps no webhooks.")
            }
            return (configuration, app, webhooks)
        }
    }

    /// `herald webhooks list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The app's webhook endpoints: URL, events, state, last success, failing since, backlog.",
            discussion: """
                Examples:
                  herald webhooks list --config /etc/herald/herald.yaml --app shop
                  herald webhooks --database sqlite:///var/lib/herald/herald.sqlite
                """)

        @OptionGroup var target: Target

        func run() async throws {
            let (_, app, store) = try await target.open()
            let endpoints = try await store.webhookEndpoints(appID: app)
            if endpoints.isEmpty { print("app \(app): no webhook endpoints") }
            for endpoint in endpoints {
                let backlog = try await store.webhookBacklog(appID: app, endpointID: endpoint.id)
                let state = endpoint.disabledReason.map { "disabled (\($0.rawValue))" } ?? "enabled"
                print("\(endpoint.id)  \(state)\(endpoint.configured ? ", configured" : "")  \(endpoint.url)")
                print("  events: \(endpoint.events.map(\.rawValue).joined(separator: ", "))")
                print(
                    "  last success: \(Self.time(endpoint.lastSuccessAt))  failing since: \(Self.time(endpoint.failingSince))"
                        + "  backlog: \(backlog)")
            }
        }

        static func time(_ date: Date?) -> String { date.map(WebhookEvent.timestamp) ?? "-" }
    }

    /// `herald webhooks deliveries`.
    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "An endpoint's most recent events, newest first: state, attempts, last status and error.")

        @OptionGroup var target: Target
        @Argument(help: "The endpoint's id.") var id: String
        @Option(help: "How many (1 to 1000).") var limit = 20

        func run() async throws {
            guard (1...1000).contains(limit) else { throw ValidationError("--limit is 1 to 1000.") }
            let (_, app, store) = try await target.open()
            guard try await store.webhookEndpoint(appID: app, id: id) != nil else {
                throw ValidationError("App \(app) has no webhook endpoint \(id).")
            }
            for row in try await store.webhookDeliveries(appID: app, endpointID: id, limit: limit) {
                let status = row.lastStatus.map(String.init) ?? "-"
                print(
                    "\(WebhookEvent.timestamp(row.createdAt))  \(row.eventID)  \(row.eventType.rawValue)  \(row.state.rawValue)"
                        + "  attempts \(row.attempts)  status \(status)" + (row.lastError.map { "  \($0)" } ?? ""))
            }
        }
    }

    /// `herald webhooks replay`.
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send an endpoint's events again from a time on (those the outbox keeps), with their ids.")

        @OptionGroup var target: Target
        @Argument(help: "The endpoint's id.") var id: String
        @Option(help: "RFC 3339 date-time with an offset, e.g. 2026-12-24T09:00:00Z.") var since: String

        func run() async throws {
            guard case .instant(let from)? = PushTime.parse(since) else {
                throw ValidationError("--since is an RFC 3339 date-time with an offset, like 2026-12-24T09:00:00Z.")
            }
            let (_, app, store) = try await target.open()
            guard try await store.webhookEndpoint(appID: app, id: id) != nil else {
                throw ValidationError("App \(app) has no webhook endpoint \(id).")
            }
            let count = try await store.replayWebhookDeliveries(appID: app, endpointID: id, since: from, now: Date())
            print("replayed \(count) events of \(id): the running servers send them within a second")
        }
    }
}
