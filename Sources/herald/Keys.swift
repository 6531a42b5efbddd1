import ArgumentParser
import HeraldCore
import HeraldServer

/// `herald keys`: API key administration.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the apps' API keys.", subcommands: [Show.self], defaultSubcommand: Show.self)

    /// `herald keys show`: prints the generated keys of the default app.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the server and client keys.")

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
        }
    }
}
