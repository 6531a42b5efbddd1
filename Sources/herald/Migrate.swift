import ArgumentParser
import HeraldServer

/// `herald migrate`: applies pending migrations and exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply database migrations and exit.",
        discussion: """
            herald serve migrates on start too; run this first when several nodes share a PostgreSQL \
            database, or to upgrade the schema before rolling out a new version.

            Examples:
              herald migrate --database sqlite:///var/lib/herald/herald.sqlite
              herald migrate --database 'postgres://herald:secret@db:5432/herald?sslmode=require'
            """)

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let configuration = try await common.load()
        let logger = bootstrapLogging(level: configuration.logLevel)
        _ = try await common.openStore(configuration, logger: logger)
        print("Database is migrated: \(configuration.database)")
    }
}
