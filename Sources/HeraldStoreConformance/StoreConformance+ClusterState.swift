import Foundation
import HeraldCore
import Testing

/// State every node sharing a store sees alike: rate-limit buckets and provider pauses.
extension StoreConformance {
    static let clusterState: [EngineConformanceCase] = [
        .init("cluster: a bucket spends its capacity at once, then says when a token is back (GCRA)") { store in
            // 3 per 60 s: one token every 20 s.
            let steps: [(seconds: TimeInterval, expected: TokenBucketLimiter.Decision)] = [
                (0, .allowed), (0, .allowed), (0, .allowed), (0, .limited(retryAfter: 20)),
                (19, .limited(retryAfter: 1)), (20, .allowed), (20, .limited(retryAfter: 20)),
                (59, .allowed), (59, .limited(retryAfter: 1)), (60, .allowed), (200, .allowed), (200, .allowed),
                (200, .allowed),
                (200, .limited(retryAfter: 20)),
            ]
            var oracle = TokenBucketLimiter(capacity: 3, per: 60)
            for (index, step) in steps.enumerated() {
                let decision = try await store.acquireToken(bucket: "k", capacity: 3, per: 60, now: at(step.seconds))
                #expect(decision == step.expected, "step \(index) at +\(step.seconds) s")
                #expect(oracle.acquire("k", now: at(step.seconds)) == step.expected, "oracle step \(index)")
            }
        },
        .init("cluster: buckets are separate, and concurrent requests never spend more than the capacity") { store in
            for _ in 0..<2 {
                #expect(try await store.acquireToken(bucket: "x", capacity: 2, per: 10, now: now) == .allowed)
            }
            #expect(
                try await store.acquireToken(bucket: "x", capacity: 2, per: 10, now: now) == .limited(retryAfter: 5))
            #expect(try await store.acquireToken(bucket: "y", capacity: 2, per: 10, now: now) == .allowed)
            let decisions = try await withThrowingTaskGroup(of: TokenBucketLimiter.Decision.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await store.acquireToken(bucket: "z", capacity: 5, per: 3600, now: now) }
                }
                return try await group.reduce(into: [TokenBucketLimiter.Decision]()) { $0.append($1) }
            }
            #expect(decisions.filter { $0 == .allowed }.count == 5)
            #expect(decisions.filter { $0 != .allowed }.allSatisfy { $0 == .limited(retryAfter: 720) })
        },
        .init("cluster: provider pauses: the later end wins, per app and service, and ended ones are not listed") {
            store in
            try await store.pauseProvider(appID: "a", service: .apns, until: at(60))
            try await store.pauseProvider(appID: "a", service: .apns, until: at(30))
            #expect(
                try await store.providerPauses(now: now) == [ProviderPause(appID: "a", service: .apns, until: at(60))])
            try await store.pauseProvider(appID: "a", service: .apns, until: at(90))
            try await store.pauseProvider(appID: "a", service: .fcm, until: at(10))
            try await store.pauseProvider(appID: "b", service: .apns, until: at(40))
            let all = Set(try await store.providerPauses(now: now))
            #expect(
                all == [
                    ProviderPause(appID: "a", service: .apns, until: at(90)),
                    ProviderPause(appID: "a", service: .fcm, until: at(10)),
                    ProviderPause(appID: "b", service: .apns, until: at(40)),
                ])
            let later = Set(try await store.providerPauses(now: at(20)))
            #expect(
                later == [
                    ProviderPause(appID: "a", service: .apns, until: at(90)),
                    ProviderPause(appID: "b", service: .apns, until: at(40)),
                ])
            #expect(try await store.providerPauses(now: at(90)).isEmpty)
        },
        .init("cluster: a Web Push service's pause (its origin) is apart from the provider's and the other origins'") {
            store in
            let mozilla = "https://updates.push.services.mozilla.com"
            let google = "https://fcm.googleapis.com"
            try await store.pauseProvider(appID: "a", service: .webpush, scope: mozilla, until: at(60))
            try await store.pauseProvider(appID: "a", service: .webpush, scope: mozilla, until: at(30))
            try await store.pauseProvider(appID: "a", service: .webpush, scope: google, until: at(20))
            try await store.pauseProvider(appID: "a", service: .webpush, until: at(10))
            #expect(
                Set(try await store.providerPauses(now: now)) == [
                    ProviderPause(appID: "a", service: .webpush, scope: mozilla, until: at(60)),
                    ProviderPause(appID: "a", service: .webpush, scope: google, until: at(20)),
                    ProviderPause(appID: "a", service: .webpush, until: at(10)),
                ])
            #expect(
                try await store.providerPauses(now: at(20)) == [
                    ProviderPause(appID: "a", service: .webpush, scope: mozilla, until: at(60))
                ])
        },
    ]
}
