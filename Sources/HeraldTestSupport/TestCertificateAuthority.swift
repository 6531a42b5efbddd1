import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority that lives only in memory: a P-256 root that issues TLS server certificates for the mock
/// provider servers and APNs provider (client) certificates, so tests speak real TLS without key files on disk.
public struct TestCertificateAuthority: Sendable {
    /// The root certificate, for clients to trust.
    public let rootCertificate: NIOSSLCertificate
    /// The root certificate as PEM text, for clients configured with a CA bundle.
    public let rootPEM: String

    private let root: Certificate
    private let rootKey: P256.Signing.PrivateKey

    /// Creates a new root with a fresh P-256 key, valid from an hour ago for a week.
    /// - Throws: When the certificate cannot be signed or encoded (swift-certificates or NIOSSL errors).
    public init() throws {
        let key = P256.Signing.PrivateKey()
        let signingKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName {
            OrganizationName("Herald tests")
            CommonName("Herald Test Root CA \(UUID().uuidString.prefix(8))")
        }
        let now = Date()
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: signingKey.publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(7 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: signingKey.publicKey)
            },
            issuerPrivateKey: signingKey)
        self.root = root
        self.rootKey = key
        self.rootPEM = try root.serializeAsPEM().pemString
        self.rootCertificate = try NIOSSLCertificate(bytes: Self.derBytes(of: root), format: .der)
    }

    /// A TLS configuration for a server: a fresh P-256 leaf certificate issued by this root for `hosts`, offering
    /// only HTTP/2 through ALPN.
    ///
    /// Each host that parses as an IPv4 or IPv6 address becomes an IP-address subject alternative name; every other
    /// host becomes a DNS name. The leaf carries the `serverAuth` extended key usage and is valid from an hour ago
    /// for a day.
    /// - Parameter acceptingClientCertificates: When true, the server asks clients for a certificate, as APNs does:
    ///   a client may present none, but one this root did not issue fails the handshake.
    /// - Throws: When the certificate cannot be signed or encoded, or NIOSSL rejects the key.
    public func serverTLSConfiguration(
        hosts: [String] = ["localhost", "127.0.0.1"], acceptingClientCertificates: Bool = false
    ) throws -> TLSConfiguration {
        let leafKey = P256.Signing.PrivateKey()
        let names: [GeneralName] = hosts.map { host in
            if let address = Self.ipAddressBytes(host) {
                return .ipAddress(ASN1OctetString(contentBytes: ArraySlice(address)))
            }
            return .dnsName(host)
        }
        let leaf = try issue(
            for: leafKey, subject: try DistinguishedName { CommonName(hosts.first ?? "localhost") },
            usage: .serverAuth, subjectAlternativeNames: names)
        let chain = try [leaf, root].map { try NIOSSLCertificate(bytes: Self.derBytes(of: $0), format: .der) }
        let privateKey = try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.applicationProtocols = ["h2"]
        if acceptingClientCertificates {
            configuration.certificateVerification = .optionalVerification
            configuration.trustRoots = .certificates([rootCertificate])
        }
        return configuration
    }

    /// Signs a leaf certificate for `key` with this root, valid from an hour ago for a day.
    package func issue(
        for key: P256.Signing.PrivateKey, subject: DistinguishedName, usage: ExtendedKeyUsage.Usage,
        subjectAlternativeNames: [GeneralName]
    ) throws -> Certificate {
        let authorityKeyID = SubjectKeyIdentifier(hash: root.publicKey).keyIdentifier
        let now = Date()
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: root.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([usage])
                if !subjectAlternativeNames.isEmpty {
                    SubjectAlternativeNames(subjectAlternativeNames)
                }
                AuthorityKeyIdentifier(keyIdentifier: authorityKeyID)
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
    }

    /// A TLS configuration for a client that trusts this root and nothing else, offering HTTP/2 through ALPN.
    public func clientTLSConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([rootCertificate])
        configuration.additionalTrustRoots = []
        configuration.applicationProtocols = ["h2"]
        return configuration
    }

    private static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The network-order bytes of an IPv4 (`a.b.c.d`) or IPv6 (RFC 4291 text form) address; nil for anything else.
    static func ipAddressBytes(_ text: String) -> [UInt8]? {
        ipv4Bytes(Substring(text)) ?? ipv6Bytes(text)
    }

    private static func ipv4Bytes(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(\.isASCII), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func ipv6Bytes(_ text: String) -> [UInt8]? {
        guard text.contains(":") else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt16]? {
            guard !part.isEmpty else { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return nil }
            all += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}
