import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldPostgres
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// A notification larger than `engine.range_size` is cut into ranges, each a job of its own.
@Suite("Broadcasts cut into ranges", .serialized)
struct RangedFanoutTests {
    /// Ranges of 50 recipients, pages of 20 in batches of 10.
    static let engine = EngineConfiguration(
        pageSize: 20, pipelineDepth: 2, rangeSize: 50,
        retryPolicy: RetryPolicy(base: .seconds(1), cap: .seconds(10), maxAttempts: 3), cleanupInterval: nil)

    /// Runs `test` on an engine harness over a fresh store of the kind named.
    static func withHarness(
        _ storeKind: String, _ test: @Sendable (EngineHarness, API) async throws -> Void
    ) async throws {
        var database: PostgresTestDatabase?
        var given: (store: any HeraldStore, cipher: TokenCipher)?
        if storeKind == "postgres" {
            let created = try await PostgresTestDatabase.create()
            database = created
            let cipher = Fixtures.cipher()
            given = (try PostgresStore.started(url: created.url, cipher: cipher), cipher)
        }
        let harness = try await EngineHarness(engine: engine, store: given)
        do {
            try await harness.run { api in try await test(harness, api) }
        } catch {
            await (given?.store as? PostgresStore)?.close()
            try? await database?.drop()
            throw error
        }
        await (given?.store as? PostgresStore)?.close()
        try await database?.drop()
    }

    /// Registers `count` iOS devices through the API and returns their tokens.
    static func registerDevices(_ count: Int, _ api: API) async throws -> [String] {
        var tokens: [String] = []
        for _ in 0..<count {
            let token = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            tokens.append(token)
        }
        return tokens
    }

    @Test(
        "230 devices, ranges of 50: five range jobs, every device once, a retry worked after the ranges, counts exact, closed once",
        arguments: ["sqlite", "postgres"])
    func broadcastInRanges(_ storeKind: String) async throws {
        try await Self.withHarness(storeKind) { harness, api in
            let tokens = try await Self.registerDevices(230, api)
            // One device answers 503 once: its retry waits in the pending table until the ranges are done.
            harness.apns.script(token: tokens[117], .serviceUnavailable(), times: 1)
            let id = try await api.send(#"{"target":{"all":true},"payload":{"title":"Everyone"}}"#)
            let store = harness.server.store

            // The notification's job only cuts: five ranges, each a job, and it waits for them.
            let dispatcher = harness.server.dispatcher
            let now = harness.server.clock.date
            let parent = try #require(
                try await store.claimJob(
                    kinds: [.notification], owner: "cutter", now: now, lockedUntil: now.addingTimeInterval(60)))
            try await dispatcher.process(parent, owner: "cutter", isStopping: { false })
            #expect(harness.apns.requests.isEmpty)
            let ranges = try await store.fanoutRanges(notificationID: id)
            #expect(ranges.count == 5)
            #expect(ranges.last?.through == nil)
            #expect(try await store.cursor(notificationID: id) == FanoutRange.ranged)
            #expect(try await api.notification(id).string("status") == "sending")

            // Workers claim the ranges (here one after another), then the notification's job is due.
            try await harness.drain()
            let received = harness.apns.requests.compactMap(\.token)
            #expect(received.count == 230)
            #expect(Set(received) == Set(tokens))
            #expect(try await store.fanoutRanges(notificationID: id).allSatisfy { $0.cursor == "done" })
            var record = try await api.notification(id)
            #expect(record.string("status") == "sending")
            #expect(record.int("counts.targeted") == 230)
            #expect(record.int("counts.sent") == 229)

            // The retry is due within the policy's ceiling: it goes, and the notification closes.
            harness.server.clock.advance(by: .seconds(11))
            try await harness.drain()
            #expect(harness.apns.requests.count == 231)
            record = try await api.notification(id)
            #expect(record.string("status") == "done")
            #expect(record.int("counts.targeted") == 230)
            #expect(record.int("counts.sent") == 230)
            #expect(record.int("counts.failed") == 0)
            let queue = try await store.queueStatistics(now: harness.server.clock.date.addingTimeInterval(3600))
            #expect(queue.due + queue.running + queue.scheduled == 0, "\(queue)")
        }
    }

    @Test(
        "A worker that died while cutting: once its lease runs out, the next one cuts on from the last range stored",
        arguments: ["sqlite", "postgres"])
    func cuttingResumes(_ storeKind: String) async throws {
        try await Self.withHarness(storeKind) { harness, api in
            let tokens = try await Self.registerDevices(120, api)
            let id = try await api.send(#"{"target":{"all":true},"payload":{"title":"Everyone"}}"#)
            let store = harness.server.store
            let now = harness.server.clock.date
            // The first range stored, then the worker gone.
            let parent = try #require(
                try await store.claimJob(
                    kinds: [.notification], owner: "dead", now: now, lockedUntil: now.addingTimeInterval(60)))
            let through = try await store.rangeBoundary(
                NotificationTarget(audience: .all), appID: "demo", after: nil, skip: Self.engine.rangeSize)
            let first = FanoutRange(notificationID: id, index: 0, after: nil, through: through)
            #expect(
                try await store.addRange(
                    first, jobID: parent.id, owner: "dead", now: now, lockedUntil: now.addingTimeInterval(60),
                    waitUntil: now.addingTimeInterval(600)))
            #expect(try await store.cursor(notificationID: id) == FanoutRange.ranging)

            harness.server.clock.advance(by: .seconds(61))
            try await harness.drain()
            #expect(try await store.fanoutRanges(notificationID: id).map(\.index) == [0, 1, 2])
            let received = harness.apns.requests.compactMap(\.token)
            #expect(received.count == 120)
            #expect(Set(received) == Set(tokens))
            let record = try await api.notification(id)
            #expect(record.string("status") == "done")
            #expect(record.int("counts.targeted") == 120)
            #expect(record.int("counts.sent") == 120)
        }
    }

    @Test(
        "A cancel ends the ranges; an expiry counts every range's recipients expired",
        arguments: ["sqlite", "postgres"])
    func cancelAndExpiry(_ storeKind: String) async throws {
        try await Self.withHarness(storeKind) { harness, api in
            _ = try await Self.registerDevices(120, api)
            let store = harness.server.store
            let dispatcher = harness.server.dispatcher
            func cut() async throws {
                let now = harness.server.clock.date
                let parent = try #require(
                    try await store.claimJob(
                        kinds: [.notification], owner: "cutter", now: now, lockedUntil: now.addingTimeInterval(60)))
                try await dispatcher.process(parent, owner: "cutter", isStopping: { false })
            }

            let canceled = try await api.send(#"{"target":{"all":true},"payload":{"title":"Never"}}"#)
            try await cut()
            #expect(try await store.fanoutRanges(notificationID: canceled).count == 3)
            #expect(try await api.call(.delete, "/v1/notifications/\(canceled)").status == .ok)
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            #expect(try await api.notification(canceled).int("counts.targeted") == 0)

            let expiring = try await api.send(
                #"{"target":{"all":true},"payload":{"title":"Soon"},"expiration_interval":30}"#)
            try await cut()
            harness.server.clock.advance(by: .seconds(31))
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            let record = try await api.notification(expiring)
            #expect(record.string("status") == "expired")
            #expect(record.int("counts.targeted") == 120)
            #expect(record.int("counts.skipped_expired") == 120)
        }
    }
}
