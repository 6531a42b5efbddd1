import X509

/// One request as an HTTP/2 stream delivered it to a mock server.
struct TestHTTPRequest: Sendable {
    /// The `:method` pseudo-header.
    var method: String
    /// The `:path` pseudo-header.
    var path: String
    /// The regular header fields in the order they arrived, names lowercased as HTTP/2 requires.
    var headers: [(String, String)]
    /// The request body.
    var body: [UInt8]
    /// The server's number for the connection that carried the stream, counting from 1.
    var connectionID: Int
    /// The HTTP/2 stream identifier.
    var streamID: Int
    /// The certificate the client presented in the connection's TLS handshake, already verified against the
    /// server's trust roots; nil when it presented none.
    var clientCertificate: Certificate?

    /// The first value of the header `name`.
    func header(_ name: String) -> String? {
        headers.first { $0.0 == name }?.1
    }

    /// How many times the header `name` appears.
    func count(of name: String) -> Int {
        headers.reduce(0) { $0 + ($1.0 == name ? 1 : 0) }
    }
}

/// The answer a mock server writes back on a stream.
struct TestHTTPResponse: Sendable {
    /// The `:status` pseudo-header.
    var status: Int
    /// Regular header fields, names lowercased.
    var headers: [(String, String)] = []
    /// The body; empty means the HEADERS frame ends the stream.
    var body: [UInt8] = []
    /// How long to wait before writing the response.
    var delay: Duration = .zero
}
