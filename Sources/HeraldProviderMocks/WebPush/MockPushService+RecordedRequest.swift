extension MockPushService {
    /// A request the mock received, with what it made of it and the answer it gave.
    public struct RecordedRequest: Sendable {
        /// The request method.
        public var method: String
        /// The request path.
        public var path: String
        /// The subscription id from the path, when the path named a subscription the mock made.
        public var subscriptionID: String?
        /// The regular headers in arrival order, names lowercased.
        public var headers: [(String, String)]
        /// The raw (encrypted) body.
        public var body: [UInt8]
        /// The decrypted payload; nil when there was no body or it did not decrypt.
        public var plaintext: [UInt8]?
        /// The `TTL` header, when it was an integer.
        public var ttl: Int?
        /// The `Urgency` header.
        public var urgency: String?
        /// The `Topic` header.
        public var topic: String?
        /// The VAPID credentials, when they verified.
        public var vapid: VAPIDClaims?
        /// The status the mock answered with.
        public var status: Int
        /// The `Location` the mock answered with on success.
        public var location: String?
        /// Why the mock refused the request, when it did (also the answer's body).
        public var reason: String?
        /// The HTTP version the request came over (`h2` or `http/1.1`).
        public var httpVersion: String
        /// The mock's number for the connection that carried the request, counting from 1.
        public var connectionID: Int

        /// The first value of the header `name` (lowercase).
        public func header(_ name: String) -> String? {
            headers.first { $0.0 == name }?.1
        }

        /// The decrypted payload as UTF-8 text.
        public var text: String? {
            plaintext.map { String(decoding: $0, as: UTF8.self) }
        }
    }
}
