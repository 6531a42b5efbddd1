import Foundation
import HeraldCore
import Logging

extension Dispatcher {
    /// Works one claimed job until it is done, must wait (retries, local times), loses its lock,
    /// or the worker is stopping (then the job is released for the next worker).
    public func process(_ job: Job, owner: String, isStopping: @Sendable () -> Bool) async throws {
        switch job.kind {
        case "notification": try await fanOut(job, owner: owner, isStopping: isStopping)
        case "cleanup": try await runCleanup(job, owner: owner)
        default:
            logger.error("unknown job kind", metadata: ["herald.job": "\(job.kind)"])
            try await store.finishJob(id: job.id, owner: owner)
        }
    }

    private func fanOut(_ job: Job, owner: String, isStopping: @Sendable () -> Bool) async throws {
        guard let notification = try await store.notification(id: job.reference), !notification.status.isFinal else {
            return try await store.finishJob(id: job.id, owner: owner)
        }
        if let expiresAt = notification.expiresAt, now() >= expiresAt {
            return try await expire(notification, job: job, owner: owner)
        }
        let metadata: Logger.Metadata = ["herald.notification": "\(notification.id)"]
        let cursor = try await store.cursor(notificationID: notification.id)
        if cursor != "done" {
            guard try await sendTarget(of: notification, after: cursor, job: job, owner: owner, isStopping: isStopping)
            else { return }
        }

        while true {
            if isStopping() { return try await store.releaseJob(id: job.id, owner: owner, runAt: now(), error: nil) }
            let due = try await store.duePending(
                notificationID: notification.id, now: now(), limit: configuration.pageSize)
            guard !due.isEmpty else { break }
            let recipients = try await recipients(for: due, of: notification)
            var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
            try await deliver(recipients, of: notification, into: &commit)
            let waitingAgain = Set(commit.pending.map(\.recipient))
            commit.resolvedPending = due.map(\.recipient).filter { !waitingAgain.contains($0) }
            commit.lockedUntil = leaseEnd()
            guard try await store.commit(commit) else {
                return logger.warning("job lock lost; another worker has the notification", metadata: metadata)
            }
        }

        if let next = try await store.nextPending(notificationID: notification.id) {
            // Wake up for the next retry or local time, or at expiry to close the books.
            let runAt = notification.expiresAt.map { min($0, next) } ?? next
            return try await store.releaseJob(id: job.id, owner: owner, runAt: runAt, error: nil)
        }
        let counts = try await store.notification(id: notification.id)?.counts ?? notification.counts
        var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        commit.status =
            switch (counts.sent, counts.failed, counts.skippedExpired) {
            case (0, 1..., _): .failed
            case (0, 0, 1...): .expired
            default: .done
            }
        commit.completedAt = now()
        if try await store.commit(commit) {
            try await store.finishJob(id: job.id, owner: owner)
            logger.info(
                "notification done",
                metadata: metadata.merging(
                    ["herald.sent": "\(counts.sent)", "herald.failed": "\(counts.failed)"], uniquingKeysWith: { $1 }))
        }
    }

    /// Sends the target from the cursor on, batch by batch in keyset order, with
    /// ``EngineConfiguration/pipelineDepth`` batches in flight: the next batch is read while the
    /// current ones are on the connections, and a batch goes out as soon as fewer than that many
    /// are sent and not committed. Each batch commits (outcomes, counters and cursor) once its last
    /// answer is in and the batch before it has committed, so commits keep target order and what a
    /// crash can send twice (sent, not committed) stays within one page.
    /// - Returns: false when the job was released (stopping) or its lock was lost.
    private func sendTarget(
        of notification: PushNotification, after cursor: String?, job: Job, owner: String,
        isStopping: @Sendable () -> Bool
    ) async throws -> Bool {
        var batch = try await readBatch(of: notification, after: cursor)
        /// Commits in order: each waits for its own outcomes and for the previous commit.
        var uncommitted: [Task<Bool, any Error>] = []
        /// Waits for the oldest uncommitted batch; false when the job's lock was lost.
        func settleOldest() async throws -> Bool {
            guard try await uncommitted.removeFirst().value else {
                // Lock lost: later batches do not commit either; let what is on the wire end first.
                for task in uncommitted { _ = try? await task.value }
                return false
            }
            return true
        }
        do {
            while true {
                if isStopping() {
                    while !uncommitted.isEmpty { guard try await settleOldest() else { return false } }
                    try await store.releaseJob(id: job.id, owner: owner, runAt: now(), error: nil)
                    return false
                }
                // Read the next batch while this one is sent: the database and the network overlap.
                // Reading ahead is safe: the cursor only moves when a batch's commit does.
                let last = batch.last
                async let upcoming = self.readBatch(of: notification, after: last, exhausted: last == nil)
                while uncommitted.count >= configuration.pipelineDepth {
                    guard try await settleOldest() else { return false }
                }
                let (recipients, preferences) = (batch.recipients, batch.preferences)
                let started = now()
                let sending = Task {
                    var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
                    commit.status = .sending
                    commit.startedAt = started
                    commit.counts.targeted = recipients.count
                    try await self.deliver(recipients, of: notification, preferences: preferences, into: &commit)
                    commit.cursor = last ?? "done"
                    return commit
                }
                let previous = uncommitted.last
                uncommitted.append(
                    Task {
                        var page = try await sending.value
                        guard try await previous?.value ?? true else { return false }
                        page.lockedUntil = self.leaseEnd()
                        guard try await self.store.commit(page) else {
                            self.logger.warning(
                                "job lock lost; another worker has the notification",
                                metadata: ["herald.notification": "\(notification.id)"])
                            return false
                        }
                        return true
                    })
                batch = try await upcoming
                if last == nil { break }
            }
            while !uncommitted.isEmpty { guard try await settleOldest() else { return false } }
            return true
        } catch {
            // What is on the wire still ends before the error propagates; it is committed by the
            // next run or sent again there, within the page bound.
            for task in uncommitted { _ = try? await task.value }
            throw error
        }
    }

    /// The notification expired: what waits is counted as expired, the rest of the target too.
    private func expire(_ notification: PushNotification, job: Job, owner: String) async throws {
        let at = now()
        while true {
            let due = try await store.duePending(
                notificationID: notification.id, now: .distantFuture, limit: configuration.pageSize)
            guard !due.isEmpty else { break }
            var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
            commit.resolvedPending = due.map(\.recipient)
            commit.counts.skippedExpired = due.count
            for recipient in try await recipients(for: due, of: notification) {
                commit.ledger.append(record(recipient, of: notification, .expired, reason: "expired", at: at))
            }
            guard try await store.commit(commit) else { return }
        }
        var cursor = try await store.cursor(notificationID: notification.id)
        while cursor != "done" {
            let (page, last) = try await nextPage(of: notification, after: cursor)
            var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
            commit.counts.targeted = page.count
            commit.counts.skippedExpired = page.count
            commit.cursor = last ?? "done"
            guard try await store.commit(commit) else { return }
            cursor = commit.cursor
        }
        var commit = PageCommit(jobID: job.id, owner: owner, notificationID: notification.id)
        commit.status = .expired
        commit.completedAt = at
        if try await store.commit(commit) { try await store.finishJob(id: job.id, owner: owner) }
    }

    private func leaseEnd() -> Date {
        now().addingTimeInterval(configuration.lease.timeInterval)
    }

    /// A batch of the target to send: its recipients, its last key and, when the notification
    /// respects preferences, their stored preferences (read with it, so the batch can go out at once).
    private struct Batch {
        var recipients: [Recipient] = []
        var last: String?
        var preferences: [String: JSONValue]?
    }

    /// The batch after a key (nil: from the start), or an empty one when the target is exhausted.
    private func readBatch(
        of notification: PushNotification, after key: String?, exhausted: Bool = false
    ) async throws -> Batch {
        guard !exhausted else { return Batch() }
        let (recipients, last) = try await nextPage(of: notification, after: key)
        let preferences =
            notification.respectPreferences
            ? try await store.preferences(installationIDs: recipients.compactMap(\.installationID)) : [:]
        return Batch(recipients: recipients, last: last, preferences: preferences)
    }

    /// The next page of the target after the cursor, and the page's last key (nil: the target is exhausted).
    private func nextPage(
        of notification: PushNotification, after cursor: String?
    ) async throws -> (recipients: [Recipient], last: String?) {
        if case .tokens(let tokens) = notification.target.audience {
            let start = cursor.flatMap(Recipient.tokenIndex(of:)).map { $0 + 1 } ?? 0
            guard start < tokens.count else { return ([], nil) }
            let end = min(tokens.count, start + configuration.batchSize)
            let recipients = (start..<end).compactMap { index -> Recipient? in
                let token = tokens[index]
                guard notification.target.services?.contains(token.service) ?? true,
                    notification.target.platforms?.contains(token.platform) ?? true
                else { return nil }
                return Recipient(rawToken: token, index: index)
            }
            return (recipients, Recipient.key(tokenIndex: end - 1))
        }
        let page = try await store.resolve(
            notification.target, appID: notification.appID, after: cursor, limit: configuration.batchSize
        ).map(Recipient.init)
        return (page, page.last?.key)
    }

    /// The recipients of pending deliveries; deleted or invalidated installations drop out.
    private func recipients(for due: [PendingDelivery], of notification: PushNotification) async throws -> [Recipient] {
        var result: [Recipient] = []
        let ids = due.filter { Recipient.tokenIndex(of: $0.recipient) == nil }.map(\.recipient)
        var installations: [String: Installation] = [:]
        for installation in try await store.installations(appID: notification.appID, ids: ids) where installation.valid
        {
            installations[installation.id] = installation
        }
        let tokens: [NotificationTarget.RawToken]
        if case .tokens(let list) = notification.target.audience { tokens = list } else { tokens = [] }
        for pending in due {
            var recipient: Recipient?
            if let index = Recipient.tokenIndex(of: pending.recipient), index < tokens.count {
                recipient = Recipient(rawToken: tokens[index], index: index)
            } else if let installation = installations[pending.recipient] {
                recipient = Recipient(DeliveryTarget(installation))
            }
            if var recipient {
                recipient.attempts = pending.attempts
                result.append(recipient)
            }
        }
        return result
    }

    /// Applies expiry, local push time, preferences and provider pauses, sends what is left, and
    /// records every outcome in `commit`.
    /// - Parameter preferences: the recipients' stored preferences when the caller read them; nil reads them here.
    private func deliver(
        _ recipients: [Recipient], of notification: PushNotification, preferences: [String: JSONValue]? = nil,
        into commit: inout PageCommit
    )
        async throws
    {
        let now = self.now()
        let pushTime = try notification.pushTime.map { try PushTime(parsing: $0, field: "push_time") }
        var stored = preferences ?? [:]
        if preferences == nil, notification.respectPreferences {
            stored = try await store.preferences(installationIDs: recipients.compactMap(\.installationID))
        }
        var outgoing: [OutgoingPush] = []
        for recipient in recipients {
            if let expiresAt = notification.expiresAt, now >= expiresAt {
                commit.counts.skippedExpired += 1
                commit.ledger.append(record(recipient, of: notification, .expired, reason: "expired", at: now))
                continue
            }
            if let pushTime, case .instant = pushTime {
            } else if let pushTime {
                let zone = recipient.timezone.flatMap(TimeZone.init(identifier:)) ?? .gmt
                let due = pushTime.instant(in: zone)
                if due > now {
                    commit.pending.append(wait(recipient, of: notification, until: due, .localTime))
                    continue
                }
            }
            var soundEnabled = true
            if let installationID = recipient.installationID, let body = stored[installationID],
                let rules = try? Preferences(parsing: body)
            {
                switch rules.decide(
                    source: notification.source, category: notification.preferenceCategory,
                    interruptionLevel: notification.payload.interruptionLevel?.rawValue,
                    installationTimeZone: recipient.timezone, now: now)
                {
                case .skip(let reason):
                    commit.counts.skippedPreferences += 1
                    commit.ledger.append(record(recipient, of: notification, .skipped, reason: reason, at: now))
                    continue
                case .deferUntil(let date):
                    commit.pending.append(wait(recipient, of: notification, until: date, .quietHours))
                    continue
                case .deliver(let sound):
                    soundEnabled = sound
                }
            }
            if let until = gate.pausedUntil(appID: notification.appID, service: recipient.service, now: now) {
                commit.counts.rateLimited += 1
                commit.pending.append(wait(recipient, of: notification, until: until, .providerPaused))
                continue
            }
            outgoing.append(OutgoingPush(recipient: recipient, badge: nil, soundEnabled: soundEnabled))
        }
        guard !outgoing.isEmpty else { return }

        switch notification.payload.badge {
        case .set(let value)?:
            for index in outgoing.indices { outgoing[index].badge = value }
        case .increment?:
            let badges = try await store.incrementBadges(
                installationIDs: outgoing.compactMap(\.recipient.installationID), now: now)
            for index in outgoing.indices {
                outgoing[index].badge = outgoing[index].recipient.installationID.flatMap { badges[$0] } ?? 1
            }
        case nil: break
        }

        let results = await transports(of: notification.appID).send(outgoing, of: notification, now: now)
        for (push, result) in zip(outgoing, results) {
            record(result, of: push.recipient, notification, into: &commit, now: now)
        }
    }

    private func record(
        _ result: TransportResult, of recipient: Recipient, _ notification: PushNotification,
        into commit: inout PageCommit, now: Date
    ) {
        let attempt = recipient.attempts + 1
        let installationID = recipient.installationID
        switch result.outcome {
        case .delivered(let providerID):
            commit.counts.sent += 1
            if logsSuccesses(appID: notification.appID) {
                commit.ledger.append(
                    record(recipient, of: notification, .delivered, providerID: providerID, attempts: attempt, at: now))
            }
            if let installationID { commit.installationEvents.append((installationID, .delivered(at: now))) }
        case .invalidToken(let reason, let since):
            commit.counts.invalid += 1
            commit.ledger.append(
                record(recipient, of: notification, .invalid, reason: reason, attempts: attempt, at: now))
            if let installationID {
                commit.installationEvents.append((installationID, .invalidated(reason: reason, since: since, at: now)))
            }
        case .retry(let reason, let after):
            if result.providerWide, let after {
                gate.pause(
                    appID: notification.appID, service: recipient.service,
                    until: now.addingTimeInterval(after.timeInterval))
                commit.counts.rateLimited += 1
            }
            if let next = configuration.retryPolicy.nextAttempt(
                afterAttempt: attempt, retryAfter: after, now: now, expiresAt: notification.expiresAt,
                random: { Double.random(in: $0) })
            {
                var waiting = recipient
                waiting.attempts = attempt
                commit.pending.append(wait(waiting, of: notification, until: next, .retry))
            } else if attempt < configuration.retryPolicy.maxAttempts, notification.expiresAt != nil {
                commit.counts.skippedExpired += 1
                commit.ledger.append(
                    record(recipient, of: notification, .expired, reason: reason, attempts: attempt, at: now))
            } else {
                commit.counts.failed += 1
                commit.ledger.append(
                    record(
                        recipient, of: notification, .failed, reason: "retries exhausted: \(reason)", attempts: attempt,
                        at: now))
                if let installationID {
                    commit.installationEvents.append(
                        (installationID, .failed(reason: reason, at: now, maxFailures: configuration.maxFailures)))
                }
            }
        case .configurationFailure(let reason):
            // Herald's credentials are at fault, not the device: no failure counts against it.
            commit.counts.failed += 1
            commit.ledger.append(
                record(recipient, of: notification, .failed, reason: reason, attempts: attempt, at: now))
        case .rejected(let reason):
            commit.counts.failed += 1
            commit.ledger.append(
                record(recipient, of: notification, .failed, reason: reason, attempts: attempt, at: now))
            if let installationID {
                commit.installationEvents.append(
                    (installationID, .failed(reason: reason, at: now, maxFailures: configuration.maxFailures)))
            }
        }
    }

    private func wait(
        _ recipient: Recipient, of notification: PushNotification, until: Date, _ reason: PendingDelivery.Reason
    ) -> PendingDelivery {
        PendingDelivery(
            notificationID: notification.id, recipient: recipient.key, runAt: until, attempts: recipient.attempts,
            reason: reason)
    }

    private func record(
        _ recipient: Recipient, of notification: PushNotification, _ outcome: DeliveryRecord.Outcome,
        providerID: String? = nil, reason: String? = nil, attempts: Int? = nil, at: Date
    ) -> DeliveryRecord {
        DeliveryRecord(
            notificationID: notification.id, installationID: recipient.installationID,
            tokenSuffix: recipient.tokenSuffix, service: recipient.service, outcome: outcome, providerID: providerID,
            reason: reason, attempts: attempts ?? recipient.attempts, at: at)
    }

    private func runCleanup(_ job: Job, owner: String) async throws {
        let report = try await store.cleanup(configuration.cleanupPolicy, now: now())
        logger.info(
            "cleanup done",
            metadata: [
                "herald.invalid": "\(report.invalidInstallations)", "herald.failing": "\(report.failingInstallations)",
                "herald.unseen": "\(report.unseenInstallations)",
                "herald.undelivered": "\(report.undeliveredInstallations)",
                "herald.notifications": "\(report.notifications)",
            ])
        if let interval = configuration.cleanupInterval {
            try await store.releaseJob(
                id: job.id, owner: owner, runAt: now().addingTimeInterval(interval.timeInterval), error: nil)
        } else {
            try await store.finishJob(id: job.id, owner: owner)
        }
    }
}
