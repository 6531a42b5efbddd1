import Foundation
import GRDB
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldSQLite

#if canImport(Glibc)
    import Glibc
#endif

@Suite("InlineReaders: small reads on the calling thread")
struct InlineReadersTests {
    @Test(
        "A small read runs on the calling thread and sees the last commit; with every connection in use it is not waited for: it goes to the pool"
    )
    func inlineReads() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(path: directory.file("i.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        let token = Fixtures.apnsToken()
        let registered = try await store.register(
            InstallationRegistration(platform: .ios, service: .apns, token: .device(token)), appID: "a", now: Date())
        // What was just committed, read through the store's small read (an inline connection is free).
        let found = try await store.installation(appID: "a", service: .apns, token: token)
        #expect(found?.id == registered.installation.id)

        let thread = pthread_self()
        let ranHere = try store.inlineReaders.read { _ in pthread_self() == thread }
        #expect(ranHere == true)
        // Both connections held (one read inside the other): a third read is refused at once, not waited for.
        let nested = try store.inlineReaders.read { _ in
            try store.inlineReaders.read { _ in
                try store.inlineReaders.read { _ in 1 }
            }
        }
        #expect(nested == .some(.some(nil)))
        // ...and the store's small read then goes to the pool's readers: both connections held by other threads.
        let held = Mutex(0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<2 {
            DispatchQueue.global().async {
                _ = try? store.inlineReaders.read { _ in
                    held.withLock { $0 += 1 }
                    release.wait()
                }
            }
        }
        try await waitUntil("both inline connections held") { held.withLock { $0 } == 2 }
        let count = try await store.smallRead { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM installations") }
        #expect(count == 1)
        release.signal()
        release.signal()
    }
}
