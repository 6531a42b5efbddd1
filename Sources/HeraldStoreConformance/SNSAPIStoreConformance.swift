import Foundation
import HeraldCore
import HeraldSNSAPI
import HeraldTestSupport
import Testing

/// The SNS API dialect's records (`SNSAPIStore`, declared in `HeraldSNSAPI`): platform applications,
/// topics and subscriptions, and the endpoints (installations) found by their platform application.
extension StoreConformance {
    static let snsAPI: [StoreConformanceCase] = [
        .init(
            "sns: platform applications, topics and subscriptions; deleting an application deletes its endpoints",
            keeping: (any HeraldStore & SNSAPIStore).self
        ) { store in
            let application = SNSPlatformApplication(
                appID: "demo", name: "ios", platform: "APNS", attributes: ["PlatformCredential": "x"], createdAt: now)
            #expect(try await store.putSNSPlatformApplication(application) == application)
            var changed = application
            changed.attributes = ["PlatformCredential": "y"]
            #expect(try await store.putSNSPlatformApplication(changed).attributes == ["PlatformCredential": "y"])
            #expect(
                try await store.snsPlatformApplication(appID: "demo", name: "ios")?.attributes == changed.attributes)
            let android = SNSPlatformApplication(
                appID: "demo", name: "and", platform: "GCM", attributes: [:], createdAt: now)
            _ = try await store.putSNSPlatformApplication(android)
            #expect(
                try await store.snsPlatformApplications(appID: "demo", after: nil, limit: 10).map(\.name) == [
                    "and", "ios",
                ])
            #expect(
                try await store.snsPlatformApplications(appID: "demo", after: "and", limit: 10).map(\.name) == ["ios"])
            #expect(try await store.snsPlatformApplications(appID: "other", after: nil, limit: 10).isEmpty)

            let token = Fixtures.apnsToken()
            let endpoint = try await register(
                ios(token, attributes: [Installation.snsPlatformApplicationAttribute: .string("ios")]), in: store,
                app: "demo")
            _ = try await register(ios(), in: store, app: "demo")
            #expect(try await store.installation(appID: "demo", service: .apns, token: token)?.id == endpoint.id)
            #expect(try await store.installation(appID: "demo", service: .fcm, token: token) == nil)
            #expect(try await store.installation(appID: "other", service: .apns, token: token) == nil)
            #expect(
                try await store.snsEndpoints(appID: "demo", application: "ios", after: nil, limit: 10).map(\.id) == [
                    endpoint.id
                ])

            let topic = try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: now))
            #expect(try await store.putSNSTopic(SNSTopic(appID: "demo", name: "news", createdAt: at(5))) == topic)
            #expect(try await store.snsTopic(appID: "demo", name: "news") == topic)
            #expect(try await store.snsTopics(appID: "demo", after: nil, limit: 10) == [topic])
            let subscription = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s1", topic: "news", installationID: endpoint.id, createdAt: now))
            let again = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s2", topic: "news", installationID: endpoint.id, createdAt: now))
            #expect(again == subscription)
            #expect(try await store.snsSubscription(appID: "demo", id: "s1") == subscription)
            #expect(
                try await store.snsSubscriptions(appID: "demo", topic: "news", after: nil, limit: 10).map(\.id) == [
                    "s1"
                ])

            #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios"))
            #expect(try await store.installation(appID: "demo", id: endpoint.id) == nil)
            #expect(try await store.snsSubscription(appID: "demo", id: "s1") == nil)
            #expect(try await listAll(app: "demo", in: store).count == 1)
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == [])
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "news") == nil)
            #expect(try await store.deleteSNSPlatformApplication(appID: "demo", name: "ios") == false)
        },
        .init(
            "sns: deleting a topic or a subscription returns what went", keeping: (any HeraldStore & SNSAPIStore).self
        ) { store in
            let one = try await register(ios(), in: store, app: "demo")
            let two = try await register(android(), in: store, app: "demo")
            _ = try await store.putSNSTopic(SNSTopic(appID: "demo", name: "t", createdAt: now))
            let first = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s1", topic: "t", installationID: one.id, createdAt: now))
            let second = try await store.putSNSSubscription(
                SNSSubscription(appID: "demo", id: "s2", topic: "t", installationID: two.id, createdAt: now))
            let ordered = [first, second].sorted { $0.installationID < $1.installationID }
            #expect(try await store.snsSubscriptions(appID: "demo", topic: "t", after: nil, limit: 10) == ordered)
            #expect(
                try await store.snsSubscriptions(
                    appID: "demo", topic: "t", after: ordered[0].installationID, limit: 10) == [ordered[1]])
            #expect(try await store.deleteSNSSubscription(appID: "demo", id: "s1"))
            #expect(try await !store.deleteSNSSubscription(appID: "demo", id: "s1"))
            #expect(try await store.deleteSNSTopic(appID: "demo", name: "t") == [second])
            #expect(try await store.snsTopic(appID: "demo", name: "t") == nil)
            #expect(try await store.installation(appID: "demo", id: two.id) != nil)
        },
    ]
}
