import Foundation
import HeraldCore

/// `app.<id>.registrations_per_minute`: how many registrations a device-side caller may make a
/// minute, as a token bucket of that size refilled over a minute, kept in the store so every node
/// counts the same. A client key (or a dialect's app key) counts per client address, a user token
/// per user; server keys and other back-end credentials are not limited.
package struct RegistrationLimit: Sendable {
    /// Who registers.
    package enum Caller: Sendable {
        /// A client or app key, from this address.
        case address(String)
        /// A user, through a user token.
        case user(String)
    }

    /// Registrations a minute by app id; an app not listed has no limit.
    package let perMinute: [String: Int]
    package let store: any ClusterState

    package init(perMinute: [String: Int], store: any ClusterState) {
        self.perMinute = perMinute
        self.store = store
    }

    /// Spends one registration of the caller's allowance.
    /// - Returns: Seconds to wait before the next registration may succeed, when the allowance is
    ///   spent (nothing was spent then); nil when the registration may go ahead.
    package func spend(appID: String, by caller: Caller, now: Date) async throws -> Int? {
        guard let limit = perMinute[appID], limit > 0 else { return nil }
        let who =
            switch caller {
            case .address(let address): "address:\(address)"
            case .user(let userID): "user:\(userID)"
            }
        let decision = try await store.acquireToken(
            bucket: "registrations:\(appID):\(who)", capacity: limit, per: 60, now: now)
        guard case .limited(let retryAfter) = decision else { return nil }
        return retryAfter
    }

    /// The native `429 rate_limited` for a spent allowance.
    package static func exceeded(retryAfter: Int) -> HeraldError {
        HeraldError(
            kind: .tooManyRequests, code: "rate_limited",
            message: "Too many registrations; try again in \(retryAfter) seconds.")
    }
}
