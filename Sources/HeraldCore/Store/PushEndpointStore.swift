import Crypto
import Foundation

/// A UnifiedPush / RFC 8030 push endpoint: an unguessable URL (`/up/<secret>`) that an installation
/// hands to one app server, which POSTs encrypted messages to it for Herald to deliver to the device.
/// Its secret is never stored: the store keys the endpoint by the secret's SHA-256 digest
/// (``PushEndpointSecret``), so a copy of the database does not hold working URLs.
public struct PushEndpoint: Sendable, Equatable {
    /// The endpoint's public id (`pe_` and 26 characters): what the API lists and revokes by.
    public var id: String
    public var appID: String
    public var installationID: String
    public var createdAt: Date
    /// When it was revoked; a revoked endpoint answers `410 Gone`.
    public var revokedAt: Date?

    /// Creates an endpoint record.
    public init(id: String, appID: String, installationID: String, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.appID = appID
        self.installationID = installationID
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// The secret of a push endpoint's URL: 32 random bytes (256 bits) in base64url, and the digest
/// under which the store keeps its endpoint.
public struct PushEndpointSecret: Sendable, Equatable {
    /// The URL's last segment, 43 characters of base64url.
    public let text: String

    /// A new random secret.
    public init() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        text = Base64URL.encode(bytes)
    }

    /// A secret read from a URL; nil when it cannot be one (its shape is checked, not its existence).
    public init?(_ text: String) {
        guard text.utf8.count == 43,
            text.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else { return nil }
        self.text = text
    }

    /// The SHA-256 digest of the secret, in lower-case hex: the store's key.
    public var digest: String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A fingerprint for logs: never the whole secret.
    public var fingerprint: String { String(digest.prefix(12)) }
}

/// The push endpoints of installations (UnifiedPush / RFC 8030).
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
