import Foundation
import HeraldCore

/// The reverse proxies whose `X-Forwarded-For` Herald believes (`http.trusted_proxies`): addresses
/// and CIDR blocks, IPv4 and IPv6. Behind such a proxy every request's TCP peer is the proxy, so the
/// per-address limits would count all its clients together; with the proxy listed, the client is the
/// address the proxy appended to `X-Forwarded-For`, and only a listed proxy is believed.
public struct TrustedProxies: Sendable, Equatable {
    let blocks: [IPNetwork]

    /// No proxy is trusted: `X-Forwarded-For` is ignored.
    public static let none = TrustedProxies(blocks: [])

    init(blocks: [IPNetwork]) {
        self.blocks = blocks
    }

    /// The proxies given as addresses (`10.0.0.5`, `::1`) or CIDR blocks (`10.0.0.0/8`, `fd00::/8`).
    /// - Throws: `HeraldError.invalidConfiguration` for `key`, naming the entry that is neither.
    public init(_ entries: [String], key: String = "http.trusted_proxies") throws(HeraldError) {
        var blocks: [IPNetwork] = []
        for entry in entries {
            do {
                blocks.append(try IPNetwork(entry))
            } catch {
                throw .invalidConfiguration(key, "lists \(error.message)")
            }
        }
        self.blocks = blocks
    }

    /// Whether no proxy is listed.
    public var isEmpty: Bool { blocks.isEmpty }

    /// Whether `address` (an IP address's text) is one of the proxies.
    public func contains(_ address: String) -> Bool {
        guard let address = IPAddress(address)?.unmapped else { return false }
        return blocks.contains { $0.contains(address) }
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
            guard IPAddress(hop) != nil else { break }
            client = hop
        }
        return client
    }
}
