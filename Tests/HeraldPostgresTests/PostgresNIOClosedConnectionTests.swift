import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import Testing

@testable import HeraldPostgres

/// The PostgresNIO behaviour behind `postgres.call_timeout_ms` (PostgresStore.bounded), reduced to its
/// core: a statement written to a connection whose channel is already closed is dropped without an
/// answer (PostgresNIO writes each statement with `channel.write(task, promise: nil)`, and a write to
/// a torn-down pipeline fails silently), so the statement's future never completes. When this test
/// fails, PostgresNIO answers such a statement itself and the deadline's reason to exist is gone.
@Suite("PostgresNIO: a statement on a closed connection")
struct PostgresNIOClosedConnectionTests {
    @Test("is never answered by PostgresNIO; within a store call's deadline it fails as storage_unavailable")
    func statementOnClosedConnection() async throws {
        let database = try await PostgresTestDatabase.create()
        let configuration = try PostgresStoreConfiguration(url: database.url)
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: .disable),
            id: 1, logger: Logger(label: "test"))
        try await connection.close()
        #expect(connection.isClosed)

        // PostgresNIO's own future: nothing completes it. The statement goes to the channel as a task on
        // the connection's event loop; once the loop has run the tasks queued after it, the write has
        // failed, and nothing was told.
        let future: EventLoopFuture<PostgresQueryResult> = connection.query(
            PostgresQuery(unsafeSQL: "SELECT 1"), logger: Logger(label: "test"))
        let answered = Mutex(false)
        future.whenComplete { _ in answered.withLock { $0 = true } }
        for _ in 0..<3 { try await connection.eventLoop.submit {}.get() }
        #expect(!answered.withLock { $0 }, "PostgresNIO now answers a statement on a closed connection")

        // Herald's wait for it ends with the deadline, as `storage_unavailable`.
        let deadline = CallDeadline(limit: .milliseconds(100))
        let timer = connection.eventLoop.scheduleTask(in: .milliseconds(100)) { _ = deadline.expire() }
        defer { timer.cancel() }
        let again: EventLoopFuture<PostgresQueryResult> = connection.query(
            PostgresQuery(unsafeSQL: "SELECT 1"), logger: Logger(label: "test"))
        let error = await #expect(throws: HeraldError.self) { try await deadline.wait(for: again) }
        #expect(error?.code == "storage_unavailable")
        try await database.drop()
    }
}
