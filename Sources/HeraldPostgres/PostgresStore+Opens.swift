import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore {
    public func recordOpen(
        appID: String, notificationID: String, installationID: String, userID: String?, openedAt: Date
    ) async throws -> OpenRecording {
        try await transaction { connection in
            // The notification's row is locked first: two nodes recording the same open serialize on
            // it, and the count moves only with a new opens row.
            guard
                try await !connection.rows(
                    "SELECT 1 FROM notifications WHERE app_id = $1 AND id = $2 FOR UPDATE", [appID, notificationID]
                ).isEmpty
            else { return .unknownNotification }
            // The installation's facts and the app's enabled endpoints with it: `notification.opened`
            // costs no statement when no endpoint wants it.
            guard
                let owner = try await connection.rows(
                    """
                    SELECT \(Self.webhookInstallationColumns), \(Self.webhookColumns(appID: "$1"))
                    FROM installations WHERE app_id = $1 AND id = $2
                    """, [appID, installationID]
                ).first,
                try userID == nil || owner.get("user_id", as: String?.self) == userID
            else { return .unknownInstallation }
            let inserted = try await connection.changes(
                """
                INSERT INTO opens (notification_id, installation_id, opened_at) VALUES ($1, $2, $3)
                ON CONFLICT (notification_id, installation_id) DO NOTHING
                """, [notificationID, installationID, openedAt.timeIntervalSince1970])
            guard inserted == 1 else {
                let first = try await connection.rows(
                    "SELECT opened_at FROM opens WHERE notification_id = $1 AND installation_id = $2",
                    [notificationID, installationID]
                ).first?.date("opened_at")
                return .repeated(openedAt: first ?? openedAt)
            }
            try await connection.run("UPDATE notifications SET opened = opened + 1 WHERE id = $1", [notificationID])
            try await Self.tell(.notificationOpened, try Self.webhookSubscriptions(owner), connection) {
                [
                    WebhookEvent.opened(
                        appID: appID, notificationID: notificationID, installation: try self.webhookInstallation(owner),
                        installationID: installationID, at: openedAt)
                ]
            }
            return .recorded(openedAt: openedAt)
        }
    }
}
