import HeraldCore

extension MockAPNsChannelServer {
    /// A channel management request the mock received, with the answer it gave.
    public struct RecordedRequest: Sendable {
        /// What a request asked for.
        public enum Operation: String, Sendable, Hashable {
            /// `POST /1/apps/<bundle ID>/channels`.
            case create
            /// `GET /1/apps/<bundle ID>/channels` with `apns-channel-id`.
            case read
            /// `DELETE /1/apps/<bundle ID>/channels` with `apns-channel-id`.
            case delete
            /// `GET /1/apps/<bundle ID>/all-channels`.
            case list
        }

        /// The `:method` pseudo-header.
        public var method: String
        /// The `:path` pseudo-header.
        public var path: String
        /// The app of the path, when the path was one the service serves.
        public var bundleID: String?
        /// The operation, when method and path named one.
        public var operation: Operation?
        /// The `apns-channel-id` header as sent, or for a creation that succeeded the ID the mock handed out.
        public var channelID: String?
        /// The regular headers in arrival order, names lowercased.
        public var headers: [(String, String)]
        /// The raw body.
        public var body: [UInt8]
        /// The body parsed as JSON, when it is JSON.
        public var json: JSONValue?
        /// The provider token's claims, when the token verified (even if it had expired).
        public var providerToken: ProviderTokenClaims?
        /// How the request authenticated, when it did; nil when authentication failed.
        public var authentication: MockAPNsServer.RecordedRequest.Authentication?
        /// The status the mock answered with.
        public var status: Int
        /// The `reason` the mock answered with; nil on success.
        public var reason: String?
        /// The `apns-request-id` the mock answered with.
        public var requestID: String
        /// The mock's number for the connection that carried the request, counting from 1.
        public var connectionID: Int
        /// The HTTP/2 stream identifier.
        public var streamID: Int

        /// The first value of the header `name` (lowercase).
        public func header(_ name: String) -> String? {
            headers.first { $0.0 == name }?.1
        }
    }
}
