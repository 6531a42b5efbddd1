import ArgumentParser
import Foundation
import HeraldCore
import HeraldEngine
import HeraldServer

/// `herald cleanup`: runs the clean-up job once, now, and prints what it deleted.
struct Cleanup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete dead installations and old notifications now (the daily job, run once).",
        discussion: """
            Applies each app's clean-up rules once, now, and prints what it deleted; herald serve runs the \
            same job every engine.cleanup.interval_hours. The rules are engine.cleanup.* (invalid_days, \
            failing_days, unseen_days, undelivered_days, stale_days, retention_days: ArgusAI's), LeanCloud's \
            lifecycle for an app with leancloud configured (stale_days 60, invalid_days 60, unseen_days 120), \
            and app.<id>.lifecycle.* (the same keys) over either for one app.

            Examples:
              herald cleanup --config /etc/herald/herald.yaml
              HERALD_ENGINE_CLEANUP_INVALID_DAYS=0 herald cleanup --database sqlite://herald.sqlite
            """)

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let configuration = try await common.load()
        let logger = bootstrapLogging(level: configuration.logLevel)
        let store = try await common.openStore(configuration, logger: logger)
        let report = try await store.cleanup(configuration.engine.cleanupPlan, now: Date())
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
