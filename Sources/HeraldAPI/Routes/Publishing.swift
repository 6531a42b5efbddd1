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
        if let retryAfter = try await spend(bucket: bucket, perMinute: perMinute, store: store, now: now) {
            return .limited(retryAfter: retryAfter)
        }
        return try await accepting {
            guard case .accepted(let notification, _) = try await dispatcher.submit(send, appID: appID) else {
                throw HeraldError.internal("The engine answered a send with a dry run.")
            }
            return notification
        }
    }

    /// Spends one of the key's messages of the minute. - Returns: nil, or the seconds to wait when none is left.
    package static func spend(bucket: String, perMinute: Int, store: any HeraldStore, now: Date) async throws -> Int? {
        if case .limited(let retryAfter) = try await store.acquireToken(
            bucket: bucket, capacity: perMinute, per: 60, now: now)
        {
            return retryAfter
        }
        return nil
    }

    /// What the engine made of a message: accepted, or too large for the providers.
    /// - Throws: The engine's errors but a payload too large.
    package static func accepting(_ work: () async throws -> PushNotification) async throws -> Outcome {
        do {
            return .accepted(try await work())
        } catch let error as HeraldError where error.kind == .payloadTooLarge || error.code == "payload_too_large" {
            return .tooLarge(error.message)
        }
    }
}
