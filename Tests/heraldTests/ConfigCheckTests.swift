import Foundation
import HeraldProviderMocks
import HeraldSigV4
import HeraldTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Credential files for the `default` app against mock APNs and FCM, written 0600.
private struct Credentials {
    let directory: TemporaryDirectory
    let ca: TestCertificateAuthority
    let key: TestAPNsAuthKey
    let account: TestServiceAccount
    let keyFile: String
    let caFile: String
    let accountFile: String
    let vapidFile: String

    init(_ directory: TemporaryDirectory, fcmTokenURI: String) async throws {
        self.directory = directory
        ca = try TestCertificateAuthority()
        key = TestAPNsAuthKey()
        account = try TestServiceAccount()
        keyFile = directory.file("AuthKey.p8")
        caFile = directory.file("ca.pem")
        accountFile = directory.file("service-account.json")
        vapidFile = directory.file("vapid.pem")
        try key.p8PEM.write(toFile: keyFile, atomically: false, encoding: .utf8)
        try ca.rootPEM.write(toFile: caFile, atomically: false, encoding: .utf8)
        try account.json(tokenURI: fcmTokenURI).write(toFile: accountFile, atomically: false, encoding: .utf8)
        for file in [keyFile, accountFile] { try Self.chmod(file, 0o600) }
        let vapid = try HeraldProcess(["vapid", "--out", vapidFile])
        #expect(try await vapid.exitStatus() == 0, "\(vapid.text)")
    }

    static func chmod(_ file: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
    }

    /// A configuration of the `default` app; `extra` is appended under `app.default`.
    func config(apnsPort: Int, fcmPort: Int, apnsKeyFile: String? = nil, extra: String = "") throws -> String {
        let config = directory.file("herald-\(UUID().uuidString.prefix(8)).yaml")
        try """
        database: \(directory.file("herald.sqlite"))
        app:
          default:
            apns:
              key_file: \(apnsKeyFile ?? keyFile)
              key_id: \(key.keyID)
              team_id: \(key.teamID)
              topic: com.example.check
              url: https://127.0.0.1:\(apnsPort)
              ca_file: \(caFile)
            fcm:
              service_account_file: \(accountFile)
              url: https://127.0.0.1:\(fcmPort)
              ca_file: \(caFile)
            webpush:
              vapid_private_key_file: \(vapidFile)
              subject: mailto:ops@example.com
        \(extra)
        """.write(toFile: config, atomically: false, encoding: .utf8)
        return config
    }
}

private func check(_ arguments: [String]) async throws -> (status: Int32, text: String) {
    let process = try HeraldProcess(["config", "check"] + arguments)
    let status = try await process.exitStatus(timeout: .seconds(90))
    return (status, process.text)
}

/// The line `herald config check` printed for `name`.
private func checkLine(_ text: String, _ name: String) -> String {
    text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.map(String.init) ?? "(no line for \(name))"
}

@Suite("herald config check as a process, against mock APNs and FCM (and moto for SNS)", .serialized)
struct ConfigCheckTests {
    @Test("a good configuration: a line per provider, OK; --connect reaches APNs and FCM with the configured auth")
    func goodConfiguration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let placeholder = try await Credentials(directory, fcmTokenURI: "https://127.0.0.1:1/token")
        let apns = try await MockAPNsServer.start(
            ca: placeholder.ca, credentials: [placeholder.key.credential(topics: ["com.example.check"])])
        let fcm = try await MockFCMServer.start(ca: placeholder.ca, serviceAccount: placeholder.account)
        try placeholder.account.json(tokenURI: fcm.tokenURI)
            .write(toFile: placeholder.accountFile, atomically: false, encoding: .utf8)
        let config = try placeholder.config(apnsPort: apns.port, fcmPort: fcm.port)

        let offline = try await check(["--config", config])
        #expect(offline.status == 0, "\(offline.text)")
        #expect(checkLine(offline.text, "app default apns").contains("OK"), "\(offline.text)")
        #expect(checkLine(offline.text, "app default apns").contains("token auth, key \(placeholder.key.keyID)"))
        #expect(checkLine(offline.text, "app default fcm").contains("OK"), "\(offline.text)")
        #expect(checkLine(offline.text, "app default webpush").contains("OK"), "\(offline.text)")
        #expect(offline.text.contains("configuration OK"))
        #expect(apns.requests.isEmpty && fcm.requests.isEmpty, "nothing connects without --connect")

        let online = try await check(["--config", config, "--connect"])
        #expect(online.status == 0, "\(online.text)")
        #expect(checkLine(online.text, "app default apns").contains("connected: production"), "\(online.text)")
        #expect(checkLine(online.text, "app default fcm").contains("OAuth token obtained, connected"), "\(online.text)")
        #expect(checkLine(online.text, "app default webpush").contains("nothing to connect to"), "\(online.text)")
        #expect(apns.requests.count == 1)
        #expect(fcm.tokenRequestCount == 1)
    }

    @Test("bad configurations: a world-readable key, a key APNs refuses, a missing account, a broken value; exit 1")
    func badConfigurations() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let credentials = try await Credentials(directory, fcmTokenURI: "https://127.0.0.1:1/token")
        // The mock trusts another key with the same ids: the configured one's tokens are refused.
        let stranger = TestAPNsAuthKey(teamID: credentials.key.teamID, keyID: credentials.key.keyID)
        let apns = try await MockAPNsServer.start(
            ca: credentials.ca, credentials: [stranger.credential(topics: ["com.example.check"])])
        let fcm = try await MockFCMServer.start(ca: credentials.ca, serviceAccount: credentials.account)
        try credentials.account.json(tokenURI: fcm.tokenURI)
            .write(toFile: credentials.accountFile, atomically: false, encoding: .utf8)

        let refusedKey = try await check(
            ["--config", try credentials.config(apnsPort: apns.port, fcmPort: fcm.port), "--connect"])
        #expect(refusedKey.status == 1, "\(refusedKey.text)")
        #expect(checkLine(refusedKey.text, "app default apns").contains("FAIL"), "\(refusedKey.text)")
        #expect(checkLine(refusedKey.text, "app default apns").contains("InvalidProviderToken"), "\(refusedKey.text)")
        #expect(checkLine(refusedKey.text, "app default fcm").contains("OK"), "\(refusedKey.text)")
        #expect(refusedKey.text.contains("1 problem found"))

        let readable = directory.file("readable.p8")
        try credentials.key.p8PEM.write(toFile: readable, atomically: false, encoding: .utf8)
        try Credentials.chmod(readable, 0o644)
        let open = try await check(
            [
                "--config",
                try credentials.config(apnsPort: apns.port, fcmPort: fcm.port, apnsKeyFile: readable),
            ])
        #expect(open.status == 1, "\(open.text)")
        #expect(
            checkLine(open.text, "app default apns").contains(
                "app.default.apns.key_file: '\(readable)' holds a secret but is readable by group or others (mode 644)"),
            "\(open.text)")

        let garbage = directory.file("garbage.p8")
        try "not a key".write(toFile: garbage, atomically: false, encoding: .utf8)
        try Credentials.chmod(garbage, 0o600)
        let unparsable = try await check(
            [
                "--config",
                try credentials.config(apnsPort: apns.port, fcmPort: fcm.port, apnsKeyFile: garbage),
            ])
        #expect(unparsable.status == 1)
        #expect(
            checkLine(unparsable.text, "app default apns").contains("app.default.apns.key_file"), "\(unparsable.text)")

        try FileManager.default.removeItem(atPath: credentials.accountFile)
        let missing = try await check([
            "--config", try credentials.config(apnsPort: apns.port, fcmPort: fcm.port),
        ])
        #expect(missing.status == 1)
        #expect(
            checkLine(missing.text, "app default fcm").contains(
                "app.default.fcm.service_account_file: '\(credentials.accountFile)' cannot be read"),
            "\(missing.text)")

        // Secrets in a world-readable configuration file; a value that does not parse.
        let secrets = directory.file("secrets.yaml")
        try
            "apps: [shop]\napp:\n  shop:\n    server_key: hsk_check-server-key-00000000\n    client_key: hck_check-client-key-00000000\n"
            .write(toFile: secrets, atomically: false, encoding: .utf8)
        try Credentials.chmod(secrets, 0o644)
        let exposed = try await check(["--config", secrets])
        #expect(exposed.status == 1)
        #expect(checkLine(exposed.text, "configuration").contains("readable by group or others"), "\(exposed.text)")
        try Credentials.chmod(secrets, 0o600)
        #expect(try await check(["--config", secrets]).status == 0)

        let broken = directory.file("broken.yaml")
        try "server:\n  port: many\n".write(toFile: broken, atomically: false, encoding: .utf8)
        let invalid = try await check(["--config", broken])
        #expect(invalid.status == 1)
        #expect(checkLine(invalid.text, "configuration").contains("server.port"), "\(invalid.text)")
    }

    @Test(
        "SNS: the application ARNs read with GetPlatformApplicationAttributes on moto; an unknown one and a malformed one fail"
    )
    func snsAgainstMoto() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let moto = try await MotoServer.start()
        defer { moto.stop() }
        var create = URLRequest(url: URL(string: moto.endpoint + "/")!)
        create.httpMethod = "POST"
        create.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        // moto routes a request by the service its SigV4 credential scope names (it checks no signature).
        create.setValue(
            "AWS4-HMAC-SHA256 Credential=testing/20261125/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=00",
            forHTTPHeaderField: "Authorization")
        create.httpBody = Data(
            ("Action=CreatePlatformApplication&Name=check&Platform=GCM"
                + "&Attributes.entry.1.key=PlatformCredential&Attributes.entry.1.value=server-key&Version=2010-03-31")
                .utf8)
        let (body, response) = try await URLSession.shared.data(for: create)
        let answer = String(decoding: body, as: UTF8.self)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(answer)")
        let start = try #require(answer.range(of: "<PlatformApplicationArn>"))
        let end = try #require(answer.range(of: "</PlatformApplicationArn>"))
        let arn = String(answer[start.upperBound..<end.lowerBound])

        func config(_ arn: String) throws -> String {
            let file = directory.file("sns-\(UUID().uuidString.prefix(8)).yaml")
            try """
            app:
              default:
                sns:
                  region: us-east-1
                  endpoint_url: \(moto.endpoint)
                  access_key_id: testing
                  secret_access_key: testing-secret
                  gcm_application_arn: \(arn)
            """.write(toFile: file, atomically: false, encoding: .utf8)
            try Credentials.chmod(file, 0o600)
            return file
        }
        let good = try await check(["--config", try config(arn), "--connect"])
        #expect(good.status == 0, "\(good.text)")
        #expect(
            checkLine(good.text, "app default sns").contains("connected: every application readable"), "\(good.text)")

        let unknown = try await check(
            ["--config", try config("arn:aws:sns:us-east-1:\(MotoServer.accountID):app/GCM/nobody"), "--connect"])
        #expect(unknown.status == 1, "\(unknown.text)")
        #expect(
            checkLine(unknown.text, "app default sns").contains("GetPlatformApplicationAttributes failed"),
            "\(unknown.text)"
        )

        let malformed = try await check(
            ["--config", try config("arn:aws:sns:us-east-1:\(MotoServer.accountID):app/GCM")])
        #expect(malformed.status == 1)
        #expect(
            checkLine(malformed.text, "app default sns").contains("is not an SNS platform application ARN"),
            "\(malformed.text)")
        let notAnARN = try await check(["--config", try config("app/GCM/check")])
        #expect(notAnARN.status == 1)
        #expect(
            checkLine(notAnARN.text, "configuration").contains("app.default.sns.gcm_application_arn"),
            "\(notAnARN.text)")
    }

    @Test("deploy/: the sample configuration passes config check; systemd-analyze verifies the unit")
    func deployFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sample = directory.file("herald.yaml")
        try FileManager.default.copyItem(atPath: root.appendingPathComponent("deploy/herald.yaml").path, toPath: sample)
        try Credentials.chmod(sample, 0o600)
        let checked = try await check(["--config", sample])
        #expect(checked.status == 0, "\(checked.text)")
        #expect(checkLine(checked.text, "app default").contains("no push provider configured"), "\(checked.text)")

        let dockerfile = try String(contentsOf: root.appendingPathComponent("deploy/Dockerfile"), encoding: .utf8)
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let build = "swift build -c release --static-swift-stdlib --product herald"
        #expect(dockerfile.contains(build) && readme.contains(build), "the README and the Dockerfile build alike")

        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "systemd-analyze is missing: run scripts/bootstrap (scripts/test runs it), which installs Debian's systemd")
        let unit = directory.file("herald.service")
        try String(contentsOf: root.appendingPathComponent("deploy/herald.service"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/herald", with: HeraldProcess.executable.path)
            .write(toFile: unit, atomically: false, encoding: .utf8)
        let verify = Process()
        verify.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        verify.arguments = ["verify", unit]
        let pipe = Pipe()
        verify.standardOutput = pipe
        verify.standardError = pipe
        try verify.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        verify.waitUntilExit()
        #expect(verify.terminationStatus == 0, "\(output)")
        #expect(output.isEmpty, "\(output)")
    }
}
