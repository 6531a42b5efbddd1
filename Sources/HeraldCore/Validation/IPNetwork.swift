import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address as its bytes.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes or 16.
    public var bytes: [UInt8]

    /// Parses a literal address; nil when the text is not one.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// An address from its 4 or 16 bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands for, as a dual-stack
    /// listener reports IPv4 peers; nil for any other address.
    public var mappedIPv4: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF
        else { return nil }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// The address itself, or the IPv4 address it maps.
    public var unmapped: IPAddress { mappedIPv4 ?? self }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &copy, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(cString: buffer)
    }
}

/// A network in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public var address: IPAddress
    public var prefix: Int

    /// Parses `address/prefix` (a lone address: all its bits); an IPv4-mapped address stands for its IPv4 address.
    /// - Throws: `invalid_network`, its message naming the entry and what is wrong with it.
    public init(_ text: String) throws(HeraldError) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(
            separator: "/", maxSplits: 1, omittingEmptySubsequences: false
        )
        .map(String.init)
        guard let address = parts.first.flatMap(IPAddress.init)?.unmapped else {
            throw HeraldError(
                kind: .badRequest, code: "invalid_network",
                message: "`\(text)`, which is neither an IP address nor a CIDR block (ADDRESS/BITS)")
        }
        let bits = address.bytes.count * 8
        let prefix = parts.count == 2 ? Int(parts[1]) : bits
        guard let prefix, (0...bits).contains(prefix) else {
            throw HeraldError(
                kind: .badRequest, code: "invalid_network",
                message: "`\(text)`, whose prefix length must be 0 to \(bits)")
        }
        self.address = address
        self.prefix = prefix
    }

    /// Whether the network holds an address (of the same family).
    public func contains(_ other: IPAddress) -> Bool {
        guard other.bytes.count == address.bytes.count else { return false }
        var left = prefix
        for (a, b) in zip(address.bytes, other.bytes) {
            guard left > 0 else { return true }
            let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
            guard a & mask == b & mask else { return false }
            left -= 8
        }
        return true
    }

    public var description: String { "\(address)/\(prefix)" }
}
