import Foundation
import HeraldCore
import PostgresNIO

// The methods of `PushEndpointStore`, the protocol its dialect (`HeraldUnifiedPush`) declares; this module
// does not import the dialect, so `HeraldServer` declares the conformance (docs/architecture.md, "Adding a
// dialect").
extension PostgresStore {
    public func createPushEndpoint(_ endpoint: PushEndpoint, digest: String) async throws -> Bool {
        try await transaction { connection in
            // Inserted only beside an installation of the app, in one statement.
            try await connection.changes(
                """
                INSERT INTO push_endpoints (digest, id, app_id, installation_id, created_at, revoked_at)
                SELECT $1, $2, $3, $4, $5, $6 FROM installations WHERE app_id = $3 AND id = $4
                """,
                [
                    digest, endpoint.id, endpoint.appID, endpoint.installationID,
                    endpoint.createdAt.timeIntervalSince1970, endpoint.revokedAt?.timeIntervalSince1970,
                ]) > 0
        }
    }

    public func pushEndpoint(digest: String) async throws -> PushEndpoint? {
        try await read { connection in
            try await connection.rows("SELECT * FROM push_endpoints WHERE digest = $1", [digest])
        }.first.map(Self.pushEndpoint)
    }

    public func pushEndpoints(appID: String, installationID: String) async throws -> [PushEndpoint] {
        try await read { connection in
            try await connection.rows(
                """
                SELECT * FROM push_endpoints WHERE app_id = $1 AND installation_id = $2 AND revoked_at IS NULL
                ORDER BY created_at, id
                """, [appID, installationID])
        }.map(Self.pushEndpoint)
    }

    public func revokePushEndpoint(appID: String, installationID: String, id: String, now: Date) async throws -> Bool {
        try await transaction { connection in
            guard
                try await connection.changes(
                    """
                    UPDATE push_endpoints SET revoked_at = $1
                    WHERE app_id = $2 AND installation_id = $3 AND id = $4 AND revoked_at IS NULL
                    """, [now.timeIntervalSince1970, appID, installationID, id]) > 0
            else { return false }
            try await connection.run("DELETE FROM push_endpoint_topics WHERE endpoint_id = $1", [id])
            return true
        }
    }

    public func replaceTopicMessage(endpointID: String, topic: String, notificationID: String) async throws -> String? {
        try await transaction { connection in
            // The row locked by the upsert's conflict, read before it: the previous message.
            let previous = try await connection.rows(
                "SELECT notification_id FROM push_endpoint_topics WHERE endpoint_id = $1 AND topic = $2 FOR UPDATE",
                [endpointID, topic]
            ).first.map { try $0.get("notification_id", as: String.self) }
            try await connection.run(
                """
                INSERT INTO push_endpoint_topics (endpoint_id, topic, notification_id) VALUES ($1, $2, $3)
                ON CONFLICT (endpoint_id, topic) DO UPDATE SET notification_id = excluded.notification_id
                """, [endpointID, topic, notificationID])
            return previous
        }
    }

    private static func pushEndpoint(_ row: PostgresRandomAccessRow) throws -> PushEndpoint {
        PushEndpoint(
            id: try row.get("id"), appID: try row.get("app_id"), installationID: try row.get("installation_id"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            revokedAt: try row.date("revoked_at"))
    }
}
