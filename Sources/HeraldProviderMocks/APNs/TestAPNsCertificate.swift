import Crypto
import Foundation
import HeraldTestSupport
import NIOSSL
import SwiftASN1
import X509

/// An APNs provider certificate (certificate-based authentication, the counterpart of ``TestAPNsAuthKey``) issued in
/// memory by ``TestCertificateAuthority/apnsCertificate(bundleID:)``: a TLS client certificate tied to one app.
///
/// ``MockAPNsServer`` accepts it on any connection, for the bundle ID in the subject's UID attribute and that app's
/// push-type topics (`.voip`, `.complication`, …).
public struct TestAPNsCertificate: Sendable {
    /// The OID of the `UID` (userId) attribute, where Apple puts the bundle ID: 0.9.2342.19200300.100.1.1 (RFC 4519).
    static let userIDAttribute: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]

    /// The bundle ID the certificate is for.
    public let bundleID: String
    /// The certificate, to present in the TLS handshake.
    public let certificate: NIOSSLCertificate
    /// The certificate's private key.
    public let privateKey: NIOSSLPrivateKey
    /// The certificate as PEM text, as `openssl pkcs12 -clcerts` would export it from Apple's `.p12`.
    public let certificatePEM: String
    /// The private key as PKCS#8 PEM text.
    public let privateKeyPEM: String

    /// The chain to configure a client with: the certificate alone, as the test root is its direct issuer.
    public var chain: [NIOSSLCertificate] { [certificate] }

    init(bundleID: String, certificate: Certificate, privateKey: P256.Signing.PrivateKey) throws {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.bundleID = bundleID
        self.certificate = try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
        self.certificatePEM = try certificate.serializeAsPEM().pemString
        self.privateKeyPEM = privateKey.pemRepresentation
        self.privateKey = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
    }

    /// The bundle ID an APNs provider certificate is for: the first UID attribute of its subject; nil when there is
    /// none.
    static func bundleID(of certificate: Certificate) -> String? {
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type == userIDAttribute {
                return String(attribute.value)
            }
        }
        return nil
    }
}

extension TestCertificateAuthority {
    /// An APNs provider certificate for the app `bundleID`, shaped like the ones Apple issues: the bundle ID in the
    /// subject's UID attribute, `CN=Apple Push Services: <bundleID>`, the `clientAuth` extended key usage, and a
    /// fresh P-256 key. Valid from an hour ago for a day.
    /// - Throws: When the certificate cannot be signed or encoded, or NIOSSL rejects it.
    public func apnsCertificate(bundleID: String) throws -> TestAPNsCertificate {
        let key = P256.Signing.PrivateKey()
        // Most general first, as in Apple's certificates (which also carry the team in OU, and C).
        let subject = try DistinguishedName([
            RelativeDistinguishedName.Attribute(type: .RDNAttributeType.organizationName, utf8String: "Herald tests"),
            RelativeDistinguishedName.Attribute(
                type: .RDNAttributeType.commonName, utf8String: "Apple Push Services: \(bundleID)"),
            RelativeDistinguishedName.Attribute(type: TestAPNsCertificate.userIDAttribute, utf8String: bundleID),
        ])
        let leaf = try issue(for: key, subject: subject, usage: .clientAuth, subjectAlternativeNames: [])
        return try TestAPNsCertificate(bundleID: bundleID, certificate: leaf, privateKey: key)
    }
}
