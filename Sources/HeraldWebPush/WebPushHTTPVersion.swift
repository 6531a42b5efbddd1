/// How a push service origin is reached: the HTTP/2 pool for origins that offer `h2` through ALPN
/// (every major browser's push service does), HTTP/1.1 through AsyncHTTPClient for the others.
public enum WebPushHTTPVersion: String, Sendable, Hashable {
    /// HTTP/2 on Herald's pool.
    case http2 = "h2"
    /// HTTP/1.1 on AsyncHTTPClient.
    case http1 = "http/1.1"
}
