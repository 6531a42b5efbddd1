import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOSSL
import SwiftASN1
import Testing
import X509

@testable import HeraldProviderMocks
@testable import HeraldTestSupport

@Suite("TestCertificateAuthority")
struct TestCertificateAuthorityTests {
    @Test("The root is available as a NIOSSL certificate and as PEM")
    func root() throws {
        let ca = try TestCertificateAuthority()
        #expect(ca.rootPEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let parsed = try NIOSSLCertificate.fromPEMBytes(Array(ca.rootPEM.utf8))
        #expect(parsed == [ca.rootCertificate])
        #expect(ca.clientTLSConfiguration().applicationProtocols == ["h2"])
        #expect(try ca.serverTLSConfiguration().applicationProtocols == ["h2"])
    }

    @Test("Clients that do not trust the test root are refused")
    func untrustedClient() async throws {
        let ca = try TestCertificateAuthority()
        let other = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let server = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example"])])
        let client = makeHTTPClient(trusting: other)
        // The client keeps retrying the handshake until its deadline; a short one keeps the test fast.
        await #expect(throws: (any Error).self) {
            try await client.send(.POST, server.baseURL + "/3/device/00", timeout: .milliseconds(500))
        }
        try await client.shutdown()
        try await server.shutdown()
        #expect(server.requests.isEmpty)
    }

    @Test("An APNs provider certificate names its app as Apple's do, and is for client authentication")
    func apnsCertificate() throws {
        let ca = try TestCertificateAuthority()
        let issued = try ca.apnsCertificate(bundleID: "com.example.app")
        #expect(issued.bundleID == "com.example.app")
        #expect(issued.chain == [issued.certificate])
        #expect(issued.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try NIOSSLCertificate.fromPEMBytes(Array(issued.certificatePEM.utf8)) == [issued.certificate])

        let certificate = try Certificate(derEncoded: issued.certificate.toDERBytes())
        let root = try Certificate(derEncoded: ca.rootCertificate.toDERBytes())
        #expect(certificate.issuer == root.subject)
        #expect(TestAPNsCertificate.bundleID(of: certificate) == "com.example.app")
        #expect(TestAPNsCertificate.bundleID(of: root) == nil)
        let commonNames = certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
        #expect(commonNames.map { String(describing: $0.value) } == ["Apple Push Services: com.example.app"])
        let usages = try #require(try certificate.extensions.extendedKeyUsage)
        #expect(Array(usages) == [.clientAuth])
        #expect(try certificate.extensions.basicConstraints == .notCertificateAuthority)
    }

    @Test(
        "Hosts that are IP addresses become IP subject alternative names",
        arguments: [
            ("127.0.0.1", [127, 0, 0, 1]), ("::1", Array(repeating: 0, count: 15) + [1]),
            ("fe80::1:2", [0xfe, 0x80] + Array(repeating: 0, count: 10) + [0, 1, 0, 2]),
        ] as [(String, [UInt8])])
    func ipAddresses(host: String, bytes: [UInt8]) {
        #expect(TestCertificateAuthority.ipAddressBytes(host) == bytes)
    }

    @Test("Other hosts are DNS names", arguments: ["localhost", "apns.test", "1.2.3", "256.1.1.1", "1::2::3"])
    func dnsNames(host: String) {
        #expect(TestCertificateAuthority.ipAddressBytes(host) == nil)
    }
}
