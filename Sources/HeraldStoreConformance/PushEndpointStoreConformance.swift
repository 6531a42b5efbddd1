import Foundation
import HeraldCore
import HeraldUnifiedPush
import Testing

/// UnifiedPush endpoints (`PushEndpointStore`, declared in `HeraldUnifiedPush`): kept by their
/// secret's digest, listed and revoked by their public id.
extension StoreConformance {
    static let pushEndpoints: [StoreConformanceCase] = [
        .init(
            "push endpoints: created beside an installation of the app, found by digest, listed live, revoked once",
            keeping: (any HeraldStore & PushEndpointStore).self
        ) { store in
            let installation = try await register(ios(), in: store, app: "demo")
            let first = PushEndpointSecret()
            let endpoint = PushEndpoint(id: "pe_1", appID: "demo", installationID: installation.id, createdAt: now)
            #expect(try await store.createPushEndpoint(endpoint, digest: first.digest))
            let other = PushEndpoint(
                id: "pe_2", appID: "demo", installationID: installation.id, createdAt: now.addingTimeInterval(1))
            #expect(try await store.createPushEndpoint(other, digest: PushEndpointSecret().digest))
            // Not beside another app's installation, nor a missing one.
            let stray = PushEndpoint(id: "pe_3", appID: "other", installationID: installation.id, createdAt: now)
            #expect(try await store.createPushEndpoint(stray, digest: PushEndpointSecret().digest) == false)
            #expect(try await store.pushEndpoint(digest: first.digest) == endpoint)
            #expect(try await store.pushEndpoint(digest: PushEndpointSecret().digest) == nil)
            #expect(
                try await store.pushEndpoints(appID: "demo", installationID: installation.id).map(\.id) == [
                    "pe_1", "pe_2",
                ])
            #expect(try await store.pushEndpoints(appID: "other", installationID: installation.id).isEmpty)

            let later = now.addingTimeInterval(60)
            #expect(
                try await store.revokePushEndpoint(
                    appID: "other", installationID: installation.id, id: "pe_1", now: later)
                    == false)
            #expect(
                try await store.revokePushEndpoint(
                    appID: "demo", installationID: installation.id, id: "pe_1", now: later))
            #expect(
                try await store.revokePushEndpoint(
                    appID: "demo", installationID: installation.id, id: "pe_1", now: later)
                    == false)
            #expect(
                try await store.pushEndpoint(digest: first.digest)?.revokedAt == later, "kept, so its URL answers 410")
            #expect(try await store.pushEndpoints(appID: "demo", installationID: installation.id).map(\.id) == ["pe_2"])
        },
        .init(
            "push endpoint topics: each new message of a topic names the one it replaces; a revoke forgets them",
            keeping: (any HeraldStore & PushEndpointStore).self
        ) { store in
            let installation = try await register(ios(), in: store, app: "demo")
            let endpoint = PushEndpoint(id: "pe_t", appID: "demo", installationID: installation.id, createdAt: now)
            #expect(try await store.createPushEndpoint(endpoint, digest: PushEndpointSecret().digest))
            #expect(try await store.replaceTopicMessage(endpointID: "pe_t", topic: "a", notificationID: "n1") == nil)
            #expect(try await store.replaceTopicMessage(endpointID: "pe_t", topic: "b", notificationID: "n2") == nil)
            #expect(try await store.replaceTopicMessage(endpointID: "pe_t", topic: "a", notificationID: "n3") == "n1")
            #expect(try await store.replaceTopicMessage(endpointID: "pe_t", topic: "a", notificationID: "n4") == "n3")
            #expect(try await store.replaceTopicMessage(endpointID: "pe_x", topic: "a", notificationID: "n5") == nil)
            #expect(
                try await store.revokePushEndpoint(
                    appID: "demo", installationID: installation.id, id: "pe_t", now: now.addingTimeInterval(1)))
            #expect(try await store.replaceTopicMessage(endpointID: "pe_t", topic: "b", notificationID: "n6") == nil)
        },
    ]
}
