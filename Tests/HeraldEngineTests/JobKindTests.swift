import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import Testing

@testable import HeraldEngine

/// A job whose kind this version does not know, as a store reads it back: the engine logs it and
/// finishes it (the decision itself is ``FanoutMachineTests``').
@Suite("Job kinds through a store")
struct JobKindTests {
    @Test("a stored job of an unknown kind comes back with its name, and working it finishes it")
    func unknownKindFinished() async throws {
        let store = MemoryStore()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let dispatcher = Dispatcher(
            store: store, transports: [:], configuration: EngineConfiguration(cleanupInterval: nil), logger: logger)
        let now = Date()
        try await store.scheduleJob(kind: JobKind(rawValue: "retired"), reference: "x", runAt: now)
        let job = try #require(
            try await store.claimJob(
                kinds: [.unknown("retired")], owner: "w", now: now, lockedUntil: now.addingTimeInterval(60)))
        #expect(job.kind == .unknown("retired"))
        try await dispatcher.process(job, owner: "w", isStopping: { false })
        #expect(try await store.queueStatistics(now: now.addingTimeInterval(3600)) == QueueStatistics())
    }
}
