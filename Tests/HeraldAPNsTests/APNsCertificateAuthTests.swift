import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldTestSupport
import NIOCore
import Testing

@testable import HeraldAPNs

/// A mock APNs and an APNs provider certificate its CA issued, for clients configured with certificate
/// authentication.
struct APNsCertificateHarness {
    static let bundleID = "com.example.herald"
    let ca: TestCertificateAuthority
    let key: TestAPNsAuthKey
    let certificate: TestAPNsCertificate
    let apns: MockAPNsServer

    /// Starts a mock that also knows an auth key for ``bundleID``, so the token path can be compared.
    init() async throws {
        ca = try TestCertificateAuthority()
        key = TestAPNsAuthKey()
        certificate = try ca.apnsCertificate(bundleID: Self.bundleID)
        apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: [Self.bundleID])])
    }

    /// A client of the mock, authenticating with `authentication`.
    func client(
        _ authentication: APNsConfiguration.Authentication, timeout: TimeAmount = .seconds(60)
    ) throws
        -> APNsClient
    {
        try APNsClient(
            configuration: APNsConfiguration(
                environment: .custom(host: "127.0.0.1", port: apns.port), authentication: authentication,
                trustRoots: [ca.rootCertificate], connections: 1, requestTimeout: timeout))
    }

    func notification(type: APNsPushType = .alert, bundleID: String = Self.bundleID) -> APNsNotification {
        APNsNotification(
            deviceToken: Fixtures.apnsToken(), pushType: type, bundleID: bundleID,
            payload: APNsPayload(alert: .fields(.init(title: "Person detected", body: "At the door"))).bytes)
    }
}

/// Certificate-based (mutual TLS) authentication: Herald's client presents an APNs provider certificate and sends no
/// provider token.
@Suite("APNs client: certificate-based authentication against the mock APNs", .serialized)
struct APNsCertificateAuthTests {
    /// `openssl`, found on `PATH`, to export a `.p12` (NIOSSL and swift-certificates read PKCS#12 but cannot write it).
    static let openssl: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":").map { "\($0)/openssl" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("A certificate client is delivered with no authorization header, for the app and its VoIP topic")
    func delivered() async throws {
        let harness = try await APNsCertificateHarness()
        let certificate = harness.certificate
        let client = try harness.client(.certificate(chain: certificate.chain, key: certificate.privateKey))
        let alert = try await client.send(harness.notification())
        let voip = try await client.send(harness.notification(type: .voip))
        await client.shutdown()
        try await harness.apns.shutdown()

        #expect(client.tokenSource == nil)
        for response in [alert, voip] {
            guard case .delivered = response.outcome else {
                Issue.record("not delivered: \(response)")
                continue
            }
        }
        let requests = harness.apns.requests
        #expect(requests.count == 2)
        #expect(requests.map { $0.header("apns-topic") } == ["com.example.herald", "com.example.herald.voip"])
        for request in requests {
            #expect(request.header("authorization") == nil)
            #expect(request.providerToken == nil)
            #expect(request.authentication == .certificate(bundleID: APNsCertificateHarness.bundleID))
        }
    }

    @Test("Certificate and key from PEM files")
    func pemFiles() async throws {
        let harness = try await APNsCertificateHarness()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try harness.certificate.certificatePEM.write(
            toFile: directory.file("cert.pem"), atomically: false, encoding: .utf8)
        try harness.certificate.privateKeyPEM.write(
            toFile: directory.file("key.pem"), atomically: false, encoding: .utf8)
        let client = try harness.client(
            .certificate(pemCertificate: directory.file("cert.pem"), pemKey: directory.file("key.pem")))
        let response = try await client.send(harness.notification())
        await client.shutdown()
        try await harness.apns.shutdown()

        #expect(response.status == 200)
        #expect(harness.apns.requests.first?.authentication == .certificate(bundleID: APNsCertificateHarness.bundleID))
    }

    /// How a `.p12` is encrypted: OpenSSL 3's default (PBES2 with AES-256-CBC, SHA-256 MAC), and the legacy
    /// encoding Keychain Access exports (PBE-SHA1-3DES, SHA-1 MAC).
    static let p12Encodings: [(String, [String])] = [
        ("OpenSSL 3 default", []),
        ("Keychain Access", ["-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-macalg", "sha1"]),
    ]

    @Test(
        "Certificate and key from a password-protected .p12",
        .enabled(if: openssl != nil, "needs openssl on PATH to export the .p12"), arguments: p12Encodings)
    func p12File(encoding: String, options: [String]) async throws {
        let harness = try await APNsCertificateHarness()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try harness.certificate.certificatePEM.write(
            toFile: directory.file("cert.pem"), atomically: false, encoding: .utf8)
        try harness.certificate.privateKeyPEM.write(
            toFile: directory.file("key.pem"), atomically: false, encoding: .utf8)
        try Self.exportP12(
            certificate: directory.file("cert.pem"), key: directory.file("key.pem"), to: directory.file("cert.p12"),
            password: "herald-p12", options: options)

        #expect(throws: (any Error).self) {
            try APNsConfiguration.Authentication.certificate(p12: directory.file("cert.p12"), password: "wrong")
        }
        let client = try harness.client(.certificate(p12: directory.file("cert.p12"), password: "herald-p12"))
        let response = try await client.send(harness.notification())
        await client.shutdown()
        try await harness.apns.shutdown()

        #expect(response.status == 200)
        #expect(harness.apns.requests.first?.authentication == .certificate(bundleID: APNsCertificateHarness.bundleID))
    }

    @Test("A topic the certificate does not cover fails as it does with a token: TopicDisallowed")
    func topicNotCovered() async throws {
        let harness = try await APNsCertificateHarness()
        let certificate = harness.certificate
        let certificateClient = try harness.client(
            .certificate(chain: certificate.chain, key: certificate.privateKey))
        let tokenClient = try harness.client(
            .token(try APNsSigningKey(teamID: harness.key.teamID, keyID: harness.key.keyID, pem: harness.key.p8PEM)))
        let other = harness.notification(bundleID: "com.example.other")
        let withCertificate = try await certificateClient.send(other)
        let withToken = try await tokenClient.send(other)
        await certificateClient.shutdown()
        await tokenClient.shutdown()
        try await harness.apns.shutdown()

        #expect(withCertificate.outcome == .configurationFailure(reason: "TopicDisallowed"))
        #expect(withCertificate.outcome == withToken.outcome)
        let requests = harness.apns.requests
        #expect(requests.count == 2)
        #expect(requests.first?.reason == "TopicDisallowed")
        #expect(requests.first?.authentication == .certificate(bundleID: APNsCertificateHarness.bundleID))
    }

    @Test("A certificate from another CA fails the TLS handshake: nothing reaches APNs, the outcome is a retry")
    func foreignCertificate() async throws {
        let harness = try await APNsCertificateHarness()
        let foreign = try TestCertificateAuthority().apnsCertificate(bundleID: APNsCertificateHarness.bundleID)
        let client = try harness.client(
            .certificate(chain: foreign.chain, key: foreign.privateKey), timeout: .seconds(10))
        let response = try await client.send(harness.notification())
        await client.shutdown()
        try await harness.apns.shutdown()

        // Under TLS 1.3 the client finishes its side of the handshake before the server has judged its certificate,
        // so the request goes out and meets the connection the server closes.
        #expect(response.status == 0)
        #expect(harness.apns.connectionCount >= 1)
        guard case .retry = response.outcome else {
            Issue.record("expected a retry outcome: \(response.outcome)")
            return
        }
        #expect(harness.apns.requests.isEmpty)
    }

    /// Bundles a PEM certificate and key into a PKCS#12 file with `openssl pkcs12 -export`.
    static func exportP12(
        certificate: String, key: String, to path: String, password: String, options: [String]
    )
        throws
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl ?? "openssl")
        process.arguments =
            [
                "pkcs12", "-export", "-in", certificate, "-inkey", key, "-out", path, "-passout", "pass:\(password)",
                "-name", "Apple Push Services: \(APNsCertificateHarness.bundleID)",
            ] + options
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl pkcs12 -export failed: \(message)")
    }
}
