import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The device registry: identity rules, updates, deletes, listing, preferences, export and import.
extension StoreConformance {
    /// The registry's changes the engine makes (``DispatchRegistry``), read back through the engine's contract.
    static let engineRegistry: [EngineConformanceCase] = [
        .init("registry: registering a token again updates its one installation") { store in
            let token = Fixtures.apnsToken()
            let first = try await store.register(ios(token), appID: "a", now: now)
            var again = ios(token)
            again.locale = "fr"
            again.environment = .sandbox
            let second = try await store.register(again, appID: "a", now: at(5))
            #expect(first.created)
            #expect(!second.created)
            #expect(second.installation.id == first.installation.id)
            let stored = try #require(try await readBack(first.installation.id, in: store))
            #expect(stored.locale == "fr")
            #expect(stored.environment == .sandbox)
            #expect(stored.token == .device(token))
            #expect(stored.createdAt == now)
            #expect(stored.updatedAt == at(5))
            #expect(try await resolveAll(.init(audience: .all), in: store) == [first.installation.id])
        },
        .init("registry: the same token in another app is another installation") { store in
            let token = Fixtures.apnsToken()
            let one = try await store.register(ios(token), appID: "a", now: now)
            let other = try await store.register(ios(token), appID: "b", now: now)
            #expect(other.created)
            #expect(other.installation.id != one.installation.id)
            #expect(try await readBack(one.installation.id, app: "b", in: store) == nil)
            #expect(try await readBack(one.installation.id, in: store) != nil)
        },
        .init("registry: a token moves to the user and device that present it; one token, one installation") {
            store in
            let token = Fixtures.apnsToken()
            let alice = try await register(ios(token, user: "alice"), in: store)
            let bob = try await store.register(ios(token, user: "bob"), appID: "a", now: at(1))
            #expect(bob.installation.id == alice.id)
            #expect(try await readBack(alice.id, in: store)?.userID == "bob")
            // The token shows up on another device's record: it moves there and its old holder goes.
            let device = try await register(ios(device: "d2"), in: store, now: at(2))
            let moved = try await store.register(ios(token, device: "d2"), appID: "a", now: at(3))
            #expect(moved.installation.id == device.id)
            #expect(try await readBack(alice.id, in: store) == nil)
            #expect(try await readBack(device.id, in: store)?.token == .device(token))
            #expect(try await resolveAll(.init(audience: .all), in: store) == [device.id])
        },
        .init("registry: registering again re-validates and resets the failure count") { store in
            let token = Fixtures.apnsToken()
            let installation = try await register(ios(token), in: store)
            try await applyEvents(
                [
                    (installation.id, .failed(reason: "Timeout", at: at(10), maxFailures: 5)),
                    (installation.id, .invalidated(reason: "Unregistered", since: nil, at: at(20))),
                ], in: store)
            let invalid = try #require(try await readBack(installation.id, in: store))
            #expect(!invalid.valid)
            #expect(invalid.failureCount == 1)
            #expect(invalid.invalidatedAt == at(20))
            #expect(invalid.lastFailureReason == "Unregistered")
            let again = try await store.register(ios(token), appID: "a", now: at(60))
            #expect(!again.created)
            let stored = try #require(try await readBack(installation.id, in: store))
            #expect(stored.valid)
            #expect(stored.failureCount == 0)
            #expect(stored.invalidatedAt == nil)
            #expect(stored.lastSeenAt == at(60))
        },
        .init("registry: update replaces fields and moves a token; another's device id is a conflict") { store in
            let first = try await register(ios(device: "d1", channels: ["news"]), in: store)
            let second = try await register(ios(device: "d2"), in: store)
            var changed = first
            changed.channels = ["sports"]
            changed.locale = "de"
            changed.attributes = ["level": .number(3)]
            changed.snsEndpointARN = "arn:aws:sns:eu-west-1:1:endpoint/APNS/app/1"
            let updated = try #require(try await store.update(changed, now: at(30)))
            #expect(updated.updatedAt == at(30))
            let stored = try #require(try await readBack(first.id, in: store))
            #expect(stored.channels == ["sports"])
            #expect(stored.locale == "de")
            #expect(stored.attributes == ["level": .number(3)])
            #expect(stored.snsEndpointARN == changed.snsEndpointARN)
            #expect(try await resolveAll(.init(audience: .channels(["news"])), in: store).isEmpty)
            #expect(try await resolveAll(.init(audience: .channels(["sports"])), in: store) == [first.id])

            // The second installation takes the first one's token: the first goes.
            var taking = second
            taking.token = first.token
            _ = try #require(try await store.update(taking, now: at(40)))
            #expect(try await readBack(first.id, in: store) == nil)
            #expect(try await readBack(second.id, in: store)?.token == first.token)

            // A device id another installation of the service holds is refused, and nothing changes.
            let third = try await register(ios(device: "d3"), in: store)
            var clash = third
            clash.deviceID = "d2"
            clash.locale = "it"
            let error = await #expect(throws: HeraldError.self) { try await store.update(clash, now: at(50)) }
            #expect(error?.code == "device_id_in_use")
            #expect(try await readBack(third.id, in: store)?.locale == nil)
            // The same refusal while taking another's token: the token's holder stays (one transaction).
            clash.token = first.token  // which the second installation holds now
            await #expect(throws: HeraldError.self) { try await store.update(clash, now: at(55)) }
            #expect(try await readBack(second.id, in: store)?.token == first.token)
            #expect(try await readBack(third.id, in: store)?.token == third.token)

            var gone = first
            gone.id = "no-such-installation"
            #expect(try await store.update(gone, now: at(60)) == nil)
        },
        .init("registry: delete one, and delete a user's installations with their preferences") { store, api in
            let lone = try await register(ios(channels: ["solo"]), in: store)
            #expect(try await store.deleteInstallation(appID: "b", id: lone.id) == false)
            #expect(try await store.deleteInstallation(appID: "a", id: lone.id))
            #expect(try await !store.deleteInstallation(appID: "a", id: lone.id))
            #expect(try await readBack(lone.id, in: store) == nil)
            #expect(try await resolveAll(.init(audience: .channels(["solo"])), in: store).isEmpty)

            let plain = try await register(ios(user: "carol", channels: ["news"]), in: store)
            var endpoint = try await register(android(user: "carol"), in: store)
            endpoint.snsEndpointARN = "arn:aws:sns:eu-west-1:1:endpoint/GCM/app/2"
            endpoint = try #require(try await store.update(endpoint, now: now))
            let kept = try await register(ios(user: "dave"), in: store)
            let elsewhere = try await register(ios(user: "carol"), in: store, app: "b")
            #expect(
                try await api.setPreferences(
                    appID: "a", installationID: plain.id, preferences: Preferences(soundEnabled: false), now: now))

            let removal = try await store.deleteInstallations(appID: "a", userID: "carol")
            #expect(removal.count == 2)
            #expect(removal.withEndpoints.map(\.id) == [endpoint.id])
            #expect(removal.withEndpoints.first?.snsEndpointARN == endpoint.snsEndpointARN)
            #expect(try await resolveAll(.init(audience: .all), in: store) == [kept.id])
            #expect(try await store.preferences(installationIDs: [plain.id]).isEmpty)
            #expect(try await resolveAll(.init(audience: .channels(["news"])), in: store).isEmpty)
            #expect(try await readBack(elsewhere.id, app: "b", in: store) != nil)
            #expect(try await store.deleteInstallations(appID: "a", userID: "carol").count == 0)
        },
        .init("registry: installations by id read valid and invalid ones of the app, in id order") { store in
            let one = try await register(ios(), in: store)
            let two = try await register(android(), in: store)
            let other = try await register(ios(), in: store, app: "b")
            try await applyEvents(
                [(two.id, .invalidated(reason: "Unregistered", since: nil, at: at(1)))], in: store)
            let found = try await store.installations(appID: "a", ids: [two.id, other.id, "missing", one.id])
            #expect(found.map(\.id) == [one.id, two.id].sorted())
            #expect(found.first { $0.id == two.id }?.valid == false)
            #expect(found.first { $0.id == one.id }?.token == one.token)
            #expect(try await store.installations(appID: "a", ids: []).isEmpty)
        },
        .init("registry: Web Push subscriptions and device tokens read back as registered") { store in
            let subscription = Fixtures.webPushSubscription()
            let registration = InstallationRegistration(
                platform: .web, service: .webpush, token: .webPush(subscription),
                profile: .init(
                    userID: "u", channels: ["a", "b"], locale: "en", timezone: "Europe/Paris", badge: 4,
                    appVersion: "1.2", osVersion: "17", deviceModel: "Firefox", bundleID: "web.app",
                    attributes: ["n": .number(1), "o": .object(["p": .array([.bool(true), .null])])],
                    deleteWhenInvalid: true))
            let stored = try await register(registration, in: store)
            let read = try #require(try await readBack(stored.id, in: store))
            #expect(read == stored)
            #expect(read.token == .webPush(subscription))
            #expect(read.deleteWhenInvalid)
            #expect(read.attributes == registration.attributes)
        },
    ]

    /// The rest of the registry: device ids, batches, listings, keys, preferences, export and import.
    static let registry: [StoreConformanceCase] = [
        .init("registry: with a device id, identity is (app, device_id, service) and the token can change") {
            store in
            let first = try await register(ios(device: "phone-1"), in: store)
            let refreshed = Fixtures.apnsToken()
            let second = try await store.register(ios(refreshed, device: "phone-1"), appID: "a", now: at(1))
            #expect(!second.created)
            #expect(second.installation.id == first.id)
            #expect(try await store.installation(appID: "a", id: first.id)?.token == .device(refreshed))
            // The same device id on another service is another installation.
            let fcm = try await store.register(android(device: "phone-1"), appID: "a", now: at(2))
            #expect(fcm.created)
            let byDevice = try await store.installations(appID: "a", deviceID: "phone-1")
            #expect(byDevice.map(\.id) == [first.id, fcm.installation.id])
            #expect(try await store.installations(appID: "b", deviceID: "phone-1").isEmpty)
        },
        .init("registry: a token held without a device id takes the one presented; another device id starts anew") {
            store in
            let token = Fixtures.apnsToken()
            let bare = try await register(ios(token, user: "u"), in: store)
            let adopted = try await store.register(ios(token, device: "d1"), appID: "a", now: at(1))
            #expect(!adopted.created)
            #expect(adopted.installation.id == bare.id)
            #expect(try await store.installation(appID: "a", id: bare.id)?.deviceID == "d1")
            // The same token from a device id nobody holds: a new installation, and the old holder goes.
            let fresh = try await store.register(ios(token, device: "d9"), appID: "a", now: at(2))
            #expect(fresh.created)
            #expect(fresh.installation.id != bare.id)
            #expect(try await store.installation(appID: "a", id: bare.id) == nil)
            #expect(try await store.installations(appID: "a", deviceID: "d9").map(\.token) == [.device(token)])
            #expect(try await listAll(in: store) == [fresh.installation.id])
        },
        .init("registry: a batch registers each item by the same rules, in order") { store in
            let shared = Fixtures.apnsToken()
            let results = try await store.register(
                batch: [ios(shared, user: "u1"), android(device: "tab"), ios(shared, user: "u2"), web()],
                appID: "a", now: now)
            #expect(results.map(\.created) == [true, true, false, true])
            #expect(results[2].installation.id == results[0].installation.id)
            #expect(Set(results.map(\.installation.id)).count == 3)
            #expect(try await store.installation(appID: "a", id: results[0].installation.id)?.userID == "u2")
            #expect(try await listAll(in: store).count == 3)
            #expect(try await store.register(batch: [], appID: "a", now: now).isEmpty)
        },
        .init("registry: listing filters by user, channel, platform, service and validity, in keyset pages") {
            store in
            var ids: [String] = []
            for index in 0..<7 {
                let user = index.isMultiple(of: 2) ? "even" : "odd"
                let channels = index < 3 ? ["news"] : ["sports"]
                ids.append(
                    try await register(ios(user: user, channels: channels), in: store, now: at(Double(index))).id)
            }
            let phone = try await register(android(user: "odd", channels: ["news", "sports"]), in: store)
            let browser = try await register(web(), in: store)
            try await applyEvents(
                [(ids[0], .invalidated(reason: "Unregistered", since: nil, at: at(100)))], in: store)
            _ = try await register(ios(user: "even"), in: store, app: "b")

            let all = try await listAll(in: store)
            #expect(all == all.sorted())
            #expect(Set(all) == Set(ids + [phone.id, browser.id]))
            #expect(try await listAll(.init(userID: "even"), in: store).count == 4)
            #expect(
                try await listAll(.init(channel: "news"), in: store).sorted() == (ids[0..<3] + [phone.id]).sorted())
            #expect(try await listAll(.init(platform: .android), in: store) == [phone.id])
            #expect(try await listAll(.init(service: .webpush), in: store) == [browser.id])
            #expect(try await listAll(.init(service: .apns), in: store).count == 7)
            #expect(try await listAll(.init(valid: false), in: store) == [ids[0]])
            #expect(try await listAll(.init(valid: true), in: store).count == 8)
            let combined = try await listAll(.init(userID: "odd", channel: "sports", platform: .ios), in: store)
            #expect(combined == [ids[3], ids[5]].sorted())
            let middle = try await store.installations(
                appID: "a", filter: .init(), page: .init(after: all[2], limit: 3))
            #expect(middle.map(\.id) == Array(all[3..<6]))
            #expect(
                try await store.installations(appID: "a", filter: .init(), page: .init(after: all.last)).isEmpty)
        },
        .init("registry: generated app keys are stored once; the first stays") { store in
            #expect(try await store.appKeys(appID: "default") == nil)
            let first = try await store.insertAppKeys(AppKeys.generate(appID: "default"))
            let second = try await store.insertAppKeys(AppKeys.generate(appID: "default"))
            #expect(first == second)
            #expect(try await store.appKeys(appID: "default") == first)
            #expect(try await store.appKeys(appID: "other") == nil)
        },
        .init("registry: preferences are typed, replaced by set, and inserted only once") { store in
            let installation = try await register(ios(), in: store)
            #expect(try await store.preferences(appID: "a", installationID: installation.id) == nil)
            let first = Preferences(
                enabledSources: ["cam-1", "cam-2"], enabledCategories: [], quietHours: nil, quietHoursMode: .defer,
                soundEnabled: false, mutedUntil: at(3600))
            #expect(
                try await store.insertPreferences(
                    appID: "a", installationID: installation.id, preferences: first, now: now))
            #expect(try await store.preferences(appID: "a", installationID: installation.id) == first)
            // A second insert keeps the first value.
            #expect(
                try await !store.insertPreferences(
                    appID: "a", installationID: installation.id, preferences: Preferences(), now: now))
            #expect(try await store.preferences(appID: "a", installationID: installation.id) == first)
            let quiet = try Preferences(
                parsing: .object([
                    "quiet_hours": .object([
                        "start": .string("22:00"), "end": .string("07:00"), "timezone": .string("Europe/Paris"),
                    ])
                ]))
            #expect(
                try await store.setPreferences(
                    appID: "a", installationID: installation.id, preferences: quiet, now: now))
            #expect(try await store.preferences(appID: "a", installationID: installation.id) == quiet)
            #expect(
                try await store.preferences(installationIDs: [installation.id, "missing"]) == [
                    installation.id: quiet
                ])
            // Another app's view, and installations that do not exist.
            #expect(try await store.preferences(appID: "b", installationID: installation.id) == nil)
            #expect(
                try await !store.setPreferences(
                    appID: "b", installationID: installation.id, preferences: first, now: now)
            )
            #expect(
                try await !store.insertPreferences(
                    appID: "a", installationID: "missing", preferences: first, now: now))
            #expect(try await store.preferences(installationIDs: []).isEmpty)
        },
        .init("registry: export pages every app's installations; import after deleting restores them exactly") {
            store in
            var originals: [Installation] = []
            originals.append(try await register(ios(user: "u1", channels: ["news"]), in: store))
            originals.append(try await register(web(user: "u2"), in: store, now: at(1)))
            originals.append(try await register(android(device: "tab"), in: store, now: at(2)))
            // Older than app a's: its id sorts first, so a page after an app-a cursor must still reach it.
            originals.append(
                try await register(ios(attributes: ["vip": .bool(true)]), in: store, app: "b", now: at(-10)))
            let preferences = Preferences(enabledCategories: ["person"], soundEnabled: false)
            #expect(
                try await store.setPreferences(
                    appID: "a", installationID: originals[0].id, preferences: preferences, now: now))
            try await applyEvents(
                [
                    (originals[1].id, .delivered(at: at(10))),
                    (originals[2].id, .failed(reason: "Timeout", at: at(11), maxFailures: 5)),
                ], in: store)
            var expected: [Installation] = []
            for original in originals {
                expected.append(try #require(try await store.installation(appID: original.appID, id: original.id)))
            }

            var exported: [ExportedInstallation] = []
            var cursor: ExportCursor?
            while true {
                let page = try await store.exportInstallations(after: cursor, limit: 3)
                #expect(page.count <= 3)
                exported += page
                guard page.count == 3, let last = page.last else { break }
                cursor = ExportCursor(appID: last.installation.appID, id: last.installation.id)
            }
            let keys = exported.map { "\($0.installation.appID)/\($0.installation.id)" }
            #expect(keys == expected.map { "\($0.appID)/\($0.id)" }.sorted())
            #expect(exported.first { $0.installation.id == originals[0].id }?.preferences == preferences)
            #expect(exported.first { $0.installation.id == originals[1].id }?.preferences == nil)

            for installation in expected {
                #expect(try await store.deleteInstallation(appID: installation.appID, id: installation.id))
            }
            // Devices that registered again under new ids meanwhile, one with the same token and one with
            // the same device id: the import replaces both.
            let newcomer = try await register(
                InstallationRegistration(platform: .ios, service: .apns, token: expected[0].token), in: store,
                now: at(100))
            #expect(newcomer.id != expected[0].id)
            let sameDevice = try await register(android(device: "tab"), in: store, now: at(100))
            #expect(sameDevice.id != expected[2].id)

            #expect(try await store.importInstallations(exported) == exported.count)
            for installation in expected {
                #expect(
                    try await store.installation(appID: installation.appID, id: installation.id) == installation)
            }
            #expect(try await store.installation(appID: "a", id: newcomer.id) == nil)
            #expect(try await store.installation(appID: "a", id: sameDevice.id) == nil)
            #expect(try await store.preferences(appID: "a", installationID: expected[0].id) == preferences)
            #expect(try await listAll(.init(channel: "news"), in: store) == [expected[0].id])
            // Importing the same records again replaces them in place.
            #expect(try await store.importInstallations(exported) == exported.count)
            #expect(try await listAll(in: store).count == 3)
            #expect(try await store.exportInstallations(after: nil, limit: 10).count == 4)
        },
    ]

    /// Writes installation lifecycle events the way dispatch does: through a page commit of a claimed job.
    static func applyEvents(_ events: [(id: String, event: InstallationEvent)], in store: any EngineStore) async throws
    {
        let carrier = notification()
        let job = try await insertAndClaim(carrier, in: store, owner: "lifecycle")
        var page = PageCommit(jobID: job.id, owner: "lifecycle", notificationID: carrier.id)
        page.installationEvents = events
        #expect(try await store.commit(page))
        try await store.finishJob(id: job.id, owner: "lifecycle")
    }
}
