import Foundation
import HeraldCore
import Testing

/// The listings a dialect reads through the store's own query: installations sorted, skipped and
/// counted (over ``QueryCases``' fixtures), and notifications by a ``NotificationQuery`` (a
/// dialect's JSON records by an installation query: ``StoreConformance``'s `leanCloudUsers`). Orders are worked out by hand; records
/// that tie follow in id order.
public enum ListingCases {
    static let cases: [StoreConformanceCase] = [
        .init("listing: installations sort by columns and attributes, typed, ties by id") { store in
            let ids = try await registerFixtures(in: store)
            /// The fixtures in the order of `groups`, each group (a tie) in id order.
            func expected(_ groups: [[String]]) -> [String] {
                groups.flatMap { group in group.map { ids[$0]! }.sorted() }
            }
            func listed(
                _ order: [QueryOrder<QueryField>], where json: String = "{}", skip: Int = 0, limit: Int = 100
            )
                async throws -> [String]
            {
                let query = try AudienceQuery(parsing: try JSONValue.parse(Array(json.utf8))).query
                return try await store.installations(
                    appID: QueryCases.app, matching: query, order: order, skip: skip, limit: limit
                ).map(\.id)
            }
            func attribute(_ path: String...) -> QueryField { .attribute(path) }

            #expect(try await listed([]) == ids.values.sorted())
            // Missing or null, then numbers (int and double alike), then strings.
            #expect(
                try await listed([QueryOrder(attribute("level"))])
                    == expected([
                        ["echo", "juliet"], ["lima"], ["golf"], ["delta"], ["hotel"], ["alpha", "mike"], ["foxtrot"],
                        ["charlie"], ["india"], ["kilo"], ["bravo"],
                    ]))
            // Descending: strings by their bytes ("É" after every ASCII letter), missing last.
            #expect(
                try await listed([QueryOrder(attribute("name"), descending: true)])
                    == expected([
                        ["foxtrot"], ["india"], ["hotel"], ["golf"], ["delta"], ["lima"], ["bravo"], ["kilo"],
                        ["charlie"], ["alpha"], ["echo", "juliet", "mike"],
                    ]))
            // Strings before booleans, false before true.
            #expect(
                try await listed([QueryOrder(attribute("vip"))])
                    == expected([
                        ["charlie", "echo", "foxtrot", "juliet", "kilo", "lima"], ["delta"], ["bravo", "hotel"],
                        ["alpha", "golf", "india", "mike"],
                    ]))
            // Objects last, all tied.
            #expect(
                try await listed([QueryOrder(attribute("profile"))])
                    == expected([
                        ["delta", "echo", "hotel", "india", "juliet", "lima", "mike"], ["golf"],
                        ["alpha", "bravo", "charlie", "foxtrot", "kilo"],
                    ]))
            #expect(
                try await listed([QueryOrder(attribute("profile", "age"))])
                    == expected([
                        ["charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "lima", "mike"],
                        ["bravo"], ["alpha"], ["kilo"],
                    ]))
            #expect(
                try await listed([QueryOrder(attribute("score"), descending: true)])
                    == expected([
                        ["kilo"], ["charlie"], ["bravo"], ["alpha"], ["hotel"], ["foxtrot"],
                        ["delta", "echo", "golf", "india", "juliet", "lima", "mike"],
                    ]))
            // Two column keys; channels (an array) leaves the order as it is.
            #expect(
                try await listed([
                    QueryOrder(.column(.platform)), QueryOrder(.column(.badge), descending: true),
                    QueryOrder(.column(.channels)),
                ])
                    == expected([
                        ["echo"], ["bravo"], ["golf", "juliet"], ["india"], ["delta", "lima"], ["alpha", "mike"],
                        ["foxtrot"], ["kilo"], ["charlie"], ["hotel"],
                    ]))
            // A where, an order, a page of it, and the count of all its matches (the invalid one too).
            let news = #"{"channels": "news"}"#
            let newsOrder = [QueryOrder(QueryField.column(.badge), descending: true)]
            #expect(
                try await listed(newsOrder, where: news, skip: 1, limit: 2) == expected([["kilo"], ["foxtrot"]]))
            #expect(
                try await listed(newsOrder, where: news)
                    == expected([["india"], ["kilo"], ["foxtrot"], ["bravo"], ["alpha", "mike"]]))
            #expect(try await listed(newsOrder, where: news, skip: 6).isEmpty)
            let newsQuery = try AudienceQuery(parsing: try JSONValue.parse(Array(news.utf8))).query
            #expect(try await store.countInstallations(appID: QueryCases.app, matching: newsQuery) == 6)
            #expect(try await store.countInstallations(appID: "nobody", matching: newsQuery) == 0)
        },
        .init("listing: notifications by status, source, counts and times, sorted and counted") { store in
            let app = "n"
            // Done: 3 targeted, 2 sent, 1 failed.
            let done = notification(app, source: "leancloud", createdAt: 0)
            let doneJob = try await StoreConformance.insertAndClaim(done, in: store)
            var page = PageCommit(jobID: doneJob.id, owner: "w1", notificationID: done.id)
            page.counts = NotificationCounts(targeted: 3, sent: 2, failed: 1)
            page.status = .done
            page.startedAt = StoreConformance.at(1)
            page.completedAt = StoreConformance.at(2)
            page.cursor = "done"
            page.finishesJob = true
            #expect(try await store.commit(page))
            // Sending: 5 targeted, 1 sent, 2 invalid so far; expires.
            let sending = notification(app, source: "leancloud", createdAt: 30, expiresAt: 100)
            let sendingJob = try await StoreConformance.insertAndClaim(sending, in: store)
            page = PageCommit(jobID: sendingJob.id, owner: "w1", notificationID: sending.id)
            page.counts = NotificationCounts(targeted: 5, sent: 1, invalid: 2)
            page.status = .sending
            page.startedAt = StoreConformance.at(31)
            #expect(try await store.commit(page))
            // Scheduled an hour on; and one of the native API's.
            var scheduled = notification(app, source: "leancloud", createdAt: 10)
            scheduled.status = .scheduled
            scheduled.notBefore = StoreConformance.at(3600)
            _ = try await store.insertNotification(
                scheduled, runAt: StoreConformance.at(3600), idempotencyWindow: .seconds(60))
            let native = notification(app, source: nil, createdAt: 20)
            _ = try await store.insertNotification(
                native, runAt: StoreConformance.at(3600), idempotencyWindow: .seconds(60))
            _ = try await store.insertNotification(
                notification("other", source: "leancloud", createdAt: 0), runAt: StoreConformance.at(3600),
                idempotencyWindow: .seconds(60))

            func ids(
                _ query: NotificationQuery, _ order: [QueryOrder<NotificationQuery.Field>] = [], skip: Int = 0,
                limit: Int = 10
            ) async throws -> [String] {
                try await store.notifications(appID: app, matching: query, order: order, skip: skip, limit: limit)
                    .map(\.id)
            }
            func condition(_ field: NotificationQuery.Field, _ op: QueryOperator) -> NotificationQuery {
                .condition(field: field, op: op)
            }
            let date = { (seconds: Double) in QueryValue.date(StoreConformance.at(seconds)) }
            let leanCloud = condition(.source, .equal(.string("leancloud")))
            let all = [done.id, sending.id, scheduled.id, native.id].sorted()
            #expect(try await ids(.and([])) == all)
            #expect(try await ids(leanCloud) == [done.id, sending.id, scheduled.id].sorted())
            #expect(try await ids(condition(.source, .equal(.null))) == [native.id])
            #expect(
                try await ids(condition(.status, .in([.string("queued"), .string("sending")]))).sorted()
                    == [sending.id, native.id].sorted())
            #expect(try await ids(condition(.targeted, .equal(.number(JSONNumber(3))))) == [done.id])
            // Strict on type: a count never equals a string.
            #expect(try await ids(condition(.targeted, .equal(.string("3")))).isEmpty)
            #expect(
                try await ids(condition(.failedOrInvalid, .compare(.greaterThanOrEqual, .number(JSONNumber(1)))))
                    == [done.id, sending.id].sorted())
            #expect(try await ids(condition(.failedOrInvalid, .equal(.number(JSONNumber(2))))) == [sending.id])
            #expect(
                try await ids(condition(.createdAt, .compare(.lessThan, date(15)))) == [done.id, scheduled.id].sorted())
            // Changed at: completed, else started, else created.
            #expect(
                try await ids(condition(.changedAt, .compare(.lessThanOrEqual, date(10))))
                    == [done.id, scheduled.id].sorted())
            #expect(try await ids(condition(.changedAt, .equal(date(31)))) == [sending.id])
            #expect(try await ids(condition(.notBefore, .exists(true))) == [scheduled.id])
            #expect(try await ids(condition(.expiresAt, .notEqual(.null))) == [sending.id])
            #expect(
                try await ids(
                    .or([
                        condition(.id, .equal(.string(done.id))),
                        condition(.sent, .compare(.greaterThan, .number(JSONNumber(1)))),
                    ])) == [done.id])
            #expect(try await ids(.and([leanCloud, .or([])])).isEmpty)

            // Orders: newest first; by counts, missing times first.
            #expect(
                try await ids(leanCloud, [QueryOrder(.createdAt, descending: true)])
                    == [sending.id, scheduled.id, done.id])
            #expect(
                try await ids(.and([]), [QueryOrder(.failedOrInvalid, descending: true), QueryOrder(.createdAt)])
                    == [sending.id, done.id, scheduled.id, native.id])
            #expect(
                try await ids(.and([]), [QueryOrder(.notBefore, descending: true), QueryOrder(.createdAt)])
                    == [scheduled.id, done.id, native.id, sending.id])
            #expect(try await ids(leanCloud, [QueryOrder(.createdAt)], skip: 1, limit: 1) == [scheduled.id])
            #expect(try await store.countNotifications(appID: app, matching: leanCloud) == 3)
            #expect(try await store.countNotifications(appID: app, matching: .or([])) == 0)
        },
    ]

    /// Registers ``QueryCases``' fixtures and the invalid one.
    /// - Returns: The installation id of each fixture, by name.
    static func registerFixtures(in store: any HeraldStore) async throws -> [String: String] {
        var ids: [String: String] = [:]
        for (index, fixture) in QueryCases.fixtures.enumerated() {
            let stored = try await store.register(
                try fixture.registration(), appID: QueryCases.app, now: StoreConformance.at(Double(index) * 60))
            ids[fixture.name] = stored.installation.id
        }
        let invalid = try await store.register(
            try QueryCases.invalid.registration(), appID: QueryCases.app, now: StoreConformance.now)
        try await StoreConformance.applyEvents(
            [(invalid.installation.id, .invalidated(reason: "Unregistered", since: nil, at: StoreConformance.now))],
            in: store)
        ids[QueryCases.invalid.name] = invalid.installation.id
        _ = try await store.register(
            try QueryCases.fixtures[0].registration(), appID: "other", now: StoreConformance.now)
        return ids
    }

    private static func notification(
        _ app: String, source: String?, createdAt seconds: Double, expiresAt: Double? = nil
    ) -> PushNotification {
        var notification = StoreConformance.notification(app: app, createdAt: StoreConformance.at(seconds))
        notification.source = source
        notification.expiresAt = expiresAt.map(StoreConformance.at)
        return notification
    }
}
