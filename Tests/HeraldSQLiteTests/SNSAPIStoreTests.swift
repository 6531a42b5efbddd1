import Foundation
import HeraldCore
import HeraldSQLite
import HeraldTestSupport
import Testing

@Suite("SQLite SNS API store")
struct SNSAPIStoreTests {
    @Test("Platform applications, topics and subscriptions; deleting an application deletes its endpoints")
    func records() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let application = SNSPlatformApplication(
            appID: "demo", name: "ios", platform: "APNS", attributes: ["PlatformCredential": "x"], createdAt: now)
        #expect(try await store.putSNSPlatformApplication(application) == application)
        var changed = application
        changed.attributes = ["PlatformCredential": "y"]
        #expect(try await store.putSNSPlatformApplication(changed).attributes == ["PlatformCredential": "y"])
        #expect(try await store.snsPlatformApplications(appID: "demo", after: nil, limit: 10).map(\.name) == ["ios"])

        let token = Fixtures.apnsToken()
        var registration = InstallationRegistration(platform: .ios, service: .apns, token: .device(token))
        registration.attributes = [Installation.snsPlatformApplicationAttribute: .string("ios")]
        let installation = try await store.register(registration, appID: "demo", now: now).installation
        #expect(try await store.installation(appID: "demo", service: .apns, token: token)?.id == installation.id)
        #expect(try await store.installation(appID: "demo", service: .fcm, token: token) == nil)
        #expect(
            try await store.snsEndpoints(appID: "demo", application: "ios", after: nil, limit: 10).map(\.id) == [
                installation.id
            ])

        let topic = try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: now))
        #expect(try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: now + 5)) == topic)
        let subscription = try await store.putSNSSubscription(
            SNSSubscription(appID: "demo", id: "s1", topic: "news", installationID: installation.id, createdAt: now))
        let again = try await store.putSNSSubscription(
            SNSSubscription(appID: "demo", id: "s2", topic: "news", installationID: installation.id, createdAt: now))
        #expect(again == subscription)
        #expect(
            try await store.snsSubscriptions(appID: "demo", topic: "news", after: nil, limit: 10).map(\.id) == ["s1"])

        #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios"))
        #expect(try await store.installation(appID: "demo", id: installation.id) == nil)
        #expect(try await store.snsSubscription(appID: "demo", id: "s1") == nil)
        #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == [])
        #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == nil)
        #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios") == false)
    }
}
