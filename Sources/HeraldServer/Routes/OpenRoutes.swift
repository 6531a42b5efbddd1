import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import Logging

/// Open tracking: `POST /v1/opens`, a device's report that its user opened a notification. The
/// installation's side calls it (the client key, or the installation's user); the server key may
/// report for any installation of the app.
struct OpenRoutes: Sendable {
    let store: any NotificationRecords
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.reportOperation, use: report)
    }

    @Sendable func report(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let principal = try context.principal()
        let now = now()
        let open = try NotificationOpen(parsing: try await request.jsonBody(limit: maxBodyBytes), now: now)
        // A user reports only for their own installations: another user's is the same 404 as a missing one.
        let recording = try await store.recordOpen(
            appID: principal.appID, notificationID: open.notificationID, installationID: open.installationID,
            userID: principal.userID, openedAt: open.openedAt ?? now)
        let (openedAt, status): (Date, HTTPResponse.Status)
        switch recording {
        case .recorded(let at): (openedAt, status) = (at, .created)
        case .repeated(let at): (openedAt, status) = (at, .ok)
        case .unknownNotification: throw HeraldError.notFound("Notification")
        case .unknownInstallation: throw HeraldError.notFound("Installation")
        }
        if status == .created {
            context.logger.info(
                "notification opened",
                metadata: [
                    "herald.notification": "\(open.notificationID)", "herald.installation": "\(open.installationID)",
                ])
        }
        return .json(
            .object([
                "notification_id": .string(open.notificationID), "installation_id": .string(open.installationID),
                "opened_at": InstallationView.timestamp(openedAt),
            ]), status: status)
    }
}
