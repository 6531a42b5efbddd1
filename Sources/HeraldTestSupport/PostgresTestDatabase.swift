import Foundation
import Logging
import PostgresNIO

/// A fresh PostgreSQL database for one test, on the cluster `HERALD_TEST_POSTGRES` names — or, when
/// that is unset, on the throwaway cluster `scripts/postgres` installs and starts (so PostgreSQL
/// tests run, never skip, on a machine without it). ``drop()`` removes the database.
public struct PostgresTestDatabase: Sendable {
    /// The database's URL (`postgres://…/herald_test_…`).
    public let url: String
    /// Its name.
    public let name: String
    private let server: URLComponents

    /// Creates a database with a random name.
    /// - Throws: When the cluster cannot be started or reached.
    public static func create() async throws -> PostgresTestDatabase {
        let serverURL = try await serverURL()
        guard let components = URLComponents(string: serverURL) else {
            throw PostgresTestDatabaseError("HERALD_TEST_POSTGRES is not a URL: \(serverURL)")
        }
        let name = "herald_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await Self.administer(components, "CREATE DATABASE \(name)")
        var database = components
        database.path = "/" + name
        guard let url = database.string else { throw PostgresTestDatabaseError("Cannot form the database URL.") }
        return PostgresTestDatabase(url: url, name: name, server: components)
    }

    /// Drops the database (closing whatever connections are still open on it).
    public func drop() async throws {
        try await Self.administer(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Runs one statement on the cluster's maintenance database (as the cluster's owner): settings of
    /// this database, or ending its connections.
    public func administer(_ statement: String) async throws {
        try await Self.administer(server, statement)
    }

    /// The cluster's URL, `HERALD_TEST_POSTGRES`. Tests install nothing: `scripts/test` starts the
    /// cluster (`scripts/postgres`, which installs PostgreSQL when missing) and exports its URL.
    public static func serverURL() async throws -> String {
        guard let url = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES"], !url.isEmpty else {
            throw PostgresTestDatabaseError(
                "HERALD_TEST_POSTGRES is unset: export HERALD_TEST_POSTGRES=$(scripts/postgres) (scripts/test does)")
        }
        return url
    }

    /// Runs one statement on the cluster's maintenance database.
    private static func administer(_ server: URLComponents, _ statement: String) async throws {
        let path = server.path.hasPrefix("/") ? String(server.path.dropFirst()) : server.path
        let configuration = PostgresConnection.Configuration(
            host: server.host ?? "127.0.0.1", port: server.port ?? 5432, username: server.user ?? "postgres",
            password: server.password, database: path.isEmpty ? "postgres" : path, tls: .disable)
        let logger = Logger(label: "herald.test.postgres")
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }
}

/// The test cluster could not be started or reached.
public struct PostgresTestDatabaseError: Error, CustomStringConvertible {
    public var description: String

    /// Creates an error with its message.
    public init(_ description: String) { self.description = description }
}
