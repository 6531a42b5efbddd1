import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Liveness, readiness and the API description; no authentication.
struct OperationsRoutes: Sendable {
    let store: any Store
    /// What the readiness checks' limits are timed by.
    let clock: any Clock<Duration>

    /// How long each readiness check (a read, then a write) may take: a probe must get an answer even
    /// when a database call hangs (a PostgreSQL connection the server ended can leave one unanswered).
    static let readinessLimit: Duration = .seconds(5)

    /// The database did not answer a readiness check within ``readinessLimit``.
    struct NoAnswer: Error {}

    /// `check`'s result, or ``NoAnswer`` once `limit` has passed on `clock`; a check still running
    /// then is cancelled and left to finish on its own (it may not heed cancellation).
    ///
    /// The check is not a child task on purpose: a query on a PostgreSQL connection that the server
    /// ended may never return, nor heed cancellation (docs/reliability.md), and a child task would
    /// hold `/readyz` until it did — the probe exists to answer when the database does not.
    static func answer(
        within limit: Duration, clock: any Clock<Duration> = ContinuousClock(),
        _ check: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withDeadline(limit, clock: clock, overrun: .leaveCancelled, operation: check) { throw NoAnswer() }
    }

    /// Registers the routes; call it last: the document describes every route registered before
    /// and these.
    func register(on group: RouterGroup<HeraldRequestContext>, table: inout RouteTable) {
        let document = LazyDocument(
            operations: table.operations + [Self.healthOperation, Self.readyOperation, Self.documentOperation])
        table.on(group, prefix: "", Self.healthOperation) { _, _ in
            .json(.object(["status": .string("ok")]))
        }
        table.on(group, prefix: "", Self.readyOperation) { _, context in
            let store = store
            do {
                try await Self.answer(within: Self.readinessLimit, clock: clock) { try await store.ping() }
            } catch {
                context.logger.warning("readiness check failed: database does not answer")
                throw HeraldError.unavailable("The database does not answer.")
            }
            do {
                try await Self.answer(within: Self.readinessLimit, clock: clock) {
                    try await store.probeWrite()
                }
            } catch {
                let failure = HeraldError.classify(error) ?? .storageUnavailable("the write failed")
                context.logger.warning(
                    "readiness check failed: database cannot be written",
                    metadata: ["herald.error": "\(failure.message)"])
                throw failure
            }
            return .json(.object(["status": .string("ready")]))
        }
        table.on(group, prefix: "", Self.documentOperation) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: document.yaml))
        }
    }

    /// The document, encoded at its first request and kept: encoding it (about 350 KB of YAML) is the
    /// largest part of building a router, which every start and every in-process test does, while few
    /// of them ask for the document.
    final class LazyDocument: Sendable {
        private let operations: [APIOperation]
        private let encoded = Mutex<ByteBuffer?>(nil)

        init(operations: [APIOperation]) {
            self.operations = operations
        }

        /// The YAML; the first caller encodes it, others asking meanwhile wait for it.
        var yaml: ByteBuffer {
            encoded.withLock { encoded in
                if let encoded { return encoded }
                let document = ByteBuffer(string: OpenAPIDocument.yaml(operations))
                encoded = document
                return document
            }
        }
    }
}
