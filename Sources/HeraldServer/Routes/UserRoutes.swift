import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging

/// Routes about one of an app's users as a whole: `/v1/users/{user_id}/…` (server key).
struct UserRoutes: Sendable {
    let store: any InstallationRegistry
    let dispatcher: Dispatcher

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.deleteInstallationsOperation, use: deleteInstallations)
    }

    /// `DELETE /v1/users/{user_id}/installations`: the user's account is gone, so are their devices
    /// (every installation, whichever API registered it, with its preferences): ArgusAI's "Account
    /// deleted → cascade delete tokens". `200 {"deleted": n}`; deleting again answers `0`.
    @Sendable func deleteInstallations(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try context.requireServerKey("Deleting a user's installations takes the app's server key.")
        guard let userID = context.parameters.get("user_id"), !userID.isEmpty,
            userID.count <= InstallationRules.maxShortText
        else {
            throw HeraldError.invalidValue(
                "user_id", code: "invalid_length",
                "user_id must be 1 to \(InstallationRules.maxShortText) characters.")
        }
        let removal = try await dispatcher.registrations.deleteUser(appID: appID, userID: userID)
        let deleted = removal.count
        context.logger.info(
            "user installations deleted",
            metadata: ["herald.user": "\(SecretFingerprint.of(userID))", "herald.deleted": "\(deleted)"])
        return .json(.object(["deleted": .number(JSONNumber(deleted))]))
    }
}
