import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    public func recordOpen(
        appID: String, notificationID: String, installationID: String, userID: String?, openedAt: Date
    ) async throws -> OpenRecording {
        try await durableWrite { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM notifications WHERE app_id = ? AND id = ?"),
                    arguments: [appID, notificationID]) == true
            else { return .unknownNotification }
            guard
                let owner = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT user_id FROM installations WHERE app_id = ? AND id = ?"),
                    arguments: [appID, installationID]),
                userID == nil || owner["user_id"] == userID
            else { return .unknownInstallation }
            try db.cachedExecute(
                sql: """
                    INSERT INTO opens (notification_id, installation_id, opened_at) VALUES (?, ?, ?)
                    ON CONFLICT (notification_id, installation_id) DO NOTHING
                    """,
                arguments: [notificationID, installationID, openedAt.timeIntervalSince1970])
            guard db.changesCount == 1 else {
                let first = try Double.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT opened_at FROM opens WHERE notification_id = ? AND installation_id = ?"),
                    arguments: [notificationID, installationID])
                return .repeated(openedAt: first.map(Date.init(timeIntervalSince1970:)) ?? openedAt)
            }
            try db.cachedExecute(
                sql: "UPDATE notifications SET opened = opened + 1 WHERE id = ?", arguments: [notificationID])
            try self.tell(appID: appID, .notificationOpened, db) {
                let facts = try self.webhookInstallations([installationID], in: db).installations
                return [
                    WebhookEvent.opened(
                        appID: appID, notificationID: notificationID, installation: facts[installationID],
                        installationID: installationID, at: openedAt)
                ]
            }
            return .recorded(openedAt: openedAt)
        }
    }
}
