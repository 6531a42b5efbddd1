import ArgumentParser
import HeraldServer

/// `herald migrate`: applies pending migrations and exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply database migrations and exit.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let configuration = try await common.load()
        let logger = bootstrapLogging(level: configuration.logLevel)
        _ = try await common.openStore(configuration, logger: logger)
        print("Database is migrated: \(configuration.database)")
    }
}
