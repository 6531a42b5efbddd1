import ArgumentParser
import Foundation
import HeraldCore
import HeraldEngine
import HeraldServer

/// `herald cleanup`: runs the clean-up job once, now, and prints what it deleted.
struct Cleanup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete dead installations and old notifications now (the daily job, run once).")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let configuration = try await common.load()
        let logger = bootstrapLogging(level: configuration.logLevel)
        let store = try await common.openStore(configuration, logger: logger)
        let report = try await store.cleanup(configuration.engine.cleanupPolicy, now: Date())
        print(
            """
            invalid installations deleted: \(report.invalidInstallations)
            failing installations deleted: \(report.failingInstallations)
            unseen installations deleted:  \(report.unseenInstallations)
            undelivered installations deleted: \(report.undeliveredInstallations)
            stale installations invalidated: \(report.staleInstallations)
            notifications deleted:         \(report.notifications)
            """)
    }
}
