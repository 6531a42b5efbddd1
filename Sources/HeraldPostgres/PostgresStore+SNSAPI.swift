import Foundation
import HeraldCore
import PostgresNIO

// The methods of `SNSAPIStore`, the protocol its dialect (`HeraldSNSAPI`) declares; this module does not
// import the dialect, so `HeraldServer` declares the conformance (docs/architecture.md, "Adding a
// dialect").
extension PostgresStore {
    // MARK: Platform applications

    public func putSNSPlatformApplication(
        _ application: SNSPlatformApplication
    ) async throws -> SNSPlatformApplication {
        let attributes = String(
            decoding: JSONValue.object(application.attributes.mapValues(JSONValue.string)).serialized(), as: UTF8.self)
        let rows = try await read { connection in
            try await connection.rows(
                """
                INSERT INTO sns_platform_applications (app_id, name, platform, attributes, created_at)
                VALUES ($1, $2, $3, $4::jsonb, $5)
                ON CONFLICT (app_id, name) DO UPDATE SET attributes = excluded.attributes
                RETURNING \(Self.applicationColumns)
                """,
                [
                    application.appID, application.name, application.platform, attributes,
                    application.createdAt.timeIntervalSince1970,
                ])
        }
        guard let stored = try rows.first.map(Self.platformApplication) else {
            throw HeraldError.internal("The platform application was not stored.")
        }
        return stored
    }

    public func snsPlatformApplication(appID: String, name: String) async throws -> SNSPlatformApplication? {
        try await read { connection in
            try await connection.rows(
                "SELECT \(Self.applicationColumns) FROM sns_platform_applications WHERE app_id = $1 AND name = $2",
                [appID, name])
        }.first.map(Self.platformApplication)
    }

    public func snsPlatformApplications(
        appID: String, after: String?, limit: Int
    ) async throws -> [SNSPlatformApplication] {
        try await read { connection in
            try await connection.rows(
                """
                SELECT \(Self.applicationColumns) FROM sns_platform_applications
                WHERE app_id = $1 AND name > $2 ORDER BY name LIMIT $3
                """, [appID, after ?? "", limit])
        }.map(Self.platformApplication)
    }

    public func deleteSNSPlatformApplication(appID: String, name: String) async throws -> Bool {
        try await transaction { connection in
            guard
                try await connection.changes(
                    "DELETE FROM sns_platform_applications WHERE app_id = $1 AND name = $2", [appID, name]) > 0
            else { return false }
            try await connection.run(
                """
                DELETE FROM installations
                WHERE app_id = $1 AND attributes ? 'sns_platform_application'
                    AND attributes->>'sns_platform_application' = $2
                """, [appID, name])
            return true
        }
    }

    private static let applicationColumns = "app_id, name, platform, attributes::text AS attributes, created_at"

    private static func platformApplication(_ row: PostgresRandomAccessRow) throws -> SNSPlatformApplication {
        let raw = try row.get("attributes", as: String.self)
        var attributes: [String: String] = [:]
        if case .object(let members) = try JSONValue.parse(Array(raw.utf8)) {
            for (key, value) in members { if case .string(let text) = value { attributes[key] = text } }
        }
        return SNSPlatformApplication(
            appID: try row.get("app_id"), name: try row.get("name"), platform: try row.get("platform"),
            attributes: attributes, createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0))
    }

    // MARK: Endpoints

    public func snsEndpoints(
        appID: String, application: String, after: String?, limit: Int
    ) async throws -> [Installation] {
        try await read { connection in
            try await self.fetchInstallations(
                connection,
                where: """
                    app_id = $1 AND attributes ? 'sns_platform_application'
                        AND attributes->>'sns_platform_application' = $2 AND id > $3
                    ORDER BY id LIMIT $4
                    """, [appID, application, after ?? "", limit])
        }
    }

    // MARK: Topics and subscriptions

    public func putSNSTopic(_ topic: SNSTopic) async throws -> SNSTopic {
        try await transaction { connection in
            try await connection.run(
                "INSERT INTO sns_topics (app_id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (app_id, name) DO NOTHING",
                [topic.appID, topic.name, topic.createdAt.timeIntervalSince1970])
            guard
                let stored = try await connection.rows(
                    "SELECT * FROM sns_topics WHERE app_id = $1 AND name = $2", [topic.appID, topic.name]
                ).first.map(Self.topic)
            else { throw HeraldError.internal("The topic was not stored.") }
            return stored
        }
    }

    public func snsTopic(appID: String, name: String) async throws -> SNSTopic? {
        try await read { connection in
            try await connection.rows("SELECT * FROM sns_topics WHERE app_id = $1 AND name = $2", [appID, name])
        }.first.map(Self.topic)
    }

    public func snsTopics(appID: String, after: String?, limit: Int) async throws -> [SNSTopic] {
        try await read { connection in
            try await connection.rows(
                "SELECT * FROM sns_topics WHERE app_id = $1 AND name > $2 ORDER BY name LIMIT $3",
                [appID, after ?? "", limit])
        }.map(Self.topic)
    }

    public func deleteSNSTopic(appID: String, name: String) async throws -> [SNSSubscription]? {
        try await transaction { connection in
            let subscriptions = try await connection.rows(
                "SELECT * FROM sns_subscriptions WHERE app_id = $1 AND topic = $2 FOR UPDATE", [appID, name]
            ).map(Self.subscription)
            let deleted = try await connection.changes(
                "DELETE FROM sns_topics WHERE app_id = $1 AND name = $2", [appID, name])
            return deleted > 0 ? subscriptions : nil
        }
    }

    public func putSNSSubscription(_ subscription: SNSSubscription) async throws -> SNSSubscription {
        try await transaction { connection in
            try await connection.run(
                """
                INSERT INTO sns_subscriptions (id, app_id, topic, installation_id, created_at)
                VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (app_id, topic, installation_id) DO NOTHING
                """,
                [
                    subscription.id, subscription.appID, subscription.topic, subscription.installationID,
                    subscription.createdAt.timeIntervalSince1970,
                ])
            guard
                let stored = try await connection.rows(
                    "SELECT * FROM sns_subscriptions WHERE app_id = $1 AND topic = $2 AND installation_id = $3",
                    [subscription.appID, subscription.topic, subscription.installationID]
                ).first.map(Self.subscription)
            else { throw HeraldError.internal("The subscription was not stored.") }
            return stored
        }
    }

    public func snsSubscription(appID: String, id: String) async throws -> SNSSubscription? {
        try await read { connection in
            try await connection.rows("SELECT * FROM sns_subscriptions WHERE app_id = $1 AND id = $2", [appID, id])
        }.first.map(Self.subscription)
    }

    public func snsSubscriptions(
        appID: String, topic: String, after: String?, limit: Int
    ) async throws -> [SNSSubscription] {
        try await read { connection in
            try await connection.rows(
                """
                SELECT * FROM sns_subscriptions WHERE app_id = $1 AND topic = $2 AND installation_id > $3
                ORDER BY installation_id LIMIT $4
                """, [appID, topic, after ?? "", limit])
        }.map(Self.subscription)
    }

    public func deleteSNSSubscription(appID: String, id: String) async throws -> Bool {
        try await read { connection in
            try await connection.changes("DELETE FROM sns_subscriptions WHERE app_id = $1 AND id = $2", [appID, id]) > 0
        }
    }

    private static func topic(_ row: PostgresRandomAccessRow) throws -> SNSTopic {
        SNSTopic(
            appID: try row.get("app_id"), name: try row.get("name"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0))
    }

    private static func subscription(_ row: PostgresRandomAccessRow) throws -> SNSSubscription {
        SNSSubscription(
            appID: try row.get("app_id"), id: try row.get("id"), topic: try row.get("topic"),
            installationID: try row.get("installation_id"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0))
    }
}
