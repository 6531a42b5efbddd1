import NIOCore
import NIOHPACK

/// One request through the pool: method, path, extra headers (lower-case names, as HTTP/2 requires)
/// and body. `:scheme` and `:authority` come from the pool.
public struct HTTP2Request: Sendable {
    public var method: String
    public var path: String
    public var headers: HPACKHeaders
    public var body: ByteBuffer

    /// Creates a request; header names are lower-cased (RFC 9113 §8.2.1).
    public init(method: String = "POST", path: String, headers: [(String, String)] = [], body: ByteBuffer = .init()) {
        self.init(
            method: method, path: path, headerBlock: HPACKHeaders(headers.map { ($0.0.lowercased(), $0.1) }), body: body
        )
    }

    /// Creates a request from a header block used as it is: its names must already be lower-case.
    /// Requests that share a block (and a body) share their storage, which keeps a batch of
    /// similar requests cheap to build.
    public init(method: String = "POST", path: String, headerBlock: HPACKHeaders, body: ByteBuffer = .init()) {
        self.method = method
        self.path = path
        self.headers = headerBlock
        self.body = body
    }
}

/// A complete response: status, headers (trailers appended) and body.
public struct HTTP2Response: Sendable {
    public var status: Int
    public var headers: HPACKHeaders
    public var body: ByteBuffer

    /// Creates a response.
    public init(status: Int, headers: HPACKHeaders, body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
