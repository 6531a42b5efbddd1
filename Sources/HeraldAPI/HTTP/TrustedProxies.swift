import Foundation
import HeraldCore
import NIOCore

/// The reverse proxies whose `X-Forwarded-For` Herald believes (`http.trusted_proxies`): addresses
/// and CIDR blocks, IPv4 and IPv6. Behind such a proxy every request's TCP peer is the proxy, so the
/// per-address limits would count all its clients together; with the proxy listed, the client is the
/// address the proxy appended to `X-Forwarded-For`, and only a listed proxy is believed.
public struct TrustedProxies: Sendable, Equatable {
    /// One address or block: its bytes (4 or 16) and how many leading bits must match.
    struct Block: Sendable, Equatable {
        var bytes: [UInt8]
        var prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefixLength
            for (a, b) in zip(address, bytes) where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let blocks: [Block]

    /// No proxy is trusted: `X-Forwarded-For` is ignored.
    public static let none = TrustedProxies(blocks: [])

    init(blocks: [Block]) {
        self.blocks = blocks
    }

    /// The proxies given as addresses (`10.0.0.5`, `::1`) or CIDR blocks (`10.0.0.0/8`, `fd00::/8`).
    /// - Throws: `HeraldError.invalidConfiguration` for `key`, naming the entry that is neither.
    public init(_ entries: [String], key: String = "http.trusted_proxies") throws(HeraldError) {
        var blocks: [Block] = []
        for entry in entries {
            let text = entry.trimmingCharacters(in: .whitespaces)
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.bytes(of: String(parts[0])) else {
                throw .invalidConfiguration(
                    key, "lists `\(entry)`, which is neither an IP address nor a CIDR block (ADDRESS/BITS)")
            }
            var prefix = bytes.count * 8
            if parts.count == 2 {
                guard let bits = Int(parts[1]), (0...prefix).contains(bits) else {
                    throw .invalidConfiguration(key, "lists `\(entry)`, whose prefix length must be 0 to \(prefix)")
                }
                prefix = bits
            }
            blocks.append(Block(bytes: bytes, prefixLength: prefix))
        }
        self.blocks = blocks
    }

    /// Whether no proxy is listed.
    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether `address` (an IP address's text) is one of the proxies.
    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(of: address) else { return false }
        return blocks.contains { $0.contains(bytes) }
    }

    /// The client behind a request from `peer` carrying `forwardedFor` (every `X-Forwarded-For` value in
    /// order): walking the list from its right end (the hop nearest Herald), the first address that is
    /// not a trusted proxy. Entries left of it were written by the client itself and are not believed.
    /// An entry that is not an address ends the walk at the proxy that passed it on. `peer` itself when
    /// it is not a trusted proxy.
    public func client(peer: String, forwardedFor: [String]) -> String {
        var client = peer
        var hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        while contains(client), let hop = hops.popLast() {
            guard Self.bytes(of: hop) != nil else { break }
            client = hop
        }
        return client
    }

    /// The address's bytes: 4 for IPv4 (and for an IPv4-mapped IPv6 address, as a dual-stack listener
    /// reports IPv4 peers), 16 for IPv6; nil when the text is not an address.
    static func bytes(of text: String) -> [UInt8]? {
        guard !text.isEmpty, let address = try? SocketAddress(ipAddress: text, port: 0) else { return nil }
        switch address {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return Array(bytes[12...])
            }
            return bytes
        case .unixDomainSocket:
            return nil
        }
    }
}
