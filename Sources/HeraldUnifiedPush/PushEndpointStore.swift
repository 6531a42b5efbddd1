import Foundation
import HeraldCore

/// The push endpoints of installations (UnifiedPush / RFC 8030; docs/architecture.md, "Adding a
/// dialect").
///
/// Its records are `HeraldCore`'s (``PushEndpoint``), as the stores build them; each store implements
/// the methods in its own module and conforms in `HeraldServer` (`DialectStores.swift`), where the
/// stores meet the dialects.
public protocol PushEndpointStore: Sendable {
    /// Stores a new endpoint under its secret's digest.
    /// - Returns: False (nothing stored) when the installation is not the app's.
    func createPushEndpoint(_ endpoint: PushEndpoint, digest: String) async throws -> Bool

    /// The endpoint whose secret has this digest, revoked or not (nil: none ever had it).
    func pushEndpoint(digest: String) async throws -> PushEndpoint?

    /// An installation's endpoints that are not revoked, oldest first.
    func pushEndpoints(appID: String, installationID: String) async throws -> [PushEndpoint]

    /// Revokes one of an installation's endpoints; its URL answers `410` from then on.
    /// - Returns: False when the installation has no such endpoint not yet revoked.
    func revokePushEndpoint(appID: String, installationID: String, id: String, now: Date) async throws -> Bool

    /// Makes a notification the endpoint's latest message of a `Topic` (RFC 8030 §5.4), in one
    /// statement: the one it replaces, if still undelivered, is for the caller to cancel.
    /// - Returns: The notification that was the topic's latest until now, nil for the topic's first.
    func replaceTopicMessage(endpointID: String, topic: String, notificationID: String) async throws -> String?
}
