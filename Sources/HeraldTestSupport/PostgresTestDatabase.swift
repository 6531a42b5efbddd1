import Foundation
import Logging
import PostgresNIO

/// A fresh PostgreSQL database for one test, on the cluster `HERALD_TEST_POSTGRES` names (the throwaway
/// cluster `scripts/postgres` starts; a PostgreSQL test without it fails, it is not skipped). ``drop()`` removes
/// the database.
public struct PostgresTestDatabase: Sendable {
    /// The database's URL (`postgres://…/herald_test_…`).
    public let url: String
    /// Its name.
    public let name: String
    private let server: URLComponents

    /// Creates a database with a random name.
    /// - Throws: When the cluster cannot be started or reached.
    public static func create() async throws -> PostgresTestDatabase {
        try await create(on: components(), copying: nil)
    }

    /// Creates a database with a random name that is a copy (`CREATE DATABASE … TEMPLATE`) of a template `prepare`
    /// made once in this test process, given the template's URL: a store's migrations run once, not once per case.
    /// The template stays on the throwaway cluster until `scripts/postgres` next starts it.
    /// - Throws: When the cluster cannot be reached, or `prepare` fails.
    public static func create(
        template prepare: @escaping @Sendable (_ url: String) async throws -> Void
    ) async throws -> PostgresTestDatabase {
        let components = try await components()
        let template = try await templates.name(on: components, prepare: prepare)
        return try await create(on: components, copying: template)
    }

    /// Creates a database with a random name on another cluster than `HERALD_TEST_POSTGRES`'s, given its URL.
    /// - Throws: When the URL is not one, or the cluster cannot be reached.
    public static func create(server serverURL: String) async throws -> PostgresTestDatabase {
        guard let components = URLComponents(string: serverURL) else {
            throw PostgresTestDatabaseError("not a PostgreSQL URL: \(serverURL)")
        }
        return try await create(on: components, copying: nil)
    }

    private static func components() async throws -> URLComponents {
        let serverURL = try await serverURL()
        guard let components = URLComponents(string: serverURL) else {
            throw PostgresTestDatabaseError("HERALD_TEST_POSTGRES is not a URL: \(serverURL)")
        }
        return components
    }

    private static func create(on components: URLComponents, copying template: String?) async throws -> Self {
        let name = "herald_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await Self.administer(components, "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? ""))
        return try PostgresTestDatabase(name: name, on: components)
    }

    private init(name: String, on server: URLComponents) throws {
        var database = server
        database.path = "/" + name
        guard let url = database.string else { throw PostgresTestDatabaseError("Cannot form the database URL.") }
        self.init(url: url, name: name, server: server)
    }

    private init(url: String, name: String, server: URLComponents) {
        self.url = url
        self.name = name
        self.server = server
    }

    /// The one template of this process, made by the first caller while the others wait.
    private static let templates = Templates()

    private actor Templates {
        private var made: Task<String, any Error>?

        func name(
            on server: URLComponents, prepare: @escaping @Sendable (String) async throws -> Void
        )
            async throws -> String
        {
            if let made { return try await made.value }
            let task = Task {
                let database = try await PostgresTestDatabase.create(on: server, copying: nil)
                try await prepare(database.url)
                // A template must have no open connection while it is copied: `prepare` closes its own, and
                // nothing else ever connects to it.
                return database.name
            }
            made = task
            return try await task.value
        }
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
