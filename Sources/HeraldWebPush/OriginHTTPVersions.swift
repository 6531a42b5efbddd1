import HeraldHTTP2
import Synchronization

/// The HTTP version each push service origin was found to speak, learnt once (from the TLS handshake
/// of its first HTTP/2 pool connection) and remembered. Bounded like the pools: past `limit` origins
/// the memory starts over, which costs one more handshake per origin in use.
final class OriginHTTPVersions: Sendable {
    private let versions = Mutex<[HTTP2OriginPools.Origin: WebPushHTTPVersion]>([:])
    private let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The remembered version of `origin`, if it has been learnt.
    subscript(origin: HTTP2OriginPools.Origin) -> WebPushHTTPVersion? {
        versions.withLock { $0[origin] }
    }

    /// Remembers what `origin` speaks.
    func remember(_ version: WebPushHTTPVersion, for origin: HTTP2OriginPools.Origin) {
        versions.withLock { versions in
            if versions.count >= limit, versions[origin] == nil { versions.removeAll() }
            versions[origin] = version
        }
    }
}
