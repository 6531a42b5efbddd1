import HeraldCore

extension MockAPNsServer {
    /// A request the mock received, with the answer it gave.
    public struct RecordedRequest: Sendable {
        /// How a request authenticated.
        public enum Authentication: Sendable, Hashable {
            /// A provider token (`authorization: bearer …`) signed by the auth key `keyID`.
            case token(keyID: String)
            /// The connection's TLS client certificate, issued for the app `bundleID`.
            case certificate(bundleID: String)
        }

        /// The `:method` pseudo-header.
        public var method: String
        /// The `:path` pseudo-header.
        public var path: String
        /// The device token from the path, when the path named one (never for a broadcast).
        public var token: String?
        /// The regular headers in arrival order, names lowercased.
        public var headers: [(String, String)]
        /// The raw body.
        public var body: [UInt8]
        /// The body parsed as JSON, when it is JSON.
        public var json: JSONValue?
        /// The provider token's claims, when the token verified (even if it had expired).
        public var providerToken: ProviderTokenClaims?
        /// How the request authenticated, when it did: set even if a later check (topic, payload) refused it; nil
        /// when authentication itself failed (no credential, an invalid or expired token).
        public var authentication: Authentication?
        /// The status the mock answered with.
        public var status: Int
        /// The `reason` the mock answered with; nil on success.
        public var reason: String?
        /// The `apns-id` the mock answered with; for a broadcast, the `apns-request-id`.
        public var apnsID: String
        /// The mock's number for the connection that carried the request, counting from 1.
        public var connectionID: Int
        /// The HTTP/2 stream identifier.
        public var streamID: Int
        /// The `apns-channel-id` header of a broadcast (`POST /4/broadcasts/apps/<bundle ID>`), as sent; nil for a
        /// device push.
        public var channelID: String? = nil

        /// The first value of the header `name` (lowercase).
        public func header(_ name: String) -> String? {
            headers.first { $0.0 == name }?.1
        }
    }
}
