import Foundation
import HeraldCore
import Testing

/// Opens: a device's report that it opened a notification, counted once per installation.
extension StoreConformance {
    static let opens: [StoreConformanceCase] = [
        .init("opens: each installation's first open counts once; a repeat keeps the first time") { store in
            let first = try await register(ios(user: "u1"), in: store)
            let second = try await register(android(user: "u2"), in: store)
            let sent = notification()
            _ = try await store.insertNotification(sent, runAt: now, idempotencyWindow: .seconds(60))

            let recorded = try await store.recordOpen(
                appID: "a", notificationID: sent.id, installationID: first.id, userID: "u1", openedAt: at(5))
            #expect(recorded == .recorded(openedAt: at(5)))
            let repeated = try await store.recordOpen(
                appID: "a", notificationID: sent.id, installationID: first.id, userID: nil, openedAt: at(9))
            #expect(repeated == .repeated(openedAt: at(5)))
            #expect(try await store.notification(appID: "a", id: sent.id)?.counts.opened == 1)

            let other = try await store.recordOpen(
                appID: "a", notificationID: sent.id, installationID: second.id, userID: nil, openedAt: at(7))
            #expect(other == .recorded(openedAt: at(7)))
            let stored = try #require(try await store.notification(appID: "a", id: sent.id))
            #expect(stored.counts == NotificationCounts(opened: 2))

            // A page commit's counts add to the opens, never reset them.
            let job = try #require(
                try await store.claimJob(kinds: [.notification], owner: "w1", now: now, lockedUntil: at(300)))
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: sent.id)
            page.counts = NotificationCounts(targeted: 2, sent: 2)
            #expect(try await store.commit(page))
            #expect(
                try await store.notification(id: sent.id)?.counts
                    == NotificationCounts(targeted: 2, sent: 2, opened: 2))
        },
        .init("opens: another app's notification or installation, or another user's installation, is unknown") {
            store in
            let mine = try await register(ios(user: "u1"), in: store)
            let elsewhere = try await register(ios(user: "u1"), in: store, app: "b")
            let sent = notification()
            let theirs = notification(app: "b")
            for item in [sent, theirs] {
                _ = try await store.insertNotification(item, runAt: now, idempotencyWindow: .seconds(60))
            }
            func open(_ notificationID: String, _ installationID: String, user: String?) async throws -> OpenRecording {
                try await store.recordOpen(
                    appID: "a", notificationID: notificationID, installationID: installationID, userID: user,
                    openedAt: now)
            }
            #expect(try await open(theirs.id, mine.id, user: nil) == .unknownNotification)
            #expect(try await open("missing", mine.id, user: nil) == .unknownNotification)
            #expect(try await open(sent.id, elsewhere.id, user: nil) == .unknownInstallation)
            #expect(try await open(sent.id, "missing", user: nil) == .unknownInstallation)
            #expect(try await open(sent.id, mine.id, user: "u2") == .unknownInstallation)
            #expect(try await store.notification(appID: "a", id: sent.id)?.counts.opened == 0)
            #expect(try await store.notification(appID: "b", id: theirs.id)?.counts.opened == 0)
            // Once the installation is gone its opens are not recorded either.
            #expect(try await store.deleteInstallation(appID: "a", id: mine.id))
            #expect(try await open(sent.id, mine.id, user: nil) == .unknownInstallation)
        },
    ]
}
