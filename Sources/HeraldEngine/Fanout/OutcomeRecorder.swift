import Foundation
import HeraldCore

/// Turns what happened to each recipient into a ``PageCommit``: counts, ledger rows, installation
/// lifecycle events and pending retries. Pure: the caller applies the provider pauses it returns
/// and commits the page.
struct OutcomeRecorder: Sendable {
    /// A provider that asked every sender to slow down: deliveries through it wait until `until`.
    struct Pause: Equatable {
        var service: PushService
        var until: Date
    }

    let notification: PushNotification
    let retryPolicy: RetryPolicy
    let maxFailures: Int
    /// What a token the provider rejected does to its installation (the app's rule).
    let rejectedTokens: RejectedTokenRule
    /// Whether successes get ledger rows (`delivery_log: all`).
    let logsSuccesses: Bool
    /// Draws the retry jitter (tests fix it).
    let random: @Sendable (ClosedRange<Double>) -> Double
    /// The outcomes recorded, for the metrics (the caller emits them).
    let tally = DeliveryTally()

    /// Records a plan that sends nothing (expired, waiting, skipped).
    func record(_ plan: DeliveryPlanner.Plan, of recipient: Recipient, into commit: inout PageCommit, now: Date) {
        switch plan {
        case .send: break
        case .expired:
            tally.add(recipient.service, "expired", "expired")
            commit.counts.skippedExpired += 1
            commit.ledger.append(record(recipient, .expired, reason: "expired", at: now))
        case .wait(let until, let reason):
            if reason == .providerPaused {
                tally.add(recipient.service, "rate_limited", "provider_paused")
                commit.counts.rateLimited += 1
            }
            commit.pending.append(wait(recipient, until: until, reason))
        case .skip(let reason):
            tally.add(recipient.service, "skipped", reason)
            commit.counts.skippedPreferences += 1
            commit.ledger.append(record(recipient, .skipped, reason: reason, at: now))
        }
    }

    /// Records a provider's answer to one push.
    /// - Returns: The provider pause the answer asks for, if any.
    func record(
        _ result: TransportResult, of recipient: Recipient, into commit: inout PageCommit, now: Date
    ) -> Pause? {
        let attempt = recipient.attempts + 1
        // A Live Activity's token refused or failing says nothing of the installation's own token.
        let installationID = recipient.activityToken ? nil : recipient.installationID
        tally.add(result.outcome, service: recipient.service)
        var pause: Pause?
        switch result.outcome {
        case .delivered(let providerID):
            commit.counts.sent += 1
            if logsSuccesses {
                commit.ledger.append(
                    record(recipient, .delivered, providerID: providerID, attempts: attempt, at: now))
            }
            if let installationID { commit.installationEvents.append((installationID, .delivered(at: now))) }
        case .invalidToken(let reason, let since):
            commit.counts.invalid += 1
            commit.ledger.append(record(recipient, .invalid, reason: reason, attempts: attempt, at: now))
            if let installationID {
                commit.installationEvents.append((installationID, .invalidated(reason: reason, since: since, at: now)))
            }
        case .rejectedToken(let reason):
            // The provider's word is recorded as it is; what it does to the installation is the app's rule.
            commit.counts.invalid += 1
            commit.ledger.append(record(recipient, .invalid, reason: reason, attempts: attempt, at: now))
            if let installationID {
                commit.installationEvents.append(
                    (
                        installationID,
                        .rejected(reason: reason, at: now, maxFailures: maxFailures, rule: rejectedTokens)
                    ))
            }
        case .retry(let reason, let after):
            if result.providerWide, let after {
                pause = Pause(service: recipient.service, until: now.addingTimeInterval(after.timeInterval))
                commit.counts.rateLimited += 1
            }
            if let next = retryPolicy.nextAttempt(
                afterAttempt: attempt, retryAfter: after, now: now, expiresAt: notification.expiresAt, random: random)
            {
                var waiting = recipient
                waiting.attempts = attempt
                commit.pending.append(wait(waiting, until: next, .retry))
                // The ledger shows each attempt: this one failed, and another is scheduled.
                commit.ledger.append(record(recipient, .retrying, reason: reason, attempts: attempt, at: now))
            } else if attempt < retryPolicy.maxAttempts, notification.expiresAt != nil {
                commit.counts.skippedExpired += 1
                commit.ledger.append(record(recipient, .expired, reason: reason, attempts: attempt, at: now))
            } else {
                commit.counts.failed += 1
                commit.ledger.append(
                    record(recipient, .failed, reason: "retries exhausted: \(reason)", attempts: attempt, at: now))
                if let installationID {
                    commit.installationEvents.append(
                        (installationID, .failed(reason: reason, at: now, maxFailures: maxFailures)))
                }
            }
        case .configurationFailure(let reason):
            // Herald's credentials are at fault, not the device: no failure counts against it.
            commit.counts.failed += 1
            commit.ledger.append(record(recipient, .failed, reason: reason, attempts: attempt, at: now))
        case .rejected(let reason):
            commit.counts.failed += 1
            commit.ledger.append(record(recipient, .failed, reason: reason, attempts: attempt, at: now))
            if let installationID {
                commit.installationEvents.append(
                    (installationID, .failed(reason: reason, at: now, maxFailures: maxFailures)))
            }
        }
        return pause
    }

    func wait(_ recipient: Recipient, until: Date, _ reason: PendingDelivery.Reason) -> PendingDelivery {
        PendingDelivery(
            notificationID: notification.id, recipient: recipient.key, runAt: until, attempts: recipient.attempts,
            reason: reason)
    }

    func record(
        _ recipient: Recipient, _ outcome: DeliveryRecord.Outcome, providerID: String? = nil, reason: String? = nil,
        attempts: Int? = nil, at: Date
    ) -> DeliveryRecord {
        DeliveryRecord(
            notificationID: notification.id, installationID: recipient.installationID,
            tokenSuffix: recipient.tokenSuffix, service: recipient.service, outcome: outcome, providerID: providerID,
            reason: reason, attempts: attempts ?? recipient.attempts, at: at)
    }
}
