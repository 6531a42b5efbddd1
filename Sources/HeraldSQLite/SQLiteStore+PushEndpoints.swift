import Foundation
import GRDB
import HeraldCore

// The methods of `PushEndpointStore`, the protocol its dialect (`HeraldUnifiedPush`) declares; this module
// does not import the dialect, so `HeraldServer` declares the conformance (docs/architecture.md, "Adding a
// dialect").
extension SQLiteStore {
    public func createPushEndpoint(_ endpoint: PushEndpoint, digest: String) async throws -> Bool {
        try await durableWrite { db in
            guard
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM installations WHERE app_id = ? AND id = ?",
                    arguments: [endpoint.appID, endpoint.installationID]) != nil
            else { return false }
            try db.execute(
                sql: """
                    INSERT INTO push_endpoints (digest, id, app_id, installation_id, created_at, revoked_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    digest, endpoint.id, endpoint.appID, endpoint.installationID,
                    endpoint.createdAt.timeIntervalSince1970, endpoint.revokedAt?.timeIntervalSince1970,
                ])
            return true
        }
    }

    public func pushEndpoint(digest: String) async throws -> PushEndpoint? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM push_endpoints WHERE digest = ?", arguments: [digest])
                .map(Self.pushEndpoint)
        }
    }

    public func pushEndpoints(appID: String, installationID: String) async throws -> [PushEndpoint] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM push_endpoints WHERE app_id = ? AND installation_id = ? AND revoked_at IS NULL
                    ORDER BY created_at, id
                    """,
                arguments: [appID, installationID]
            ).map(Self.pushEndpoint)
        }
    }

    public func revokePushEndpoint(appID: String, installationID: String, id: String, now: Date) async throws -> Bool {
        try await durableWrite { db in
            try db.execute(
                sql: """
                    UPDATE push_endpoints SET revoked_at = ?
                    WHERE app_id = ? AND installation_id = ? AND id = ? AND revoked_at IS NULL
                    """,
                arguments: [now.timeIntervalSince1970, appID, installationID, id])
            guard db.changesCount > 0 else { return false }
            try db.execute(sql: "DELETE FROM push_endpoint_topics WHERE endpoint_id = ?", arguments: [id])
            return true
        }
    }

    public func replaceTopicMessage(endpointID: String, topic: String, notificationID: String) async throws -> String? {
        try await durableWrite { db in
            let previous = try String.fetchOne(
                db, sql: "SELECT notification_id FROM push_endpoint_topics WHERE endpoint_id = ? AND topic = ?",
                arguments: [endpointID, topic])
            try db.execute(
                sql: """
                    INSERT INTO push_endpoint_topics (endpoint_id, topic, notification_id) VALUES (?, ?, ?)
                    ON CONFLICT (endpoint_id, topic) DO UPDATE SET notification_id = excluded.notification_id
                    """,
                arguments: [endpointID, topic, notificationID])
            return previous
        }
    }

    private static func pushEndpoint(_ row: Row) -> PushEndpoint {
        PushEndpoint(
            id: row["id"], appID: row["app_id"], installationID: row["installation_id"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            revokedAt: (row["revoked_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
    }
}
