import CoreMetrics
import NIOCore
import NIOSSL

extension WebPushClient {
    /// How a Web Push client signs and connects. Push services live on many hosts (one per browser
    /// vendor, and self-hosted ones anywhere), so there is no host to configure: each push goes to
    /// its subscription's endpoint.
    public struct Configuration: Sendable {
        /// The application server's VAPID key; browsers subscribed with its public half.
        public var vapidKey: VAPIDKey
        /// The VAPID `sub`: a `mailto:` or `https:` contact for push service operators.
        public var subject: String
        /// Trust roots for every push service; nil uses the system's. Tests trust a mock's CA.
        public var trustRoots: [NIOSSLCertificate]?
        /// HTTP/2 connections kept per push service origin.
        public var connectionsPerOrigin: Int
        /// Origins whose connections are kept open at once; using another closes the least
        /// recently used one.
        public var maxOrigins: Int
        /// A push still unanswered after this ends with a retry outcome.
        public var requestTimeout: TimeAmount
        /// How long connecting (and the TLS handshake of the ALPN probe) may take.
        public var connectTimeout: TimeAmount
        /// Where each HTTP/2 request's time to its answer is recorded; nil records nothing.
        public var requestDuration: CoreMetrics.Timer?

        /// Creates a configuration.
        /// - Throws: `WebPushError` `invalidSubject` when `subject` is not a `mailto:` or `https:` URI.
        public init(
            vapidKey: VAPIDKey, subject: String, trustRoots: [NIOSSLCertificate]? = nil, connectionsPerOrigin: Int = 1,
            maxOrigins: Int = 64, requestTimeout: TimeAmount = .seconds(30), connectTimeout: TimeAmount = .seconds(10)
        ) throws(WebPushError) {
            guard VAPIDTokenCache.isValidSubject(subject) else { throw .invalidSubject() }
            self.vapidKey = vapidKey
            self.subject = subject
            self.trustRoots = trustRoots
            self.connectionsPerOrigin = max(1, connectionsPerOrigin)
            self.maxOrigins = max(1, maxOrigins)
            self.requestTimeout = requestTimeout
            self.connectTimeout = connectTimeout
        }

        /// The TLS settings shared by the pool, the probe and the HTTP/1.1 client.
        var tls: TLSConfiguration {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let trustRoots { tls.trustRoots = .certificates(trustRoots) }
            return tls
        }
    }
}
