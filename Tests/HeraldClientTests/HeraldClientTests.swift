import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import Testing

@testable import HeraldClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("HeraldClient against a running herald serve", .serialized)
struct HeraldClientTests {
    /// A client of `herald` for the user `user`, keeping its installation in `file`.
    static func client(_ herald: RunningHerald, user: String?, file: String) async throws -> HeraldClient {
        let token: String? = if let user { try await herald.userToken(user) } else { nil }
        return HeraldClient(
            configuration: .init(
                baseURL: herald.address, clientKey: herald.clientKey, userToken: { token },
                retry: .init(maxAttempts: 2, initialDelay: .milliseconds(20))),
            store: FileInstallationStore(url: URL(fileURLWithPath: file)))
    }

    static func randomToken() -> Data { Data((0..<32).map { _ in UInt8.random(in: 0...255) }) }

    /// Runs `body` against a fresh server, stopping it afterwards whether `body` passed or threw.
    static func withHerald(_ body: (RunningHerald) async throws -> Void) async throws {
        let herald = try await RunningHerald.start()
        do {
            try await body(herald)
        } catch {
            await herald.stop()
            throw error
        }
        await herald.stop()
    }

    @Test("register, refresh, preferences, an open from the pushed payload counted once, unregister")
    func deviceLifecycle() async throws {
        try await Self.withHerald(deviceLifecycle)
    }

    func deviceLifecycle(_ herald: RunningHerald) async throws {
        let file = herald.directory.file("installation.json")
        let client = try await Self.client(herald, user: "ann", file: file)

        let firstToken = Self.randomToken()
        let hex = DeviceToken.hex(firstToken)
        #expect(hex.count == 64 && hex == hex.lowercased())
        let registered = try await client.register(
            deviceToken: firstToken, platform: .iOS, channels: ["news"], locale: "en-US",
            timeZone: try #require(TimeZone(identifier: "Europe/Paris")), badge: 2,
            bundleID: RunningHerald.topic, attributes: ["tier": "gold", "cameras": 3])
        #expect(registered.userID == "ann")
        #expect(registered.platform == .iOS && registered.service == .apns)
        #expect(registered.tokenSuffix == String(hex.suffix(8)))
        #expect(registered.channels == ["news"])
        #expect(registered.timeZone == "Europe/Paris" && registered.locale == "en-US" && registered.badge == 2)
        #expect(registered.attributes == ["tier": "gold", "cameras": 3])
        #expect(try await client.installation()?.id == registered.id)

        // Same token: nothing to send. A new token: the same installation, the old token gone.
        #expect(try await client.refresh(deviceToken: firstToken) == nil)
        let secondToken = Self.randomToken()
        // A new client on the same store finds the installation, as an app does after a relaunch.
        let relaunched = try await Self.client(herald, user: "ann", file: file)
        let refreshed = try #require(try await relaunched.refresh(deviceToken: secondToken))
        #expect(refreshed.id == registered.id)
        #expect(refreshed.tokenSuffix == String(DeviceToken.hex(secondToken).suffix(8)))
        #expect(refreshed.channels == ["news"])
        let (status, stored) = try await herald.call("GET", "/v1/installations/\(registered.id)")
        #expect(status == 200)
        #expect(stored["token"] as? String == DeviceToken.hex(secondToken))
        let (_, listed) = try await herald.call("GET", "/v1/installations")
        let suffixes = (listed["data"] as? [[String: Any]] ?? []).compactMap { $0["token_suffix"] as? String }
        #expect(suffixes == [String(DeviceToken.hex(secondToken).suffix(8))])

        // A push through the API reaches the mock APNs carrying the notification's id.
        let (sent, accepted) = try await herald.call(
            "POST", "/v1/notifications",
            json: #"{"target":{"installation_ids":["\#(registered.id)"]},"payload":{"title":"Hi","category":"person"}}"#
        )
        #expect(sent == 202)
        let notificationID = try #require(accepted["id"] as? String)
        try await herald.apns.waitForRequests(count: 1, timeout: .seconds(30))
        let push = try #require(herald.apns.requests.first)
        #expect(push.token == DeviceToken.hex(secondToken))
        let userInfo = try #require(try JSONSerialization.jsonObject(with: Data(push.body)) as? [AnyHashable: Any])
        #expect(HeraldClient.notificationID(in: userInfo) == notificationID)

        let opened = try await relaunched.reportOpen(userInfo: userInfo)
        #expect(opened.counted)
        #expect(opened.notificationID == notificationID && opened.installationID == registered.id)
        let repeated = try await client.reportOpen(notificationID: notificationID)
        #expect(!repeated.counted)
        #expect(repeated.openedAt == opened.openedAt)
        let (_, record) = try await herald.call("GET", "/v1/notifications/\(notificationID)")
        #expect((record["counts"] as? [String: Any])?["opened"] as? Int == 1)

        // Set after the push: quiet hours and a mute would hold it back.
        #expect(try await relaunched.preferences() == Preferences())
        let wanted = Preferences(
            enabledCategories: ["person", "vehicle"],
            quietHours: .init(start: "22:00", end: "07:00", timeZone: "Europe/Paris"), quietHoursMode: .defer,
            soundEnabled: false, mutedUntil: Date(timeIntervalSince1970: 1_900_000_000))
        #expect(try await relaunched.setPreferences(wanted) == wanted)
        #expect(try await relaunched.preferences() == wanted)

        try await relaunched.unregister()
        #expect(try await relaunched.installation() == nil)
        #expect(try await FileInstallationStore(url: URL(fileURLWithPath: file)).load() == nil)
        #expect(try await herald.call("GET", "/v1/installations/\(registered.id)").0 == 404)
    }

    @Test("errors surface as HeraldClientError with the server's code, field and status")
    func errors() async throws {
        try await Self.withHerald(errors)
    }

    func errors(_ herald: RunningHerald) async throws {
        let anonymous = try await Self.client(herald, user: nil, file: herald.directory.file("anonymous.json"))

        await #expect(throws: HeraldClientError.notRegistered) {
            try await anonymous.reportOpen(notificationID: "0193a5c0-0000-7000-8000-000000000000")
        }
        await #expect(throws: HeraldClientError.noNotificationID) {
            try await anonymous.reportOpen(userInfo: ["aps": ["alert": "Hi"]])
        }
        let badToken = await #expect(throws: HeraldClientError.self) {
            try await anonymous.register(deviceToken: "not-hex", platform: .iOS, locale: "en")
        }
        #expect(badToken?.code == "invalid_token")
        #expect(badToken?.field == "token")
        #expect(badToken?.status == 400)
        #expect(try await anonymous.installation() == nil)

        let installation = try await anonymous.register(
            deviceToken: Self.randomToken(), platform: .iOS, locale: nil,
            timeZone: try #require(TimeZone(identifier: "Europe/London")))
        #expect(installation.userID == nil)
        // The client key alone may not touch preferences.
        let forbidden = await #expect(throws: HeraldClientError.self) { try await anonymous.preferences() }
        #expect(forbidden?.code == "forbidden")
        #expect(forbidden?.status == 403)
        let unknown = await #expect(throws: HeraldClientError.self) {
            try await anonymous.reportOpen(notificationID: "0193a5c0-0000-7000-8000-000000000000")
        }
        #expect(unknown?.code == "not_found")
        #expect(unknown?.status == 404)

        // The user's installation (registered again under a user) takes preferences; a bad zone is named.
        let ann = try await Self.client(herald, user: "ann", file: herald.directory.file("ann.json"))
        try await ann.register(deviceToken: Self.randomToken(), platform: .iOS, locale: "fr-FR")
        let zone = await #expect(throws: HeraldClientError.self) {
            try await ann.setPreferences(
                Preferences(quietHours: .init(start: "22:00", end: "07:00", timeZone: "Mars/Base")))
        }
        #expect(zone?.code == "invalid_timezone")
        #expect(zone?.field == "quiet_hours.timezone")

        // Nobody listening: bounded retries, then network_error.
        let closed = HeraldClient(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:9")!, clientKey: herald.clientKey,
                retry: .init(maxAttempts: 2, initialDelay: .milliseconds(10))),
            store: FileInstallationStore(url: URL(fileURLWithPath: herald.directory.file("closed.json"))))
        let unreachable = await #expect(throws: HeraldClientError.self) {
            try await closed.register(deviceToken: Self.randomToken(), platform: .iOS)
        }
        #expect(unreachable?.code == "network_error")
        #expect(unreachable?.status == nil)
    }
}

@Suite("HeraldClient without a server")
struct HeraldClientUnitTests {
    @Test("APNs tokens are lowercase hex, two digits a byte")
    func hexTokens() {
        #expect(DeviceToken.hex(Data([0x00, 0x0f, 0xa0, 0xff])) == "000fa0ff")
        #expect(DeviceToken.hex(Data()) == "")
    }

    @Test("the notification id is read from herald.id (APNs) or herald_id (FCM data)")
    func notificationIDs() {
        #expect(HeraldClient.notificationID(in: ["aps": ["badge": 1], "herald": ["id": "n1"]]) == "n1")
        #expect(HeraldClient.notificationID(in: ["herald_id": "n2", "gcm.message_id": "x"]) == "n2")
        #expect(HeraldClient.notificationID(in: ["aps": ["alert": "Hi"]]) == nil)
        #expect(HeraldClient.notificationID(in: ["herald": "n3"]) == nil)
    }

    @Test("the UTC aliases of Linux clocks go as UTC; other zones by their name")
    func zoneNames() throws {
        #expect(HeraldClient.zoneName(try #require(TimeZone(identifier: "Etc/UTC"))) == "UTC")
        #expect(HeraldClient.zoneName(try #require(TimeZone(identifier: "Asia/Tokyo"))) == "Asia/Tokyo")
    }

    @Test("retry delays stay within the doubling ceiling and maxDelay; a long Retry-After ends the retries")
    func retryDelays() {
        let policy = HeraldClient.RetryPolicy(
            maxAttempts: 5, initialDelay: .milliseconds(100), maxDelay: .milliseconds(300))
        #expect(policy.maxAttempts == 5)
        for retry in 1...6 {
            let delay = policy.delay(retry: retry, retryAfter: nil)
            let ceiling: Duration =
                retry == 1 ? .milliseconds(100) : retry == 2 ? .milliseconds(200) : .milliseconds(300)
            #expect(delay.map { $0 >= .zero && $0 <= ceiling } == true, "retry \(retry)")
        }
        #expect(policy.delay(retry: 1, retryAfter: .milliseconds(250)) == .milliseconds(250))
        #expect(policy.delay(retry: 1, retryAfter: .seconds(1)) == nil)
        #expect(HeraldClient.RetryPolicy(maxAttempts: 0).maxAttempts == 1)
        #expect(HeraldClient.RetryPolicy.none.maxAttempts == 1)
    }

    @Test("the file store keeps the installation readable by the user only, and forgets it")
    func fileStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.file("nested/installation.json"))
        let store = FileInstallationStore(url: url)
        #expect(try await store.load() == nil)
        let record = RegisteredInstallation(
            id: "i1", registration: Registration(token: "ab", platform: .iOS, service: .apns, channels: ["a"]))
        try await store.save(record)
        #expect(try await FileInstallationStore(url: url).load() == record)
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        try await store.save(nil)
        #expect(try await store.load() == nil)
    }
}
