import Foundation
import HeraldCore
import Synchronization
import Testing

@testable import HeraldEngine

@Suite("OutcomeRecorder: provider answers to counts, ledger, lifecycle and retries")
struct OutcomeRecorderTests {
    let noon = EngineFixtures.noon

    func recorder(
        _ notification: PushNotification = EngineFixtures.notification(), logsSuccesses: Bool = false,
        maxAttempts: Int = 3, rejectedTokens: RejectedTokenRule = .invalidate
    ) -> OutcomeRecorder {
        OutcomeRecorder(
            notification: notification,
            retryPolicy: RetryPolicy(base: .seconds(10), cap: .seconds(60), maxAttempts: maxAttempts),
            maxFailures: 5, rejectedTokens: rejectedTokens, logsSuccesses: logsSuccesses, random: { $0.upperBound })
    }

    func page() -> PageCommit { PageCommit(jobID: 1, owner: "w", notificationID: "n-1") }

    @Test("Delivered: counted, the installation's failures reset; a ledger row only with delivery_log all")
    func delivered() {
        var commit = page()
        let recipient = EngineFixtures.recipient()
        #expect(
            recorder().record(.init(.delivered(providerID: "apns-1")), of: recipient, into: &commit, now: noon) == nil)
        #expect(commit.counts.sent == 1)
        #expect(commit.ledger.isEmpty)
        #expect(commit.installationEvents.map(\.event) == [.delivered(at: noon)])
        var logged = page()
        _ = recorder(logsSuccesses: true).record(
            .init(.delivered(providerID: "apns-1")), of: recipient, into: &logged, now: noon)
        #expect(logged.ledger.map(\.outcome) == [.delivered])
        #expect(logged.ledger.first?.providerID == "apns-1")
        #expect(logged.ledger.first?.attempts == 1)
    }

    @Test("Invalid token: counted, in the ledger, and the installation invalidated with the provider's time")
    func invalid() {
        var commit = page()
        let since = noon.addingTimeInterval(-60)
        _ = recorder().record(
            .init(.invalidToken(reason: "Unregistered", since: since)), of: EngineFixtures.recipient(), into: &commit,
            now: noon)
        #expect(commit.counts.invalid == 1)
        #expect(commit.ledger.map(\.outcome) == [.invalid])
        #expect(
            commit.installationEvents.map(\.event) == [.invalidated(reason: "Unregistered", since: since, at: noon)])
    }

    @Test("A rejected token: counted invalid, in the ledger, and the installation's event carries the app's rule")
    func rejectedToken() {
        for rule in RejectedTokenRule.allCases {
            var commit = page()
            _ = recorder(rejectedTokens: rule).record(
                .init(.rejectedToken(reason: "BadDeviceToken")), of: EngineFixtures.recipient(), into: &commit,
                now: noon)
            #expect(commit.counts.invalid == 1)
            #expect(commit.ledger.map(\.outcome) == [.invalid])
            #expect(commit.ledger.first?.reason == "BadDeviceToken")
            #expect(
                commit.installationEvents.map(\.event) == [
                    .rejected(reason: "BadDeviceToken", at: noon, maxFailures: 5, rule: rule)
                ])
        }
    }

    @Test("A transient failure waits for its retry; a provider-wide one with Retry-After also pauses the provider")
    func retry() {
        var commit = page()
        let recipient = EngineFixtures.recipient(service: .fcm)
        let pause = recorder().record(
            .init(.retry(reason: "QUOTA_EXCEEDED", after: .seconds(120)), providerWide: true), of: recipient,
            into: &commit, now: noon)
        #expect(pause == .init(service: .fcm, until: noon.addingTimeInterval(120)))
        #expect(commit.counts.rateLimited == 1)
        // The ledger shows the attempt that failed, and that another is coming.
        #expect(commit.ledger.map(\.outcome) == [.retrying])
        #expect(commit.ledger.first?.reason == "QUOTA_EXCEEDED")
        #expect(commit.ledger.first?.attempts == 1)
        // The jitter (the top of its range here: 10 s after the first attempt) is added to Retry-After (120 s).
        #expect(
            commit.pending == [
                PendingDelivery(
                    notificationID: "n-1", recipient: "i-1", runAt: noon.addingTimeInterval(130), attempts: 1,
                    reason: .retry)
            ])
        var single = page()
        #expect(
            recorder().record(.init(.retry(reason: "500", after: nil)), of: recipient, into: &single, now: noon) == nil)
        #expect(single.pending.first?.runAt == noon.addingTimeInterval(10))
        #expect(single.counts.rateLimited == 0)
    }

    @Test("Retries exhausted: failed, and counted against the installation; before expiry: expired instead")
    func exhausted() {
        var commit = page()
        let last = EngineFixtures.recipient(attempts: 2)
        _ = recorder().record(.init(.retry(reason: "503", after: nil)), of: last, into: &commit, now: noon)
        #expect(commit.counts.failed == 1)
        #expect(commit.ledger.first?.reason == "retries exhausted: 503")
        #expect(commit.installationEvents.map(\.event) == [.failed(reason: "503", at: noon, maxFailures: 5)])

        // The next attempt would fall after the notification's expiry.
        var expiring = page()
        _ = recorder(EngineFixtures.notification(expiresAt: noon.addingTimeInterval(5))).record(
            .init(.retry(reason: "503", after: nil)), of: EngineFixtures.recipient(), into: &expiring, now: noon)
        #expect(expiring.counts.skippedExpired == 1)
        #expect(expiring.ledger.map(\.outcome) == [.expired])
        #expect(expiring.installationEvents.isEmpty)
    }

    @Test("Herald's own configuration failing does not count against the device; a rejection does")
    func failures() {
        var commit = page()
        let recipient = EngineFixtures.recipient()
        _ = recorder().record(
            .init(.configurationFailure(reason: "APNs is not configured")), of: recipient, into: &commit, now: noon)
        #expect(commit.counts.failed == 1)
        #expect(commit.installationEvents.isEmpty)
        _ = recorder().record(.init(.rejected(reason: "PayloadTooLarge")), of: recipient, into: &commit, now: noon)
        #expect(commit.counts.failed == 2)
        #expect(
            commit.installationEvents.map(\.event) == [.failed(reason: "PayloadTooLarge", at: noon, maxFailures: 5)])
    }

    @Test("Plans that send nothing: expired, skipped and waiting recipients are recorded as such")
    func plans() {
        var commit = page()
        let recorder = recorder()
        recorder.record(.expired, of: EngineFixtures.recipient("a"), into: &commit, now: noon)
        recorder.record(.skip(reason: "muted"), of: EngineFixtures.recipient("b"), into: &commit, now: noon)
        recorder.record(
            .wait(until: noon.addingTimeInterval(60), .providerPaused), of: EngineFixtures.recipient("c"),
            into: &commit, now: noon)
        recorder.record(
            .wait(until: noon.addingTimeInterval(60), .quietHours), of: EngineFixtures.recipient("d"), into: &commit,
            now: noon)
        #expect(commit.counts.skippedExpired == 1)
        #expect(commit.counts.skippedPreferences == 1)
        #expect(commit.counts.rateLimited == 1)
        #expect(commit.ledger.map(\.outcome) == [.expired, .skipped])
        #expect(commit.ledger.map(\.reason) == ["expired", "muted"])
        #expect(commit.pending.map(\.recipient) == ["c", "d"])
        #expect(commit.pending.map(\.reason) == [.providerPaused, .quietHours])
    }
}

@Suite("CommitSequencer: batches commit in order, and none after a failed one")
struct CommitSequencerTests {
    @Test("Turns come in index order whatever order batches finish sending in")
    func order() async {
        let sequencer = CommitSequencer()
        let committed = CommitLog()
        await withTaskGroup(of: Void.self) { group in
            for index in [3, 1, 2, 0] {
                group.addTask {
                    #expect(await sequencer.turn(index))
                    committed.order.withLock { $0.append(index) }
                    await sequencer.finish(index, committed: true)
                }
            }
        }
        #expect(committed.order.withLock { $0 } == [0, 1, 2, 3])
    }

    @Test("After a batch that did not commit, later ones are told not to")
    func failure() async {
        let sequencer = CommitSequencer()
        #expect(await sequencer.turn(0))
        await sequencer.finish(0, committed: false)
        #expect(await sequencer.turn(1) == false)
        await sequencer.finish(1, committed: false)
        #expect(await sequencer.turn(2) == false)
    }
}

/// The order batches committed in, written from concurrent tasks.
final class CommitLog: Sendable {
    let order = Mutex<[Int]>([])
}
