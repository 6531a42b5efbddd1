import Foundation
import HeraldCore
import Testing

/// Signed-out console sessions: kept until they would have expired, then dropped by the clean-up.
extension StoreConformance {
    static let consoleSessions: [StoreConformanceCase] = [
        .init("console sessions: a signed-out session stays revoked until its expiry, then the clean-up drops it") {
            store in
            #expect(try await store.isConsoleSessionRevoked(digest: "one") == false)
            try await store.revokeConsoleSession(digest: "one", expiresAt: at(3600))
            try await store.revokeConsoleSession(digest: "one", expiresAt: at(3600))
            try await store.revokeConsoleSession(digest: "two", expiresAt: at(7200))
            #expect(try await store.isConsoleSessionRevoked(digest: "one"))
            #expect(try await store.isConsoleSessionRevoked(digest: "three") == false)
            _ = try await store.cleanup(CleanupPolicy(), now: at(3599))
            #expect(try await store.isConsoleSessionRevoked(digest: "one"))
            _ = try await store.cleanup(CleanupPolicy(), now: at(3601))
            #expect(try await store.isConsoleSessionRevoked(digest: "one") == false)
            #expect(try await store.isConsoleSessionRevoked(digest: "two"))
        }
    ]
}
