import Foundation
import HeraldCore
import Testing

/// What the console reads of the ledger: one device's history, outcomes per hour, provider failures.
extension StoreConformance {
    static let insights: [StoreConformanceCase] = [
        .init("insights: an installation's ledger lists newest first in keyset pages, its entries only") { store in
            let phone = try await register(ios(), in: store)
            let other = try await register(android(), in: store)
            var records: [DeliveryRecord] = []
            for index in 0..<3 {
                let item = notification(createdAt: at(Double(index)))
                let job = try await insertAndClaim(item, in: store)
                var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
                page.ledger = [
                    DeliveryRecord(
                        notificationID: item.id, installationID: phone.id, tokenSuffix: phone.token.suffix,
                        service: .apns, outcome: index == 1 ? .failed : .delivered, providerID: "apns-\(index)",
                        reason: index == 1 ? "InternalServerError" : nil, attempts: 1, at: at(Double(index) + 1)),
                    DeliveryRecord(
                        notificationID: item.id, installationID: other.id, tokenSuffix: other.token.suffix,
                        service: .fcm, outcome: .delivered, attempts: 1, at: at(Double(index) + 1)),
                ]
                page.status = .done
                page.cursor = "done"
                #expect(try await store.commit(page))
                try await store.finishJob(id: job.id, owner: "w1")
                records.append(page.ledger[0])
            }
            let first = try await store.deliveries(installationID: phone.id, page: .init(limit: 2))
            #expect(first.map(\.record) == [records[2], records[1]])
            let rest = try await store.deliveries(
                installationID: phone.id, page: .init(after: first.last.map { String($0.sequence) }, limit: 2))
            #expect(rest.map(\.record) == [records[0]])
            #expect(try await store.deliveries(installationID: "missing", page: .init()).isEmpty)
        },
        .init("insights: outcome series sums an app's counts per hour of creation since a time") { store in
            let counts = [
                NotificationCounts(targeted: 3, sent: 2, failed: 1),
                NotificationCounts(targeted: 2, sent: 1, invalid: 1),
                NotificationCounts(targeted: 4, sent: 1, skippedPreferences: 2, skippedExpired: 1),
            ]
            // Two in the first hour, one two hours later, one long before, one of another app.
            let created = [at(60), at(1800), at(7300)]
            for (index, date) in created.enumerated() {
                let item = notification(createdAt: date)
                let job = try await insertAndClaim(item, in: store)
                var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
                page.counts = counts[index]
                page.status = .done
                #expect(try await store.commit(page))
                try await store.finishJob(id: job.id, owner: "w1")
            }
            _ = try await store.insertNotification(
                notification(createdAt: at(-3 * day)), runAt: at(-3 * day), idempotencyWindow: .seconds(60))
            _ = try await store.insertNotification(
                notification(app: "b", createdAt: at(60)), runAt: now, idempotencyWindow: .seconds(60))
            let series = try await store.outcomeSeries(appID: "a", since: at(-day))
            #expect(
                series == [
                    OutcomeBucket(
                        hour: now, notifications: 2,
                        counts: NotificationCounts(targeted: 5, sent: 3, failed: 1, invalid: 1)),
                    OutcomeBucket(hour: at(7200), notifications: 1, counts: counts[2]),
                ])
            #expect(try await store.outcomeSeries(appID: "a", since: at(3600)).map(\.hour) == [at(7200)])
            #expect(try await store.outcomeSeries(appID: "c", since: at(-day)).isEmpty)
        },
        .init("insights: provider failures group an app's recent failed and invalid deliveries by service and reason") {
            store in
            let phone = try await register(ios(), in: store)
            let tablet = try await register(android(), in: store)
            let old = notification(createdAt: at(-3 * day))
            let recent = notification(createdAt: at(10))
            let elsewhere = notification(app: "b", createdAt: at(10))
            for (item, when) in [(old, at(-3 * day)), (recent, at(10)), (elsewhere, at(10))] {
                let job = try await insertAndClaim(item, in: store)
                var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
                func record(
                    _ installation: Installation, _ outcome: DeliveryRecord.Outcome, _ reason: String?, _ second: Double
                )
                    -> DeliveryRecord
                {
                    DeliveryRecord(
                        notificationID: item.id, installationID: installation.id,
                        tokenSuffix: installation.token.suffix, service: installation.service, outcome: outcome,
                        reason: reason, attempts: 1, at: when.addingTimeInterval(second))
                }
                page.ledger = [
                    record(phone, .failed, "InternalServerError", 1), record(phone, .failed, "InternalServerError", 2),
                    record(phone, .delivered, nil, 3), record(tablet, .invalid, "UNREGISTERED", 4),
                    record(tablet, .retrying, "UNAVAILABLE", 5),
                ]
                page.status = .done
                #expect(try await store.commit(page))
                try await store.finishJob(id: job.id, owner: "w1")
            }
            let failures = try await store.providerFailures(
                appID: "a", since: at(-day), createdSince: at(-2 * day), limit: 10)
            #expect(
                failures == [
                    ProviderFailureSummary(
                        service: .apns, outcome: .failed, reason: "InternalServerError", count: 2, lastAt: at(12)),
                    ProviderFailureSummary(
                        service: .fcm, outcome: .invalid, reason: "UNREGISTERED", count: 1, lastAt: at(14)),
                ])
            #expect(
                try await store.providerFailures(appID: "a", since: at(-day), createdSince: at(-2 * day), limit: 1)
                    .count
                    == 1)
            #expect(
                try await store.providerFailures(appID: "a", since: at(100), createdSince: at(-2 * day), limit: 10)
                    .isEmpty)
        },
    ]
}
