import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Live Activities (`LiveActivityStore`): activities with their revision counter, budget and
/// timestamps; push-to-start and activity tokens; the claims that keep each device's revisions in
/// order; dropped tokens, deleted installations and dismissed activities; broadcast channels.
/// That tokens are sealed at rest is not checked here: the suite reads a store only through its
/// protocols, not its raw columns.
extension StoreConformance {
    /// The store as the Live Activity cases use it.
    typealias LiveActivityRecords = any HeraldStore & LiveActivityStore

    static let liveActivities: [StoreConformanceCase] = [
        .init(
            "live activities: an activity is created once per app and read back with its device count",
            keeping: LiveActivityRecords.self
        ) { store in
            #expect(try await store.createLiveActivity(liveActivity("order-1")))
            #expect(try await store.createLiveActivity(liveActivity("order-1", type: "Other", at: at(5))) == false)
            #expect(try await store.createLiveActivity(liveActivity("order-1", app: "b")))
            #expect(
                try await store.liveActivity(appID: "a", id: "order-1") == liveActivity("order-1"), "the first is kept")
            #expect(try await store.liveActivity(appID: "a", id: "missing") == nil)
            #expect(try await store.liveActivity(appID: "c", id: "order-1") == nil)

            let phone = try await register(ios(), in: store)
            let android = try await register(android(), in: store)
            try await join(phone, "order-1", token: Fixtures.apnsToken(), in: store)
            try await join(android, "order-1", token: nil, in: store)
            #expect(try await store.liveActivity(appID: "a", id: "order-1")?.devices == 2)
            #expect(try await store.liveActivity(appID: "b", id: "order-1")?.devices == 0)
        },
        .init(
            "live activities: revisions count up from the start; an end dismisses it later and refuses the rest",
            keeping: LiveActivityRecords.self
        ) { store in
            #expect(try await store.createLiveActivity(liveActivity("order-1")))
            #expect(try await next("order-1", at: at(1), in: store)?.revision == 2)
            #expect(try await next("order-1", at: at(2), in: store)?.revision == 3)
            let end = try await store.nextLiveActivityRevision(
                appID: "a", id: "order-1", end: true, dismissalAt: at(600), wantsHighPriority: false,
                highPriorityPerHour: 10, now: at(3))
            #expect(end?.revision == 4)
            let ended = try #require(try await store.liveActivity(appID: "a", id: "order-1"))
            #expect(ended.revision == 4)
            #expect(ended.endedAt == at(3))
            #expect(ended.dismissalAt == at(600))
            #expect(ended.updatedAt == at(3))
            #expect(ended.createdAt == now)

            let error = await #expect(throws: HeraldError.self) { try await next("order-1", at: at(4), in: store) }
            #expect(error?.code == "live_activity_ended")
            #expect(try await store.liveActivity(appID: "a", id: "order-1")?.revision == 4, "nothing assigned")
            #expect(try await next("missing", at: at(4), in: store) == nil)
            #expect(try await next("order-1", app: "b", at: at(4), in: store) == nil)

            // An end without a dismissal date leaves the Lock Screen after ActivityKit's four hours.
            #expect(try await store.createLiveActivity(liveActivity("order-2")))
            _ = try await store.nextLiveActivityRevision(
                appID: "a", id: "order-2", end: true, dismissalAt: nil, wantsHighPriority: false,
                highPriorityPerHour: 10, now: at(10))
            let second = try await store.liveActivity(appID: "a", id: "order-2")
            #expect(second?.dismissalAt == at(10 + LiveActivity.defaultDismissal))
        },
        .init(
            "live activities: high priority within the budget per hour from the window's first, normal past it",
            keeping: LiveActivityRecords.self
        ) { store in
            #expect(try await store.createLiveActivity(liveActivity("game")))
            var priorities: [Bool] = []
            for (seconds, wants) in [(0.0, true), (60, false), (120, true), (180, true), (3599, true), (3600, true)] {
                let revision = try await next("game", at: at(seconds), high: wants, perHour: 2, in: store)
                priorities.append(try #require(revision).highPriority)
            }
            // A push that does not ask leaves the budget alone; the hour starts at the first high one.
            #expect(priorities == [true, false, true, false, false, true])
            #expect(try await next("game", at: at(3700), high: true, perHour: 2, in: store)?.highPriority == true)
            #expect(try await next("game", at: at(3800), high: true, perHour: 2, in: store)?.highPriority == false)
            #expect(try await next("game", at: at(7300), high: true, perHour: 0, in: store)?.highPriority == false)
        },
        .init(
            "live activities: timestamps never go back, whatever the clock says",
            keeping: LiveActivityRecords.self
        ) { store in
            let second = Int(now.timeIntervalSince1970)
            #expect(try await store.createLiveActivity(liveActivity("order-1", at: at(100))))
            // Not before the start's own stamp, nor before an earlier revision's.
            #expect(try await next("order-1", at: at(50), in: store)?.timestamp == second + 100)
            #expect(try await next("order-1", at: at(200), in: store)?.timestamp == second + 200)
            #expect(try await next("order-1", at: at(150), in: store)?.timestamp == second + 200)
            #expect(try await next("order-1", at: at(200.5), in: store)?.timestamp == second + 200)
            #expect(try await next("order-1", at: at(201), in: store)?.timestamp == second + 201)
            // An activity the app started is stamped from its first update.
            let phone = try await register(ios(), in: store)
            try await join(phone, "own", token: Fixtures.apnsToken(), in: store)
            #expect(try await next("own", at: at(7), in: store)?.timestamp == second + 7)
        },
        .init(
            "live activities: push-to-start tokens are set per attributes type, replaced, removed and listed by suffix",
            keeping: LiveActivityRecords.self
        ) { store in
            let phone = try await register(ios(), in: store)
            let other = try await register(ios(), in: store)
            let (first, second, replaced) = (Fixtures.apnsToken(), Fixtures.apnsToken(), Fixtures.apnsToken())
            for (type, token, time) in [("Score", first, now), ("Delivery", second, at(1)), ("Score", replaced, at(5))]
            {
                try await store.setPushToStartToken(
                    installationID: phone.id, attributesType: type, token: token, service: .apns, now: time)
            }
            try await store.setPushToStartToken(
                installationID: other.id, attributesType: "Score", token: Fixtures.apnsToken(), service: .apns, now: now
            )
            #expect(
                try await store.liveActivityTokens(installationID: phone.id) == [
                    start("Delivery", suffix: second, at: at(1)), start("Score", suffix: replaced, at: at(5)),
                ])
            #expect(try await store.removePushToStartToken(installationID: phone.id, attributesType: "Score"))
            #expect(try await store.removePushToStartToken(installationID: phone.id, attributesType: "Score") == false)
            #expect(
                try await store.liveActivityTokens(installationID: phone.id) == [
                    start("Delivery", suffix: second, at: at(1))
                ])
            #expect(try await store.liveActivityTokens(installationID: other.id).count == 1)
            #expect(try await store.liveActivityTokens(installationID: "missing").isEmpty)
        },
        .init(
            "live activities: an activity token makes the app's own activity, is replaced, listed and removed",
            keeping: LiveActivityRecords.self
        ) { store in
            let phone = try await register(ios(), in: store)
            let android = try await register(android(), in: store)
            let (first, second, replaced) = (Fixtures.apnsToken(), Fixtures.apnsToken(), Fixtures.apnsToken())
            try await store.setPushToStartToken(
                installationID: phone.id, attributesType: "Score", token: Fixtures.apnsToken(), service: .apns, now: now
            )
            try await join(phone, "match-b", token: first, type: "Score", at: at(1), in: store)
            try await join(phone, "match-a", token: second, type: "Score", at: at(2), in: store)
            try await join(android, "match-b", token: nil, type: "Score", at: at(3), in: store)
            // The app started it: Herald knows it from its first token, at revision 1.
            #expect(
                try await store.liveActivity(appID: "a", id: "match-b")
                    == LiveActivity(
                        appID: "a", id: "match-b", attributesType: "Score", revision: 1, devices: 2, createdAt: at(1),
                        updatedAt: at(1)))
            try await join(phone, "match-b", token: replaced, type: "Score", at: at(4), in: store)

            let listed = try await store.liveActivityTokens(installationID: phone.id)
            #expect(listed.count == 3)
            #expect(listed.first?.activityID == nil, "push-to-start tokens first")
            #expect(
                Array(listed.dropFirst()) == [
                    LiveActivityTokenInfo(
                        activityID: "match-a", attributesType: "Score", tokenSuffix: String(second.suffix(8)),
                        updatedAt: at(2)),
                    LiveActivityTokenInfo(
                        activityID: "match-b", attributesType: "Score", tokenSuffix: String(replaced.suffix(8)),
                        updatedAt: at(4)),
                ])
            #expect(
                try await store.liveActivityTokens(installationID: android.id) == [
                    LiveActivityTokenInfo(
                        activityID: "match-b", attributesType: "Score", tokenSuffix: nil, updatedAt: at(3))
                ])
            // A token for an activity Herald started leaves the activity as it was.
            #expect(try await store.createLiveActivity(liveActivity("order-1", type: "Delivery")))
            _ = try await next("order-1", at: at(5), in: store)
            try await join(phone, "order-1", token: Fixtures.apnsToken(), type: "Other", at: at(6), in: store)
            let started = try await store.liveActivity(appID: "a", id: "order-1")
            #expect(started?.attributesType == "Delivery")
            #expect(started?.revision == 2)
            #expect(started?.devices == 1)

            #expect(try await store.removeActivityToken(installationID: phone.id, activityID: "match-b"))
            #expect(try await store.removeActivityToken(installationID: phone.id, activityID: "match-b") == false)
            #expect(
                try await store.liveActivityTokens(installationID: phone.id).compactMap(\.activityID) == [
                    "match-a", "order-1",
                ])
            #expect(try await store.liveActivity(appID: "a", id: "match-b")?.devices == 1, "the activity stays")
        },
        .init(
            "live activities: a start makes members of those it goes to, through push-to-start tokens on APNs",
            keeping: LiveActivityRecords.self
        ) { store in
            let startToken = Fixtures.apnsToken()
            let phone = try await register(ios(), in: store)
            let bare = try await register(ios(), in: store)
            let android = try await register(android(), in: store)
            try await store.setPushToStartToken(
                installationID: phone.id, attributesType: "Delivery", token: startToken, service: .apns, now: now)
            try await store.setPushToStartToken(
                installationID: bare.id, attributesType: "Other", token: Fixtures.apnsToken(), service: .apns, now: now)
            #expect(try await store.createLiveActivity(liveActivity("order-1", type: "Delivery")))
            let services: [String: PushService] = [phone.id: .apns, bare.id: .apns, android.id: .fcm]
            let claims = try await store.claimLiveActivitySends(
                appID: "a", activityID: "order-1", attributesType: "Delivery", revision: 1, tokens: .pushToStart,
                installationIDs: [phone.id, bare.id, android.id], services: services, now: now, until: at(30))
            #expect(claims == [phone.id: .send(token: startToken), android.id: .send(token: nil), bare.id: .noToken])
            // The iPhone without a push-to-start token for the type was not sent the start: it takes no part.
            #expect(try await store.liveActivity(appID: "a", id: "order-1")?.devices == 2)
            #expect(
                try await resolveAll(.init(audience: .liveActivity("order-1")), in: store)
                    == [phone.id, android.id].sorted())
            #expect(try await store.liveActivityTokens(installationID: bare.id).compactMap(\.activityID).isEmpty)
            let member = try await store.liveActivityTokens(installationID: phone.id).first { $0.activityID != nil }
            #expect(member?.activityID == "order-1")
            #expect(member?.tokenSuffix == nil, "its activity token comes later, from the app")

            // The start again (a page sent twice) goes again, the same way.
            let again = try await store.claimLiveActivitySends(
                appID: "a", activityID: "order-1", attributesType: "Delivery", revision: 1, tokens: .pushToStart,
                installationIDs: [phone.id, android.id], services: services, now: at(1), until: at(31))
            #expect(again == [phone.id: .send(token: startToken), android.id: .send(token: nil)])
            // An update before the app reported the activity's token has none on APNs; it holds no claim.
            try await store.releaseLiveActivitySends(
                appID: "a", activityID: "order-1", revision: 1, installationIDs: [phone.id, android.id])
            let early = try await store.claimLiveActivitySends(
                appID: "a", activityID: "order-1", attributesType: "Delivery", revision: 2, tokens: .activity,
                installationIDs: [phone.id, bare.id, android.id], services: services, now: at(2), until: at(32))
            #expect(early == [phone.id: .noToken, bare.id: .noToken, android.id: .send(token: nil)])
            let activityToken = Fixtures.apnsToken()
            try await join(phone, "order-1", token: activityToken, type: "Delivery", at: at(3), in: store)
            let reported = try await store.claimLiveActivitySends(
                appID: "a", activityID: "order-1", attributesType: "Delivery", revision: 3, tokens: .activity,
                installationIDs: [phone.id], services: services, now: at(3), until: at(33))
            #expect(reported == [phone.id: .send(token: activityToken)])
            #expect(
                try await store.claimLiveActivitySends(
                    appID: "a", activityID: "order-1", attributesType: "Delivery", revision: 4, tokens: .activity,
                    installationIDs: [], services: services, now: at(4), until: at(34)
                ).isEmpty)
        },
        .init(
            "live activities: a device gets revisions in order: lower superseded, higher waits for a held claim",
            keeping: LiveActivityRecords.self
        ) { store in
            let token = Fixtures.apnsToken()
            let phone = try await register(ios(), in: store)
            let android = try await register(android(), in: store)
            try await join(phone, "game", token: token, in: store)
            try await join(android, "game", token: nil, in: store)
            let services: [String: PushService] = [phone.id: .apns, android.id: .fcm]
            let both = [phone.id, android.id]
            func claim(
                _ revision: Int, _ ids: [String], at seconds: TimeInterval
            ) async throws -> [String: LiveActivityClaim] {
                try await store.claimLiveActivitySends(
                    appID: "a", activityID: "game", attributesType: "Delivery", revision: revision, tokens: .activity,
                    installationIDs: ids, services: services, now: at(seconds), until: at(seconds + 30))
            }
            #expect(try await claim(3, both, at: 0) == [phone.id: .send(token: token), android.id: .send(token: nil)])
            #expect(try await claim(2, both, at: 1) == [phone.id: .superseded, android.id: .superseded])
            #expect(
                try await claim(4, both, at: 2) == [phone.id: .busy(until: at(30)), android.id: .busy(until: at(30))])
            // The same revision may go again (a page sent twice after a crash).
            #expect(try await claim(3, [phone.id], at: 3) == [phone.id: .send(token: token)])
            #expect(try await claim(4, [phone.id], at: 4) == [phone.id: .busy(until: at(33))])

            // Released for another revision: nothing changes. For its own: the next goes at once.
            try await store.releaseLiveActivitySends(appID: "a", activityID: "game", revision: 4, installationIDs: both)
            #expect(try await claim(4, [phone.id], at: 5) == [phone.id: .busy(until: at(33))])
            try await store.releaseLiveActivitySends(appID: "a", activityID: "game", revision: 3, installationIDs: both)
            #expect(try await claim(4, both, at: 6) == [phone.id: .send(token: token), android.id: .send(token: nil)])
            #expect(try await claim(3, both, at: 7) == [phone.id: .superseded, android.id: .superseded])
            // A claim nobody released lapses at its end: the next revision goes then, not before.
            #expect(
                try await claim(5, both, at: 35) == [phone.id: .busy(until: at(36)), android.id: .busy(until: at(36))])
            #expect(try await claim(5, both, at: 36) == [phone.id: .send(token: token), android.id: .send(token: nil)])
            // Another activity's claims are its own.
            try await join(phone, "other", token: token, in: store)
            let other = try await store.claimLiveActivitySends(
                appID: "a", activityID: "other", attributesType: "Delivery", revision: 2, tokens: .activity,
                installationIDs: both, services: services, now: at(37), until: at(67))
            #expect(other == [phone.id: .send(token: token), android.id: .noToken])
        },
        .init(
            "live activities: at once, revisions are each assigned once and one claim of several revisions is granted",
            keeping: LiveActivityRecords.self
        ) { store in
            #expect(try await store.createLiveActivity(liveActivity("game")))
            let phone = try await register(ios(), in: store)
            try await join(phone, "game", token: Fixtures.apnsToken(), in: store)
            let assigned = try await withThrowingTaskGroup(of: LiveActivityRevision?.self) { group in
                for second in 1...20 {
                    group.addTask { try await next("game", at: at(TimeInterval(second)), in: store) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }.compactMap { $0 }.sorted { $0.revision < $1.revision }
            #expect(assigned.map(\.revision) == Array(2...21))
            #expect(assigned.map(\.timestamp) == assigned.map(\.timestamp).sorted())

            let claims = try await withThrowingTaskGroup(of: LiveActivityClaim?.self) { group in
                for revision in 2...11 {
                    group.addTask {
                        try await store.claimLiveActivitySends(
                            appID: "a", activityID: "game", attributesType: "Delivery", revision: revision,
                            tokens: .activity, installationIDs: [phone.id], services: [phone.id: .apns], now: now,
                            until: at(30))[phone.id]
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // The first to decide holds the device: the lower ones are superseded, the higher wait.
            #expect(claims.filter { if case .send = $0 { true } else { false } }.count == 1)
            #expect(claims.allSatisfy { $0 != nil && $0 != .noToken })
        },
        .init(
            "live activities: a refused token is dropped alone; the installation's token and other activities stay",
            keeping: LiveActivityRecords.self
        ) { store in
            let own = Fixtures.apnsToken()
            let phone = try await register(ios(own), in: store)
            let other = try await register(ios(), in: store)
            for type in ["Delivery", "Score"] {
                try await store.setPushToStartToken(
                    installationID: phone.id, attributesType: type, token: Fixtures.apnsToken(), service: .apns,
                    now: now)
            }
            try await store.setPushToStartToken(
                installationID: other.id, attributesType: "Delivery", token: Fixtures.apnsToken(), service: .apns,
                now: now)
            for activity in ["order-1", "order-2"] {
                try await join(phone, activity, token: Fixtures.apnsToken(), in: store)
                try await join(other, activity, token: Fixtures.apnsToken(), in: store)
            }
            try await store.dropLiveActivityTokens([
                LiveActivityTokenDrop(installationID: phone.id, activityID: "order-1", attributesType: "Delivery"),
                LiveActivityTokenDrop(installationID: phone.id, activityID: nil, attributesType: "Delivery"),
            ])
            try await store.dropLiveActivityTokens([])
            let left = try await store.liveActivityTokens(installationID: phone.id)
            #expect(left.map(\.activityID) == [nil, "order-2"])
            #expect(left.map(\.attributesType) == ["Score", "Delivery"])
            #expect(
                try await store.liveActivityTokens(installationID: other.id).map(\.activityID) == [
                    nil, "order-1", "order-2",
                ])
            let installation = try #require(try await readBack(phone.id, in: store))
            #expect(installation.token == .device(own))
            #expect(installation.valid)
            #expect(try await store.liveActivity(appID: "a", id: "order-1")?.devices == 1)
        },
        .init(
            "live activities: deleting an installation deletes its part in activities and its push-to-start tokens",
            keeping: LiveActivityRecords.self
        ) { store in
            let phone = try await register(ios(), in: store)
            let other = try await register(ios(), in: store)
            for installation in [phone, other] {
                try await store.setPushToStartToken(
                    installationID: installation.id, attributesType: "Delivery", token: Fixtures.apnsToken(),
                    service: .apns, now: now)
                try await join(installation, "order-1", token: Fixtures.apnsToken(), in: store)
            }
            #expect(try await store.deleteInstallation(appID: "a", id: phone.id))
            #expect(try await store.liveActivityTokens(installationID: phone.id).isEmpty)
            #expect(try await store.liveActivityTokens(installationID: other.id).count == 2)
            #expect(try await store.liveActivity(appID: "a", id: "order-1")?.devices == 1)
            // The fan-out of the activity's updates no longer reaches it.
            #expect(try await resolveAll(.init(audience: .liveActivity("order-1")), in: store) == [other.id])
        },
        .init(
            "live activities: activities dismissed before the cut-off are forgotten with their members' parts",
            keeping: LiveActivityRecords.self
        ) { store in
            let phones = [
                try await register(ios(), in: store), try await register(ios(), in: store),
                try await register(ios(), in: store),
            ]
            for (id, dismissal) in [("early", 100.0), ("late", 1000), ("empty", 100)] {
                #expect(try await store.createLiveActivity(liveActivity(id)))
                _ = try await store.nextLiveActivityRevision(
                    appID: "a", id: id, end: true, dismissalAt: at(dismissal), wantsHighPriority: false,
                    highPriorityPerHour: 10, now: at(10))
            }
            #expect(try await store.createLiveActivity(liveActivity("running")))
            for phone in phones.prefix(2) { try await join(phone, "early", token: Fixtures.apnsToken(), in: store) }
            try await join(phones[2], "late", token: Fixtures.apnsToken(), in: store)
            try await join(phones[2], "running", token: Fixtures.apnsToken(), in: store)

            #expect(
                try await store.forgetDismissedLiveActivities(before: at(100)) == 0, "dismissed at the cut-off stays")
            #expect(try await store.forgetDismissedLiveActivities(before: at(500)) == 2)
            #expect(try await store.liveActivity(appID: "a", id: "early") == nil)
            #expect(try await store.liveActivity(appID: "a", id: "empty") == nil)
            #expect(try await store.liveActivity(appID: "a", id: "late")?.devices == 1)
            #expect(try await store.liveActivity(appID: "a", id: "running")?.devices == 1)
            #expect(try await store.liveActivityTokens(installationID: phones[0].id).isEmpty)
            #expect(
                try await store.liveActivityTokens(installationID: phones[2].id).compactMap(\.activityID) == [
                    "late", "running",
                ])
            #expect(try await store.forgetDismissedLiveActivities(before: at(500)) == 0)
        },
        .init(
            "updatable notifications: a revision sent to a target makes members of every service, through their own tokens",
            keeping: LiveActivityRecords.self
        ) { store in
            let phone = try await register(ios(), in: store)
            let android = try await register(android(), in: store)
            let browser = try await register(web(), in: store)
            let counter = NotificationRevision.counterID("n1")
            var record = liveActivity(counter, type: "")
            record.dismissalAt = at(100)
            #expect(try await store.createLiveActivity(record))
            let services: [String: PushService] = [phone.id: .apns, android.id: .fcm, browser.id: .webpush]
            func claim(
                _ revision: Int, joining: Bool, _ ids: [String], at seconds: TimeInterval
            ) async throws -> [String: LiveActivityClaim] {
                try await store.claimLiveActivitySends(
                    appID: "a", activityID: counter, attributesType: "", revision: revision,
                    tokens: .installation(joining: joining), installationIDs: ids, services: services,
                    now: at(seconds), until: at(seconds + 30))
            }
            // To the members only, before anyone joined: nobody.
            #expect(try await claim(1, joining: false, [phone.id], at: 0) == [phone.id: .noToken])
            let first = try await claim(1, joining: true, [phone.id, android.id, browser.id], at: 0)
            #expect(
                first == [phone.id: .send(token: nil), android.id: .send(token: nil), browser.id: .send(token: nil)])
            #expect(
                try await resolveAll(.init(audience: .liveActivity(counter)), in: store)
                    == [phone.id, android.id, browser.id].sorted())
            // The counter is no Live Activity of the installation's.
            #expect(try await store.liveActivityTokens(installationID: phone.id).isEmpty)
            // The claim rule is the Live Activities' one.
            #expect(try await claim(2, joining: false, [phone.id], at: 1) == [phone.id: .busy(until: at(30))])
            try await store.releaseLiveActivitySends(
                appID: "a", activityID: counter, revision: 1, installationIDs: [phone.id, android.id, browser.id])
            #expect(
                try await claim(2, joining: false, [phone.id, android.id], at: 2)
                    == [phone.id: .send(token: nil), android.id: .send(token: nil)])
            #expect(try await claim(1, joining: true, [phone.id], at: 3) == [phone.id: .superseded])
            // The counter goes at its dismissal, without an end, and its members with it.
            #expect(try await store.forgetDismissedLiveActivities(before: at(100)) == 0)
            #expect(try await store.forgetDismissedLiveActivities(before: at(101)) == 3)
            #expect(try await store.liveActivity(appID: "a", id: counter) == nil)
        },
        .init(
            "live activities: channels are created, listed oldest first, read and deleted; an id is taken once",
            keeping: LiveActivityRecords.self
        ) { store async throws in
            let b = channel("b", at: now)
            let a = channel("a", policy: .none, environment: .sandbox, at: now)
            let c = channel("c", at: at(-5))
            let elsewhere = channel("b", app: "other", at: now)
            for item in [b, a, c, elsewhere] { #expect(try await store.createLiveActivityChannel(item)) }
            #expect(try await store.createLiveActivityChannel(channel("b", policy: .none, at: at(9))) == false)
            #expect(try await store.liveActivityChannels(appID: "a") == [c, a, b])
            #expect(try await store.liveActivityChannels(appID: "other") == [elsewhere])
            #expect(try await store.liveActivityChannels(appID: "none").isEmpty)
            #expect(try await store.liveActivityChannel(appID: "a", id: "b") == b, "the first is kept")
            #expect(try await store.liveActivityChannel(appID: "a", id: "a") == a)
            #expect(try await store.liveActivityChannel(appID: "a", id: "missing") == nil)
            #expect(try await store.deleteLiveActivityChannel(appID: "a", id: "b"))
            #expect(try await store.deleteLiveActivityChannel(appID: "a", id: "b") == false)
            #expect(try await store.liveActivityChannels(appID: "a") == [c, a])
            #expect(try await store.liveActivityChannel(appID: "other", id: "b") == elsewhere)
        },
        .init(
            "live activities: export carries push-to-start tokens sealed; import restores them",
            keeping: LiveActivityRecords.self
        ) { store in
            let phone = try await register(ios(), in: store)
            let token = Fixtures.apnsToken()
            try await store.setPushToStartToken(
                installationID: phone.id, attributesType: "Score", token: token, service: .apns, now: now)
            let exported = try await store.exportInstallations(after: nil, limit: 10)
            let record = try #require(exported.first { $0.installation.id == phone.id })
            let sealed = try #require(record.pushToStartTokens["Score"])
            #expect(!String(decoding: sealed, as: UTF8.self).contains(token), "sealed, not in clear")
            // Through the file format and back.
            let line = try ExportedInstallation(json: record.json)
            #expect(line.pushToStartTokens == record.pushToStartTokens)
            #expect(try await store.deleteInstallation(appID: "a", id: phone.id))
            #expect(try await store.liveActivityTokens(installationID: phone.id).isEmpty)
            #expect(try await store.importInstallations([line]) == 1)
            let restored = try await store.liveActivityTokens(installationID: phone.id)
            #expect(restored.map(\.attributesType) == ["Score"])
            #expect(restored.first?.tokenSuffix == String(token.suffix(8)))
        },
    ]

    /// An activity Herald starts, at revision 1.
    static func liveActivity(
        _ id: String, app: String = "a", type: String = "Delivery", at time: Date = now
    ) -> LiveActivity {
        LiveActivity(appID: app, id: id, attributesType: type, revision: 1, createdAt: time, updatedAt: time)
    }

    /// The next revision of an activity, an update.
    static func next(
        _ id: String, app: String = "a", at time: Date, high: Bool = false, perHour: Int = 10,
        in store: any LiveActivityStore
    ) async throws -> LiveActivityRevision? {
        try await store.nextLiveActivityRevision(
            appID: app, id: id, end: false, dismissalAt: nil, wantsHighPriority: high, highPriorityPerHour: perHour,
            now: time)
    }

    /// Records an installation's part in an activity, as the app reports it.
    static func join(
        _ installation: Installation, _ activity: String, token: String?, type: String = "Delivery",
        at time: Date = now, in store: any LiveActivityStore
    ) async throws {
        try await store.setActivityToken(
            appID: installation.appID, installationID: installation.id, activityID: activity, attributesType: type,
            token: token, service: installation.service, now: time)
    }

    /// A push-to-start token as listed.
    static func start(_ type: String, suffix token: String, at time: Date = now) -> LiveActivityTokenInfo {
        LiveActivityTokenInfo(
            activityID: nil, attributesType: type, tokenSuffix: String(token.suffix(8)), updatedAt: time)
    }

    /// A broadcast channel with an APNs id of its own.
    static func channel(
        _ id: String, app: String = "a", policy: LiveActivityChannel.StoragePolicy = .mostRecent,
        environment: PushEnvironment = .production, at time: Date
    ) -> LiveActivityChannel {
        LiveActivityChannel(
            appID: app, id: id, apnsChannelID: Data("\(app)/\(id)".utf8).base64EncodedString(), storagePolicy: policy,
            environment: environment, createdAt: time)
    }
}
