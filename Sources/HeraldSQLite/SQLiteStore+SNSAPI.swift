import Foundation
import GRDB
import HeraldCore

// The methods of `SNSAPIStore`, the protocol its dialect (`HeraldSNSAPI`) declares; this module does not
// import the dialect, so `HeraldServer` declares the conformance (docs/architecture.md, "Adding a
// dialect").
extension SQLiteStore {
    // MARK: Platform applications

    public func putSNSPlatformApplication(
        _ application: SNSPlatformApplication
    ) async throws -> SNSPlatformApplication {
        let attributes = String(
            decoding: JSONValue.object(application.attributes.mapValues(JSONValue.string)).serialized(), as: UTF8.self)
        return try await durableWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO sns_platform_applications (app_id, name, platform, attributes, created_at)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, name) DO UPDATE SET attributes = excluded.attributes
                    """,
                arguments: [
                    application.appID, application.name, application.platform, attributes,
                    application.createdAt.timeIntervalSince1970,
                ])
            guard let stored = try Self.platformApplication(db, appID: application.appID, name: application.name)
            else { throw HeraldError.internal("The platform application was not stored.") }
            return stored
        }
    }

    public func snsPlatformApplication(appID: String, name: String) async throws -> SNSPlatformApplication? {
        try await database.read { db in try Self.platformApplication(db, appID: appID, name: name) }
    }

    public func snsPlatformApplications(
        appID: String, after: String?, limit: Int
    ) async throws -> [SNSPlatformApplication] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM sns_platform_applications WHERE app_id = ? AND name > ? ORDER BY name LIMIT ?",
                arguments: [appID, after ?? "", limit]
            ).map(Self.platformApplication)
        }
    }

    public func deleteSNSPlatformApplication(appID: String, name: String) async throws -> Bool {
        try await durableWrite { db in
            try db.execute(
                sql: "DELETE FROM sns_platform_applications WHERE app_id = ? AND name = ?", arguments: [appID, name])
            guard db.changesCount > 0 else { return false }
            try db.execute(
                sql: """
                    DELETE FROM installations
                    WHERE app_id = ? AND json_extract(attributes, '$.sns_platform_application') = ?
                    """,
                arguments: [appID, name])
            return true
        }
    }

    private static func platformApplication(
        _ db: Database, appID: String, name: String
    ) throws
        -> SNSPlatformApplication?
    {
        try Row.fetchOne(
            db, sql: "SELECT * FROM sns_platform_applications WHERE app_id = ? AND name = ?",
            arguments: [appID, name]
        ).map(platformApplication)
    }

    private static func platformApplication(_ row: Row) throws -> SNSPlatformApplication {
        let raw: String = row["attributes"]
        var attributes: [String: String] = [:]
        if case .object(let members) = try JSONValue.parse(Array(raw.utf8)) {
            for (key, value) in members { if case .string(let text) = value { attributes[key] = text } }
        }
        return SNSPlatformApplication(
            appID: row["app_id"], name: row["name"], platform: row["platform"], attributes: attributes,
            createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }

    // MARK: Endpoints

    public func snsEndpoints(
        appID: String, application: String, after: String?, limit: Int
    ) async throws -> [Installation] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM installations
                    WHERE app_id = ? AND json_extract(attributes, '$.sns_platform_application') = ? AND id > ?
                    ORDER BY id LIMIT ?
                    """,
                arguments: [appID, application, after ?? "", limit]
            ).map(self.decode)
        }
    }

    // MARK: Topics and subscriptions

    public func putSNSTopic(_ topic: SNSTopic) async throws -> SNSTopic {
        try await durableWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO sns_topics (app_id, name, created_at) VALUES (?, ?, ?)
                    ON CONFLICT (app_id, name) DO NOTHING
                    """,
                arguments: [topic.appID, topic.name, topic.createdAt.timeIntervalSince1970])
            guard let stored = try Self.topic(db, appID: topic.appID, name: topic.name) else {
                throw HeraldError.internal("The topic was not stored.")
            }
            return stored
        }
    }

    public func snsTopic(appID: String, name: String) async throws -> SNSTopic? {
        try await database.read { db in try Self.topic(db, appID: appID, name: name) }
    }

    public func snsTopics(appID: String, after: String?, limit: Int) async throws -> [SNSTopic] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM sns_topics WHERE app_id = ? AND name > ? ORDER BY name LIMIT ?",
                arguments: [appID, after ?? "", limit]
            ).map(Self.topic)
        }
    }

    public func deleteSNSTopic(appID: String, name: String) async throws -> [SNSSubscription]? {
        try await durableWrite { db in
            let subscriptions = try Row.fetchAll(
                db, sql: "SELECT * FROM sns_subscriptions WHERE app_id = ? AND topic = ?", arguments: [appID, name]
            ).map(Self.subscription)
            try db.execute(sql: "DELETE FROM sns_topics WHERE app_id = ? AND name = ?", arguments: [appID, name])
            return db.changesCount > 0 ? subscriptions : nil
        }
    }

    public func putSNSSubscription(_ subscription: SNSSubscription) async throws -> SNSSubscription {
        try await durableWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO sns_subscriptions (id, app_id, topic, installation_id, created_at)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (app_id, topic, installation_id) DO NOTHING
                    """,
                arguments: [
                    subscription.id, subscription.appID, subscription.topic, subscription.installationID,
                    subscription.createdAt.timeIntervalSince1970,
                ])
            guard
                let stored = try Row.fetchOne(
                    db,
                    sql: "SELECT * FROM sns_subscriptions WHERE app_id = ? AND topic = ? AND installation_id = ?",
                    arguments: [subscription.appID, subscription.topic, subscription.installationID]
                ).map(Self.subscription)
            else { throw HeraldError.internal("The subscription was not stored.") }
            return stored
        }
    }

    public func snsSubscription(appID: String, id: String) async throws -> SNSSubscription? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM sns_subscriptions WHERE app_id = ? AND id = ?", arguments: [appID, id]
            ).map(Self.subscription)
        }
    }

    public func snsSubscriptions(
        appID: String, topic: String, after: String?, limit: Int
    ) async throws -> [SNSSubscription] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM sns_subscriptions WHERE app_id = ? AND topic = ? AND installation_id > ?
                    ORDER BY installation_id LIMIT ?
                    """,
                arguments: [appID, topic, after ?? "", limit]
            ).map(Self.subscription)
        }
    }

    public func deleteSNSSubscription(appID: String, id: String) async throws -> Bool {
        try await durableWrite { db in
            try db.execute(sql: "DELETE FROM sns_subscriptions WHERE app_id = ? AND id = ?", arguments: [appID, id])
            return db.changesCount > 0
        }
    }

    private static func topic(_ db: Database, appID: String, name: String) throws -> SNSTopic? {
        try Row.fetchOne(db, sql: "SELECT * FROM sns_topics WHERE app_id = ? AND name = ?", arguments: [appID, name])
            .map(topic)
    }

    private static func topic(_ row: Row) -> SNSTopic {
        SNSTopic(appID: row["app_id"], name: row["name"], createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }

    private static func subscription(_ row: Row) -> SNSSubscription {
        SNSSubscription(
            appID: row["app_id"], id: row["id"], topic: row["topic"], installationID: row["installation_id"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }
}
