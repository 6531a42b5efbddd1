import CoreMetrics
import HeraldHTTP2
import NIOCore
import NIOSSL

/// Where and how an APNs client connects.
public struct APNsConfiguration: Sendable {
    /// The APNs host.
    public enum Environment: Sendable, Equatable {
        /// `api.push.apple.com`.
        case production
        /// `api.sandbox.push.apple.com`.
        case sandbox
        /// Any other host (a mock or a proxy).
        case custom(host: String, port: Int)

        var host: String {
            switch self {
            case .production: "api.push.apple.com"
            case .sandbox: "api.sandbox.push.apple.com"
            case .custom(let host, _): host
            }
        }

        var port: Int {
            if case .custom(_, let port) = self { return port }
            return 443
        }
    }

    /// How requests are authorized.
    public enum Authentication: Sendable {
        /// A `.p8` key: a provider token on every request.
        case token(APNsSigningKey)
        /// A TLS client certificate and its key.
        case certificate(chain: [NIOSSLCertificate], key: NIOSSLPrivateKey)

        /// Certificate authentication from a `.p12` file.
        /// - Throws: NIOSSL errors for an unreadable bundle or a wrong password.
        public static func certificate(p12 path: String, password: String) throws -> Self {
            let bundle = try NIOSSLPKCS12Bundle(file: path, passphrase: Array(password.utf8))
            return .certificate(chain: bundle.certificateChain, key: bundle.privateKey)
        }

        /// Certificate authentication from PEM files.
        /// - Throws: NIOSSL errors for unreadable files.
        public static func certificate(pemCertificate certificatePath: String, pemKey keyPath: String) throws -> Self {
            .certificate(
                chain: try NIOSSLCertificate.fromPEMFile(certificatePath),
                key: try NIOSSLPrivateKey(file: keyPath, format: .pem))
        }
    }

    public var environment: Environment
    public var authentication: Authentication
    /// Trust roots; nil uses the system's.
    public var trustRoots: [NIOSSLCertificate]?
    /// Connections per host.
    public var connections: Int
    /// Streams Herald keeps open per connection (below the peer's limit when that is lower).
    public var maxStreamsPerConnection: Int
    public var requestTimeout: TimeAmount
    /// The most a connection may take to be ready: TCP, TLS and APNs' HTTP/2 preface.
    public var connectTimeout: TimeAmount
    /// Where each request's time to its answer is recorded; nil records nothing.
    public var requestDuration: CoreMetrics.Timer?

    /// Creates a configuration.
    public init(
        environment: Environment, authentication: Authentication, trustRoots: [NIOSSLCertificate]? = nil,
        connections: Int = 2, maxStreamsPerConnection: Int = 100, requestTimeout: TimeAmount = .seconds(30),
        connectTimeout: TimeAmount = .seconds(10)
    ) {
        self.environment = environment
        self.authentication = authentication
        self.trustRoots = trustRoots
        self.connections = connections
        self.maxStreamsPerConnection = maxStreamsPerConnection
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
    }

    var poolConfiguration: HTTP2PoolConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRoots { tls.trustRoots = .certificates(trustRoots) }
        if case .certificate(let chain, let key) = authentication {
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(key)
        }
        var pool = HTTP2PoolConfiguration(
            host: environment.host, port: environment.port, tls: tls, connections: connections,
            maxStreamsPerConnection: maxStreamsPerConnection, connectTimeout: connectTimeout,
            requestTimeout: requestTimeout)
        pool.requestDuration = requestDuration
        return pool
    }
}
