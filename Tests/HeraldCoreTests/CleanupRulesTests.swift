import Foundation
import HeraldCore
import Testing

/// The clean-up rules, decided once for both stores: which rules a policy runs, in which order,
/// and each cut-off on the clock of the run.
@Suite("Clean-up rules")
struct CleanupRulesTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    func daysAgo(_ days: Double) -> Date { now.addingTimeInterval(-days * 86_400) }

    @Test("Herald's defaults: invalid after 30 days, failing after 7 with 5 failures, notifications kept 30 days")
    func defaults() {
        let rules = CleanupRules(CleanupPolicy(), now: now)
        #expect(
            rules.deletions == [.invalid(before: daysAgo(30)), .failing(failures: 5, undeliveredBefore: daysAgo(7))])
        #expect(rules.staleBefore == nil)
        #expect(rules.notificationsBefore == daysAgo(30))
        #expect(rules.deletions.map(\.count) == [\.invalidInstallations, \.failingInstallations])
    }

    @Test("every rule a policy can hold, in the order the stores run them; stale last, after the deletions")
    func everyRule() {
        let policy = CleanupPolicy(
            invalidAfter: .seconds(86_400), failureThreshold: 3, failingAfter: nil, unseenAfter: .seconds(2 * 86_400),
            undeliveredAfter: .seconds(90 * 86_400), notificationRetention: .seconds(3_600),
            staleAfter: .seconds(60 * 86_400))
        let rules = CleanupRules(policy, now: now)
        #expect(
            rules.deletions == [
                .invalid(before: daysAgo(1)), .unseen(before: daysAgo(2)), .undelivered(before: daysAgo(90)),
            ])
        #expect(rules.staleBefore == daysAgo(60))
        #expect(rules.notificationsBefore == now.addingTimeInterval(-3_600))
        #expect(Set(CleanupRules.finalStatuses) == [.done, .canceled, .expired, .failed])
    }
}
