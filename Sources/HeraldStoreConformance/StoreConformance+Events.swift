import Foundation
import HeraldCore
import Synchronization
import Testing

/// Source devices, their owners, and the events that notify them.
extension StoreConformance {
    static let events: [StoreConformanceCase] = [
        .init("events: a source device is found by id or alias; an id or alias already used is device_exists") {
            store in
            let camera = SourceDevice(
                id: "cam-1", appID: "a", alias: "front", name: "Front door", createdAt: now, updatedAt: now)
            #expect(try await store.insertSourceDevice(camera) == camera)
            #expect(try await store.sourceDevice(appID: "a", reference: "cam-1") == camera)
            #expect(try await store.sourceDevice(appID: "a", reference: "front") == camera)
            #expect(try await store.sourceDevice(appID: "b", reference: "cam-1") == nil)
            #expect(try await store.sourceDevice(appID: "a", reference: "back") == nil)
            for clash in [
                SourceDevice(id: "cam-1", appID: "a", createdAt: now, updatedAt: now),
                SourceDevice(id: "front", appID: "a", createdAt: now, updatedAt: now),
                SourceDevice(id: "cam-2", appID: "a", alias: "cam-1", createdAt: now, updatedAt: now),
            ] {
                let error = await #expect(throws: HeraldError.self) { try await store.insertSourceDevice(clash) }
                #expect(error?.code == "device_exists", "\(clash.id) / \(clash.alias ?? "-")")
            }
            let other = SourceDevice(id: "cam-1", appID: "b", createdAt: now, updatedAt: now)
            #expect(try await store.insertSourceDevice(other) == other)
            // Found by its alias in its own app only.
            let aliased = SourceDevice(id: "cam-3", appID: "b", alias: "cam-4", createdAt: now, updatedAt: now)
            _ = try await store.insertSourceDevice(aliased)
            #expect(try await store.sourceDevice(appID: "b", reference: "cam-4") == aliased)
            #expect(try await store.sourceDevice(appID: "a", reference: "cam-4") == nil)
        },
        .init("events: ownerships are created, replaced keeping their creation time, and listed by user") { store in
            _ = try await store.insertSourceDevice(SourceDevice(id: "cam", appID: "a", createdAt: now, updatedAt: now))
            let missing = Ownership(
                appID: "a", deviceID: "nope", userID: "u", status: .active, createdAt: now, updatedAt: now)
            #expect(try await store.setOwnership(missing) == nil)
            let bob = Ownership(
                appID: "a", deviceID: "cam", userID: "bob", status: .active, createdAt: now, updatedAt: now)
            let alice = Ownership(
                appID: "a", deviceID: "cam", userID: "alice", status: .active, createdAt: at(1), updatedAt: at(1))
            #expect(try await store.setOwnership(bob) == bob)
            #expect(try await store.setOwnership(alice) == alice)
            let revoked = Ownership(
                appID: "a", deviceID: "cam", userID: "bob", status: .revoked, createdAt: at(50), updatedAt: at(50))
            let replaced = try await store.setOwnership(revoked)
            #expect(replaced?.status == .revoked)
            #expect(replaced?.createdAt == now)
            #expect(replaced?.updatedAt == at(50))
            #expect(try await store.ownership(appID: "a", deviceID: "cam", userID: "bob") == replaced)
            #expect(try await store.ownership(appID: "a", deviceID: "cam", userID: "carol") == nil)
            #expect(try await store.ownerships(appID: "a", deviceID: "cam").map(\.userID) == ["alice", "bob"])
            #expect(try await store.ownerships(appID: "b", deviceID: "cam").isEmpty)
        },
        .init("events: an event stores its active owners and its notification with a job; its external id once") {
            store in
            try await ownedCamera(in: store, owners: ["alice", "bob", "carol"], revoked: ["bob"])
            let phone = try await register(ios(user: "alice"), in: store)
            let calls = NotifyCalls()
            let event = sourceEvent(id: "e1", externalID: "ext-1")
            let (stored, created) = try await store.insertEvent(event) { stored in
                calls.count()
                return EventNotification(
                    notification: eventNotification(for: stored), runAt: at(5), onlyWithAudience: true)
            }
            #expect(created)
            #expect(calls.value == 1)
            #expect(stored.owners == ["alice", "carol"])
            let notificationID = try #require(stored.notificationID)
            let notification = try #require(try await store.notification(appID: "a", id: notificationID))
            #expect(notification.target == NotificationTarget(audience: .userIDs(["alice", "carol"])))
            #expect(try await resolveAll(notification.target, in: store) == [phone.id])
            let job = try await store.claimJob(kinds: [.notification], owner: "w", now: at(5), lockedUntil: at(60))
            #expect(job?.reference == notificationID)

            var repeated = sourceEvent(id: "e2", externalID: "ext-1")
            repeated.summary = "changed"
            let again = try await store.insertEvent(repeated) { stored in
                calls.count()
                return EventNotification(
                    notification: eventNotification(for: stored), runAt: now, onlyWithAudience: false)
            }
            #expect(!again.created)
            #expect(calls.value == 1)
            #expect(again.event.id == "e1")
            #expect(again.event.summary == stored.summary)
            #expect(again.event.notificationID == notificationID)
        },
        .init("events: with onlyWithAudience, an event nobody would receive is stored without a notification") {
            store in
            try await ownedCamera(in: store, owners: ["alice"])
            let (stored, created) = try await store.insertEvent(sourceEvent(id: "e1", externalID: "x")) { stored in
                EventNotification(notification: eventNotification(for: stored), runAt: now, onlyWithAudience: true)
            }
            #expect(created)
            #expect(stored.notificationID == nil)
            #expect(try await store.notifications(appID: "a", status: nil, page: .init()).isEmpty)
            #expect(
                try await store.claimJob(kinds: [.notification], owner: "w", now: at(10), lockedUntil: at(60)) == nil)
            #expect(try await store.event(appID: "a", producer: "nvr", id: "e1")?.notificationID == nil)
        },
        .init("events: a record id already used is event_exists; a failing notifying stores nothing") { store in
            try await ownedCamera(in: store, owners: ["alice"])
            var first = sourceEvent(id: "e1", externalID: "x1")
            first.recordID = "rec-1"
            _ = try await store.insertEvent(first) { _ in nil }
            var clash = sourceEvent(id: "e2", externalID: "x2")
            clash.recordID = "rec-1"
            let error = await #expect(throws: HeraldError.self) {
                try await store.insertEvent(clash) { _ in nil }
            }
            #expect(error?.code == "event_exists")
            #expect(try await store.event(appID: "a", producer: "nvr", id: "e2") == nil)

            let failing = sourceEvent(id: "e3", externalID: "x3")
            await #expect(throws: HeraldError.self) {
                try await store.insertEvent(failing) { _ in throw HeraldError.internal("template failed") }
            }
            #expect(try await store.event(appID: "a", producer: "nvr", id: "e3") == nil)
            // Another producer's record id is its own.
            var otherProducer = sourceEvent(id: "e4", externalID: "x4", producer: "cloud")
            otherProducer.recordID = "rec-1"
            #expect(try await store.insertEvent(otherProducer) { _ in nil }.created)
        },
        .init("events: the same event (or record id) sent at once is stored once; different events all are") {
            store in
            try await ownedCamera(in: store, owners: ["alice"])
            // Eight copies of one event at once: one is created, the others get it back.
            let copies = try await withThrowingTaskGroup(of: (SourceEvent, Bool).self) { group in
                for copy in 0..<8 {
                    group.addTask {
                        try await store.insertEvent(sourceEvent(id: "copy-\(copy)", externalID: "same")) { _ in nil }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(copies.filter(\.1).count == 1)
            #expect(Set(copies.map(\.0.id)).count == 1)
            // Eight events sharing a record id at once: one is stored, the others are event_exists.
            let records = await withTaskGroup(of: String?.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        var event = sourceEvent(id: "rec-\(index)", externalID: "rec-\(index)")
                        event.recordID = "shared"
                        do {
                            return try await store.insertEvent(event) { _ in nil }.created ? "created" : "returned"
                        } catch let error as HeraldError {
                            return error.code
                        } catch {
                            return nil
                        }
                    }
                }
                return await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(records.filter { $0 == "created" }.count == 1)
            #expect(records.filter { $0 == "event_exists" }.count == 7)
            // Sixteen different events at once: every one is stored, with its notification.
            let distinct = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        try await store.insertEvent(sourceEvent(id: "d-\(index)", externalID: "d-\(index)")) {
                            EventNotification(
                                notification: eventNotification(for: $0), runAt: now, onlyWithAudience: false)
                        }.event.notificationID != nil
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(distinct == Array(repeating: true, count: 16))
        },
        .init("events: an event is found by record id or id, and reads when a device first accepted its push") {
            store in
            try await ownedCamera(in: store, owners: ["alice"])
            let phone = try await register(ios(user: "alice"), in: store)
            var event = sourceEvent(id: "e1", externalID: "x1")
            event.recordID = "rec-1"
            event.thumbnail = "https://example.com/t.jpg"
            event.occurredAt = at(-5)
            let stored = try await store.insertEvent(event) { stored in
                EventNotification(notification: eventNotification(for: stored), runAt: now, onlyWithAudience: true)
            }.event
            #expect(try await store.event(appID: "a", producer: "nvr", id: "rec-1") == stored)
            #expect(try await store.event(appID: "a", producer: "nvr", id: "e1") == stored)
            #expect(try await store.event(appID: "a", producer: "other", id: "rec-1") == nil)
            #expect(try await store.event(appID: "b", producer: "nvr", id: "e1") == nil)
            #expect(stored.pushSentAt == nil)
            #expect(stored.thumbnail == event.thumbnail)
            #expect(stored.occurredAt == at(-5))

            let notificationID = try #require(stored.notificationID)
            let job = try #require(
                try await store.claimJob(kinds: [.notification], owner: "w", now: now, lockedUntil: at(60)))
            var page = PageCommit(jobID: job.id, owner: "w", notificationID: notificationID)
            page.installationEvents = [(phone.id, .delivered(at: at(3)))]
            page.counts = NotificationCounts(targeted: 1, sent: 1)
            #expect(try await store.commit(page))
            let sent = try await store.event(appID: "a", producer: "nvr", id: "rec-1")
            #expect(sent?.pushSentAt == at(3))
            #expect(sent?.pushSent == true)
        },
    ]

    /// A camera `cam` of app `a` owned by `owners`, those in `revoked` no longer.
    static func ownedCamera(in store: any HeraldStore, owners: [String], revoked: Set<String> = []) async throws {
        _ = try await store.insertSourceDevice(SourceDevice(id: "cam", appID: "a", createdAt: now, updatedAt: now))
        for owner in owners {
            let ownership = Ownership(
                appID: "a", deviceID: "cam", userID: owner, status: revoked.contains(owner) ? .revoked : .active,
                createdAt: now, updatedAt: now)
            _ = try await store.setOwnership(ownership)
        }
    }

    /// An event of camera `cam` in app `a`.
    static func sourceEvent(id: String, externalID: String, producer: String = "nvr") -> SourceEvent {
        SourceEvent(
            id: id, appID: "a", producer: producer, externalID: externalID, sourceDeviceID: "cam", type: "person",
            summary: "Someone at the door", status: "new", createdAt: now)
    }

    /// The notification an event makes: its owners' devices.
    static func eventNotification(for event: SourceEvent) -> PushNotification {
        notification(target: NotificationTarget(audience: .userIDs(event.owners)))
    }
}

/// Counts how often a store called an event's `notifying` closure.
final class NotifyCalls: Sendable {
    private let calls = Mutex(0)

    func count() { calls.withLock { $0 += 1 } }

    var value: Int { calls.withLock { $0 } }
}
