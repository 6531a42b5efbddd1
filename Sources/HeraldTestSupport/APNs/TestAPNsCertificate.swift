import Crypto
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
