import Foundation
import HeraldCore
import HeraldEngine

/// The last step the publish APIs (ntfy, Gotify) share: the key's allowance, then the engine.
package enum Publishing {
    /// What a published message came to.
    package enum Outcome {
        case accepted(PushNotification)
        /// Past the key's allowance: try again in this many seconds.
        case limited(retryAfter: Int)
        /// Too large for the providers of the devices it targets (the reason).
        case tooLarge(String)
    }

    /// Spends one of the key's messages of the minute and hands the message to the engine.
    /// - Parameters:
    ///   - bucket: The allowance's name: the dialect, the app and the key's fingerprint.
    /// - Throws: The store's and the engine's errors, but a payload too large (an outcome).
    package static func publish(
        _ send: SendRequest, appID: String, bucket: String, perMinute: Int, store: any HeraldStore,
        dispatcher: Dispatcher, now: Date
    ) async throws -> Outcome {
        if case .limited(let retryAfter) = try await store.acquireToken(
            bucket: bucket, capacity: perMinute, per: 60, now: now)
        {
            return .limited(retryAfter: retryAfter)
        }
        do {
            guard case .accepted(let notification, _) = try await dispatcher.submit(send, appID: appID) else {
                throw HeraldError.internal("The engine answered a send with a dry run.")
            }
            return .accepted(notification)
        } catch let error as HeraldError where error.kind == .payloadTooLarge || error.code == "payload_too_large" {
            return .tooLarge(error.message)
        }
    }
}
