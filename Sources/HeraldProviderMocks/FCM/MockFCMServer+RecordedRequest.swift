import HeraldCore

extension MockFCMServer {
    /// A request to the FCM API the mock received (token-endpoint requests are only counted), with the answer it
    /// gave.
    public struct RecordedRequest: Sendable {
        /// The `:method` pseudo-header.
        public var method: String
        /// The `:path` pseudo-header.
        public var path: String
        /// The regular headers in arrival order, names lowercased.
        public var headers: [(String, String)]
        /// The raw body.
        public var body: [UInt8]
        /// The body parsed as JSON, when it is JSON.
        public var json: JSONValue?
        /// The bearer access token the request carried.
        public var accessToken: String?
        /// The project named by the path.
        public var projectID: String?
        /// The message's registration token, when it targets one.
        public var token: String?
        /// The status the mock answered with.
        public var status: Int
        /// The `google.rpc.Status` name of an error answer, e.g. `INVALID_ARGUMENT`.
        public var errorStatus: String?
        /// The FCM error code of an error answer, e.g. `UNREGISTERED`.
        public var errorCode: String?
        /// The message name of a successful send, `projects/<project>/messages/<id>`.
        public var messageName: String?
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
