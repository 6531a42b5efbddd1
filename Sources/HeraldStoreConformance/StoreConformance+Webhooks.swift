import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Webhook endpoints and their outbox (`WebhookStore`): the endpoints, the events a page commit
/// writes in its transaction, and the claims, leases and attempts of the nodes delivering them.
/// That secrets are sealed at rest is not checked here: the suite reads a store only through its
/// protocols, not its raw columns.
extension StoreConformance {
    /// The store as the webhook cases use it.
    typealias WebhookRecords = any HeraldStore & WebhookStore

    static let webhooks: [StoreConformanceCase] = [
        .init(
            "webhooks: endpoints are created, listed by id, read, replaced and deleted; an app's id is taken once",
            keeping: WebhookRecords.self
        ) { store in
            let rotated = try WebhookSecret(WebhookSecret.generate().value, expiresAt: at(3600))
            var first = webhook("wh_b", events: [.notificationCompleted, .deliveryFailed])
            first.description = "Backend"
            first.secrets = [WebhookSecret.generate(), rotated]
            let second = webhook("wh_a", events: [.installationInvalidated])
            var configured = webhook("wh_b", app: "other", events: WebhookEventType.subscribable)
            configured.configured = true
            for endpoint in [first, second, configured] { try await store.createWebhookEndpoint(endpoint) }

            let clash = webhook("wh_b", events: [.notificationOpened])
            let error = await #expect(throws: HeraldError.self) { try await store.createWebhookEndpoint(clash) }
            #expect(error?.code == "webhook_exists")
            #expect(try await store.webhookEndpoint(appID: "a", id: "wh_b") == first, "the first is kept")

            #expect(try await store.webhookEndpoints(appID: "a") == [second, first])
            #expect(try await store.webhookEndpoints(appID: "other") == [configured])
            #expect(try await store.webhookEndpoints(appID: "none").isEmpty)
            #expect(try await store.webhookEndpoint(appID: "a", id: "wh_a") == second)
            #expect(try await store.webhookEndpoint(appID: "a", id: "missing") == nil)
            // Secrets come back as they were given, the expiring one with its expiry.
            #expect(try await store.webhookEndpoint(appID: "a", id: "wh_b")?.secrets == [first.secrets[0], rotated])

            var changed = first
            changed.url = "https://hooks.example.com/moved"
            changed.events = [.notificationOpened]
            changed.description = nil
            changed.secrets = [WebhookSecret.generate()]
            changed.disabledReason = .manual
            changed.failingSince = at(10)
            changed.lastSuccessAt = at(5)
            changed.updatedAt = at(20)
            #expect(try await store.updateWebhookEndpoint(changed))
            #expect(try await store.webhookEndpoint(appID: "a", id: "wh_b") == changed)
            #expect(try await store.webhookEndpoint(appID: "other", id: "wh_b") == configured)
            #expect(try await store.updateWebhookEndpoint(webhook("missing", events: [.deliveryFailed])) == false)

            #expect(try await store.deleteWebhookEndpoint(appID: "a", id: "wh_b"))
            #expect(try await store.deleteWebhookEndpoint(appID: "a", id: "wh_b") == false)
            #expect(try await store.webhookEndpoints(appID: "a") == [second])
            #expect(try await store.webhookEndpoints(appID: "other") == [configured])
        },
        .init(
            "webhooks: a page commit writes its failures, invalidations and final status to each endpoint subscribed",
            keeping: WebhookRecords.self
        ) { store in
            let delivered = try await register(ios(user: "u1"), in: store)
            let failing = try await register(android(user: "u2", device: "d2"), in: store)
            let gone = try await register(ios(user: "u3", device: "d3"), in: store)
            let told: [WebhookEventType] = [.deliveryFailed, .installationInvalidated, .notificationCompleted]
            for endpoint in [
                webhook("w1", events: told), webhook("w2", events: WebhookEventType.subscribable),
                webhook("opens", events: [.notificationOpened]),
                webhook("off", events: WebhookEventType.subscribable, disabled: .manual),
                webhook("w1", app: "b", events: WebhookEventType.subscribable),
            ] {
                try await store.createWebhookEndpoint(endpoint)
            }
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.ledger = [
                DeliveryRecord(
                    notificationID: item.id, installationID: delivered.id, tokenSuffix: delivered.token.suffix,
                    service: .apns, outcome: .delivered, providerID: "apns-1", attempts: 1, at: at(1)),
                DeliveryRecord(
                    notificationID: item.id, installationID: failing.id, tokenSuffix: failing.token.suffix,
                    service: .fcm, outcome: .failed, reason: "INTERNAL", attempts: 3, at: at(1)),
            ]
            page.counts = NotificationCounts(targeted: 3, sent: 1, failed: 1, invalid: 1)
            page.installationEvents = [
                (delivered.id, .delivered(at: at(1))),
                (failing.id, .failed(reason: "INTERNAL", at: at(1), maxFailures: 5)),
                (gone.id, .invalidated(reason: "Unregistered", since: nil, at: at(1))),
            ]
            page.cursor = "done"
            page.status = .done
            page.startedAt = at(1)
            page.completedAt = at(2)
            page.finishesJob = true
            #expect(try await store.commit(page))
            let stored = try #require(try await store.notification(id: item.id))

            let first = try await store.webhookDeliveries(appID: "a", endpointID: "w1", limit: 10)
            let second = try await store.webhookDeliveries(appID: "a", endpointID: "w2", limit: 10)
            // Newest first: written in the order failures, invalidations, the final status.
            try #require(first.map(\.eventType) == Array(told.reversed()))
            #expect(second.map(\.eventType) == Array(told.reversed()))
            // One event each, one row for each endpoint.
            #expect(first.map(\.eventID) == second.map(\.eventID))
            #expect(first.map(\.body) == second.map(\.body))
            #expect(Set(first.map(\.eventID)).count == 3)
            for row in first + second {
                #expect(row.state == .pending)
                #expect(row.attempts == 0)
                #expect(row.nextAttemptAt == row.createdAt, "due when it happened")
                #expect(row.appID == "a")
            }
            #expect(first.map(\.createdAt) == [at(2), at(1), at(1)])
            for endpoint in ["opens", "off"] {
                #expect(try await store.webhookDeliveries(appID: "a", endpointID: endpoint, limit: 10).isEmpty)
            }
            #expect(try await store.webhookDeliveries(appID: "b", endpointID: "w1", limit: 10).isEmpty)
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "w1") == 3)
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "opens") == 0)

            let bodies = try first.map(webhookBody)
            for (row, body) in zip(first, bodies) {
                #expect(body["id"] == .string(row.eventID))
                #expect(body["type"] == .string(row.eventType.rawValue))
                #expect(body["version"] == .number(JSONNumber(WebhookEvent.version)))
            }
            let completed = try #require(bodies[0]["data"]?.objectValue)
            #expect(completed["counts"] == stored.counts.json, "the counts the notification's read shows")
            #expect(completed["status"] == .string("done"))
            #expect(completed["notification_id"] == .string(item.id))
            #expect(completed["completed_at"] == .string(WebhookEvent.timestamp(at(2))))

            let invalidated = try #require(bodies[1]["data"]?.objectValue)
            #expect(invalidated["installation_id"] == .string(gone.id))
            #expect(invalidated["user_id"] == .string("u3"))
            #expect(invalidated["device_id"] == .string("d3"))
            #expect(invalidated["reason"] == .string("Unregistered"))
            #expect(invalidated["notification_id"] == .string(item.id))
            #expect(invalidated["token_sha256"] == .string(tokenSHA256(gone)))

            let failed = try #require(bodies[2]["data"]?.objectValue)
            #expect(failed["installation_id"] == .string(failing.id))
            #expect(failed["user_id"] == .string("u2"))
            #expect(failed["device_id"] == .string("d2"))
            #expect(failed["platform"] == .string("android"))
            #expect(failed["service"] == .string("fcm"))
            #expect(failed["token_sha256"] == .string(tokenSHA256(failing)))
            #expect(failed["outcome"] == .string("failed"))
            #expect(failed["reason"] == .string("INTERNAL"))
            #expect(failed["attempts"] == .number(JSONNumber(3)))
            #expect(failed["will_retry"] == .bool(false))
            #expect(failed["next_attempt_at"] == .null)
            #expect(failed["notification_id"] == .string(item.id))
        },
        .init("webhooks: a page commit of an app without an endpoint writes no event", keeping: WebhookRecords.self) {
            store in
            let failing = try await register(android(), in: store, app: "c")
            let gone = try await register(ios(), in: store, app: "c")
            let item = notification(app: "c")
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.ledger = [
                DeliveryRecord(
                    notificationID: item.id, installationID: failing.id, tokenSuffix: failing.token.suffix,
                    service: .fcm, outcome: .failed, reason: "INTERNAL", attempts: 1, at: at(1))
            ]
            page.counts = NotificationCounts(targeted: 2, failed: 1, invalid: 1)
            page.installationEvents = [
                (failing.id, .failed(reason: "INTERNAL", at: at(1), maxFailures: 5)),
                (gone.id, .invalidated(reason: "Unregistered", since: nil, at: at(1))),
            ]
            page.cursor = "done"
            page.status = .done
            page.completedAt = at(2)
            page.finishesJob = true
            #expect(try await store.commit(page))
            #expect(try await store.notification(id: item.id)?.status == .done)
            #expect(try await readBack(gone.id, app: "c", in: store)?.valid == false)
            // A second notification whose last page has only a failure and its final status.
            let other = notification(app: "c")
            let otherJob = try await insertAndClaim(other, in: store)
            var last = PageCommit(jobID: otherJob.id, owner: "w1", notificationID: other.id)
            last.ledger = [
                DeliveryRecord(
                    notificationID: other.id, installationID: nil, tokenSuffix: "0000beef", service: .apns,
                    outcome: .failed, reason: "BadDeviceToken", attempts: 1, at: at(3))
            ]
            last.counts = NotificationCounts(failed: 1)
            last.cursor = "done"
            last.status = .done
            last.completedAt = at(3)
            last.finishesJob = true
            #expect(try await store.commit(last))
            #expect(try await store.notification(id: other.id)?.status == .done)

            let endpoint = webhook("late", app: "c", events: WebhookEventType.subscribable)
            try await store.createWebhookEndpoint(endpoint)
            #expect(try await store.webhookDeliveries(appID: "c", endpointID: "late", limit: 10).isEmpty)
            #expect(
                try await store.claimWebhookDeliveries(owner: "n", now: at(day), lockedUntil: at(day + 60), limit: 100)
                    .isEmpty)
        },
        .init(
            "webhooks: only an invalidation that changed the installation is told, with what it was before it went",
            keeping: WebhookRecords.self
        ) { store in
            let renewed = try await register(ios(), in: store, now: at(100))
            var deleting = ios(user: "argus")
            deleting.deleteWhenInvalid = true
            let argus = try await register(deleting, in: store)
            let native = try await register(ios(), in: store)
            let counted = try await register(ios(), in: store)
            try await store.createWebhookEndpoint(webhook("w", events: [.installationInvalidated]))
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.installationEvents = [
                // Stale: the app registered the token again after the provider saw it go.
                (renewed.id, .invalidated(reason: "Unregistered", since: at(50), at: at(200))),
                (argus.id, .invalidated(reason: "Unregistered", since: nil, at: at(200))),
                (native.id, .rejected(reason: "BadDeviceToken", at: at(200), maxFailures: 5, rule: .invalidate)),
                (counted.id, .rejected(reason: "BadDeviceToken", at: at(200), maxFailures: 5, rule: .count)),
            ]
            #expect(try await store.commit(page))
            #expect(try await readBack(renewed.id, in: store)?.valid == true)
            #expect(try await readBack(argus.id, in: store) == nil)
            #expect(try await readBack(native.id, in: store)?.valid == false)

            let rows = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            #expect(rows.allSatisfy { $0.eventType == .installationInvalidated })
            let told = try rows.map { try #require(try webhookBody($0)["data"]?.objectValue) }
            #expect(Set(told.compactMap { $0["installation_id"] }) == [.string(argus.id), .string(native.id)])
            try #require(told.count == 2)
            // The deleted installation's facts were read before it went.
            let deleted = try #require(told.first { $0["installation_id"] == .string(argus.id) })
            #expect(deleted["user_id"] == .string("argus"))
            #expect(deleted["token_sha256"] == .string(tokenSHA256(argus)))
            #expect(told.first { $0["installation_id"] == .string(native.id) }?["reason"] == .string("BadDeviceToken"))
        },
        .init(
            "webhooks: a page of failures alone is told, a retry with its next attempt; deliveries alone tell nothing",
            keeping: WebhookRecords.self
        ) { store in
            let retried = try await register(ios(user: "u1"), in: store)
            let delivered = try await register(ios(), in: store)
            try await store.createWebhookEndpoint(webhook("w", events: WebhookEventType.subscribable))
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var deliveries = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            deliveries.ledger = [
                DeliveryRecord(
                    notificationID: item.id, installationID: delivered.id, tokenSuffix: delivered.token.suffix,
                    service: .apns, outcome: .delivered, attempts: 1, at: at(1))
            ]
            deliveries.counts = NotificationCounts(targeted: 3, sent: 1)
            deliveries.installationEvents = [(delivered.id, .delivered(at: at(1)))]
            deliveries.status = .sending
            #expect(try await store.commit(deliveries))
            #expect(try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10).isEmpty)

            var retry = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            retry.ledger = [
                DeliveryRecord(
                    notificationID: item.id, installationID: retried.id, tokenSuffix: retried.token.suffix,
                    service: .apns, outcome: .retrying, reason: "ServiceUnavailable", attempts: 1, at: at(2))
            ]
            retry.pending = [
                PendingDelivery(
                    notificationID: item.id, recipient: retried.id, runAt: at(60), attempts: 1, reason: .retry)
            ]
            #expect(try await store.commit(retry))

            // The last page: a raw token's failure and the final status, nothing else.
            var last = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            last.ledger = [
                DeliveryRecord(
                    notificationID: item.id, installationID: nil, tokenSuffix: "0000beef", service: .apns,
                    outcome: .failed, reason: "BadDeviceToken", attempts: 1, at: at(3))
            ]
            last.counts = NotificationCounts(failed: 1)
            last.cursor = "done"
            last.status = .done
            last.completedAt = at(4)
            last.finishesJob = true
            #expect(try await store.commit(last))
            let stored = try #require(try await store.notification(id: item.id))

            let rows = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            try #require(rows.map(\.eventType) == [.notificationCompleted, .deliveryFailed, .deliveryFailed])
            let bodies = try rows.map { try #require(try webhookBody($0)["data"]?.objectValue) }
            #expect(bodies[0]["counts"] == stored.counts.json)
            #expect(bodies[0]["status"] == .string("done"))
            #expect(bodies[1]["installation_id"] == .null)
            #expect(bodies[1]["service"] == .string("apns"))
            #expect(bodies[1]["token_sha256"] == nil)
            #expect(bodies[1]["reason"] == .string("BadDeviceToken"))
            #expect(bodies[2]["installation_id"] == .string(retried.id))
            #expect(bodies[2]["outcome"] == .string("retrying"))
            #expect(bodies[2]["will_retry"] == .bool(true))
            #expect(bodies[2]["next_attempt_at"] == .string(WebhookEvent.timestamp(at(60))))
        },
        .init(
            "webhooks: a claim leases due rows oldest first; an attempt records the row and its endpoint's health",
            keeping: WebhookRecords.self
        ) { store in
            let endpoint = webhook("w", events: [.notificationOpened])
            try await store.createWebhookEndpoint(endpoint)
            try await store.createWebhookEndpoint(webhook("quiet", events: [.deliveryFailed]))
            let events = [30, 10, 20].map { opened(at: at(Double($0))) }
            #expect(try await store.enqueueWebhookEvents(events, endpointID: nil) == 3)
            let (e30, e10, e20) = (events[0], events[1], events[2])
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "w") == 3)

            #expect(try await claim(store, "n1", now: at(5), until: at(65)).isEmpty, "none due yet")
            let first = try await claim(store, "n1", now: at(30), until: at(90), limit: 2)
            #expect(first.map(\.eventID) == [e10.id, e20.id])
            #expect(first.map(\.body) == [e10.body, e20.body])
            for row in first {
                #expect(row.url == endpoint.url)
                #expect(row.secrets == endpoint.secrets)
                #expect(row.endpointID == "w")
                #expect(row.eventType == .notificationOpened)
                #expect(row.state == .pending)
                #expect(row.attempts == 0)
            }
            let second = try await claim(store, "n2", now: at(30), until: at(90))
            #expect(second.map(\.eventID) == [e30.id], "the leased rows are not claimed again")
            #expect(try await claim(store, "n3", now: at(89), until: at(150)).isEmpty)

            // The wrong owner's attempt is refused, and writes nothing.
            #expect(
                try await store.recordWebhookAttempt(
                    attempt(first[0], "n2", at: at(40), .delivered, status: 200)) == false)
            // A failure: due again at its time; the endpoint is failing since.
            #expect(
                try await store.recordWebhookAttempt(
                    attempt(first[0], "n1", at: at(40), .failed(nextAttemptAt: at(100)), status: 500)))
            var health = try #require(try await store.webhookEndpoint(appID: "a", id: "w"))
            #expect(health.failingSince == at(40))
            #expect(health.disabledReason == nil)
            #expect(health.lastSuccessAt == nil)
            // A success: the endpoint is healthy again.
            #expect(try await store.recordWebhookAttempt(attempt(first[1], "n1", at: at(41), .delivered, status: 204)))
            health = try #require(try await store.webhookEndpoint(appID: "a", id: "w"))
            #expect(health.lastSuccessAt == at(41))
            #expect(health.failingSince == nil)
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "w") == 2)

            // A lease that ran out is another node's to take; the first owner's attempt is then refused.
            let retaken = try await claim(store, "n4", now: at(95), until: at(150))
            #expect(retaken.map(\.eventID) == [e30.id], "the failed row is not due before its time")
            #expect(try await store.recordWebhookAttempt(attempt(second[0], "n2", at: at(96), .delivered)) == false)
            let again = try await claim(store, "n5", now: at(100), until: at(160))
            #expect(again.map(\.eventID) == [e10.id])
            #expect(again.first?.attempts == 1)
            #expect(again.first?.lastStatus == 500)
            #expect(again.first?.lastError == "HTTP 500")
            #expect(again.first?.lastAttemptAt == at(40))
            #expect(again.first?.nextAttemptAt == at(100))

            // Failed for good (the schedule used up), and the other delivered.
            #expect(
                try await store.recordWebhookAttempt(
                    attempt(again[0], "n5", at: at(101), .failed(nextAttemptAt: nil), status: 500)))
            #expect(try await store.recordWebhookAttempt(attempt(retaken[0], "n4", at: at(102), .delivered)))
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "w") == 0)
            #expect(try await claim(store, "n6", now: at(day), until: at(day + 60)).isEmpty)
            health = try #require(try await store.webhookEndpoint(appID: "a", id: "w"))
            #expect(health.lastSuccessAt == at(102))
            #expect(health.failingSince == nil)

            let listed = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            // Newest first: in the order they were written, the other way round.
            #expect(listed.map(\.eventID) == [e20.id, e10.id, e30.id])
            #expect(listed.map(\.state) == [.delivered, .failed, .delivered])
            #expect(listed.map(\.attempts) == [1, 2, 1])
            #expect(listed.allSatisfy { $0.url.isEmpty && $0.secrets.isEmpty }, "a listing carries no secret")
            #expect(try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 1).map(\.eventID) == [e20.id])
            #expect(try await store.webhookDeliveries(appID: "a", endpointID: "quiet", limit: 10).isEmpty)
        },
        .init(
            "webhooks: a 410 or five days of failures disable the endpoint, and its rows are no longer claimed",
            keeping: WebhookRecords.self
        ) { store in
            try await store.createWebhookEndpoint(webhook("g", events: [.notificationOpened]))
            try await store.createWebhookEndpoint(webhook("f", events: [.deliveryFailed]))
            #expect(
                try await store.enqueueWebhookEvents([opened(at: at(10)), opened(at: at(11))], endpointID: "g") == 2)
            #expect(
                try await store.enqueueWebhookEvents(
                    [opened(at: at(12)), opened(at: at(13)), opened(at: at(14))], endpointID: "f") == 3)
            let claimed = try await claim(store, "n", now: at(20), until: at(80))
            #expect(claimed.map(\.endpointID) == ["g", "g", "f", "f", "f"])

            #expect(try await store.recordWebhookAttempt(attempt(claimed[0], "n", at: at(20), .gone, status: 410)))
            let gone = try #require(try await store.webhookEndpoint(appID: "a", id: "g"))
            #expect(gone.disabledReason == .gone)
            #expect(!gone.enabled)
            #expect(
                try await store.recordWebhookAttempt(
                    attempt(claimed[1], "n", at: at(21), .failed(nextAttemptAt: at(30)), status: 500)))
            #expect(try await store.webhookEndpoint(appID: "a", id: "g")?.disabledReason == .gone)
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "g") == 1)

            let limit = WebhookEndpoint.failingLimit.timeInterval
            for (row, time) in zip(claimed[2...], [20, 20 + limit - 1, 20 + limit]) {
                #expect(
                    try await store.recordWebhookAttempt(
                        attempt(row, "n", at: at(time), .failed(nextAttemptAt: at(time + 60)), status: 503)))
                let failing = try #require(try await store.webhookEndpoint(appID: "a", id: "f"))
                #expect(failing.failingSince == at(20))
                let expected: WebhookEndpoint.DisabledReason? = time < 20 + limit ? nil : .failing
                #expect(failing.disabledReason == expected)
            }
            #expect(try await claim(store, "n2", now: at(2 * limit), until: at(2 * limit + 60)).isEmpty)
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "f") == 3)

            // Enabled again, its rows are claimed again.
            var enabled = gone
            enabled.disabledReason = nil
            #expect(try await store.updateWebhookEndpoint(enabled))
            let resumed = try await claim(store, "n3", now: at(2 * limit), until: at(2 * limit + 60))
            #expect(resumed.map(\.id) == [claimed[1].id])
        },
        .init(
            "webhooks: events enqueued go to each enabled endpoint subscribed to their type, or to the one asked",
            keeping: WebhookRecords.self
        ) { store in
            for endpoint in [
                webhook("all", events: WebhookEventType.subscribable),
                webhook("opens", events: [.notificationOpened]), webhook("fails", events: [.deliveryFailed]),
                webhook("off", events: WebhookEventType.subscribable, disabled: .manual),
            ] {
                try await store.createWebhookEndpoint(endpoint)
            }
            let removed = WebhookEvent(
                appID: "a", type: .installationRemoved, occurredAt: at(2), data: ["installation_id": .string("i1")])
            #expect(try await store.enqueueWebhookEvents([opened(at: at(1)), removed], endpointID: nil) == 3)
            #expect(try await store.enqueueWebhookEvents([opened(app: "b", at: at(1))], endpointID: nil) == 0)
            let test = WebhookEvent(appID: "a", type: .webhookTest, occurredAt: at(3), data: [:])
            #expect(try await store.enqueueWebhookEvents([test], endpointID: nil) == 0, "subscribed by none")
            #expect(try await store.enqueueWebhookEvents([test], endpointID: "fails") == 1)
            #expect(try await store.enqueueWebhookEvents([test], endpointID: "missing") == 0)
            #expect(try await store.enqueueWebhookEvents([], endpointID: nil) == 0)

            func types(_ endpoint: String) async throws -> [WebhookEventType] {
                try await store.webhookDeliveries(appID: "a", endpointID: endpoint, limit: 10).map(\.eventType)
            }
            #expect(try await types("all") == [.installationRemoved, .notificationOpened])
            #expect(try await types("opens") == [.notificationOpened])
            #expect(try await types("fails") == [.webhookTest])
            #expect(try await types("off").isEmpty)
            let row = try #require(try await store.webhookDeliveries(appID: "a", endpointID: "fails", limit: 1).first)
            #expect(row.eventID == test.id)
            #expect(row.body == test.body)
        },
        .init("webhooks: deleting an endpoint deletes its rows", keeping: WebhookRecords.self) { store in
            try await store.createWebhookEndpoint(webhook("gone", events: [.notificationOpened]))
            try await store.createWebhookEndpoint(webhook("kept", events: [.notificationOpened]))
            #expect(try await store.enqueueWebhookEvents([opened(at: at(1)), opened(at: at(2))], endpointID: nil) == 4)
            let leased = try await claim(store, "n", now: at(5), until: at(60), limit: 1)
            #expect(leased.map(\.endpointID) == ["gone"])
            #expect(try await store.deleteWebhookEndpoint(appID: "a", id: "gone"))
            #expect(try await store.webhookDeliveries(appID: "a", endpointID: "gone", limit: 10).isEmpty)
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "gone") == 0)
            #expect(try await store.recordWebhookAttempt(attempt(leased[0], "n", at: at(6), .delivered)) == false)
            let rest = try await claim(store, "n", now: at(60), until: at(120))
            #expect(rest.map(\.endpointID) == ["kept", "kept"])
            // A new endpoint with the id starts with an empty outbox.
            try await store.createWebhookEndpoint(webhook("gone", events: [.notificationOpened]))
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "gone") == 0)
        },
        .init("webhooks: concurrent claims never lease a row twice", keeping: WebhookRecords.self) { store in
            try await store.createWebhookEndpoint(webhook("w", events: [.notificationOpened]))
            let events = (0..<240).map { opened(at: at(Double($0 % 40))) }
            #expect(try await store.enqueueWebhookEvents(events, endpointID: nil) == events.count)
            let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for node in 0..<8 {
                    group.addTask {
                        var ids: [Int64] = []
                        while true {
                            let rows = try await store.claimWebhookDeliveries(
                                owner: "n\(node)", now: at(100), lockedUntil: at(400), limit: 7)
                            if rows.isEmpty { return ids }
                            ids += rows.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [Int64]()) { $0 += $1 }
            }
            #expect(claimed.count == events.count)
            #expect(Set(claimed).count == events.count, "each row leased to one node")
        },
        .init(
            "webhooks: a cancellation writes one notification.canceled with the notification's counts",
            keeping: WebhookRecords.self
        ) { store in
            for endpoint in [
                webhook("w", events: [.notificationCanceled]),
                webhook("other", events: [.notificationCompleted, .notificationOpened]),
                webhook("off", events: WebhookEventType.subscribable, disabled: .manual),
            ] {
                try await store.createWebhookEndpoint(endpoint)
            }
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
            page.counts = NotificationCounts(targeted: 4, sent: 2, failed: 1)
            page.status = .sending
            #expect(try await store.commit(page))

            let canceled = try #require(try await store.cancelNotification(appID: "a", id: item.id, now: at(20)))
            #expect(canceled.counts == NotificationCounts(targeted: 4, sent: 2, failed: 1))
            let rows = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            try #require(rows.map(\.eventType) == [.notificationCanceled])
            #expect(rows[0].createdAt == at(20))
            #expect(rows[0].state == .pending)
            let data = try #require(try webhookBody(rows[0])["data"]?.objectValue)
            #expect(data["status"] == .string("canceled"))
            #expect(data["counts"] == canceled.counts.json)
            #expect(data["notification_id"] == .string(item.id))
            #expect(data["app_id"] == .string("a"))
            #expect(data["created_at"] == .string(WebhookEvent.timestamp(now)))
            #expect(data["completed_at"] == .string(WebhookEvent.timestamp(at(20))))

            // A notification final already is not canceled: nothing more is told.
            #expect(try await store.cancelNotification(appID: "a", id: item.id, now: at(30))?.completedAt == at(20))
            let finished = notification(status: .done)
            _ = try await store.insertNotification(finished, runAt: now, idempotencyWindow: .seconds(60))
            #expect(try await store.cancelNotification(appID: "a", id: finished.id, now: at(30))?.status == .done)
            #expect(try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10).count == 1)
            for endpoint in ["other", "off"] {
                #expect(try await store.webhookDeliveries(appID: "a", endpointID: endpoint, limit: 10).isEmpty)
            }
            // An app without an endpoint: the cancellation alone.
            let quiet = notification(app: "c")
            _ = try await store.insertNotification(quiet, runAt: now, idempotencyWindow: .seconds(60))
            #expect(try await store.cancelNotification(appID: "c", id: quiet.id, now: at(40))?.status == .canceled)
            let due = try await claim(store, "n", now: at(day), until: at(day + 60))
            #expect(due.map(\.eventType) == [.notificationCanceled])
        },
        .init(
            "webhooks: a first open writes one notification.opened with the installation's facts; a repeat none",
            keeping: WebhookRecords.self
        ) { store in
            let device = try await register(ios(user: "u1", device: "d1"), in: store)
            let other = try await register(android(), in: store)
            try await store.createWebhookEndpoint(webhook("w", events: [.notificationOpened]))
            try await store.createWebhookEndpoint(webhook("other", events: [.notificationCanceled]))
            let sent = notification()
            _ = try await store.insertNotification(sent, runAt: now, idempotencyWindow: .seconds(60))
            func open(_ id: String, user: String? = nil, at time: Date) async throws -> OpenRecording {
                try await store.recordOpen(
                    appID: "a", notificationID: sent.id, installationID: id, userID: user, openedAt: time)
            }
            #expect(try await open(device.id, user: "u1", at: at(5)) == .recorded(openedAt: at(5)))
            #expect(try await open(device.id, at: at(9)) == .repeated(openedAt: at(5)))
            #expect(try await open(device.id, user: "u2", at: at(9)) == .unknownInstallation)
            #expect(try await open("missing", at: at(9)) == .unknownInstallation)

            let rows = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            try #require(rows.map(\.eventType) == [.notificationOpened])
            #expect(rows[0].createdAt == at(5))
            let data = try #require(try webhookBody(rows[0])["data"]?.objectValue)
            #expect(data["installation_id"] == .string(device.id))
            #expect(data["user_id"] == .string("u1"))
            #expect(data["device_id"] == .string("d1"))
            #expect(data["platform"] == .string("ios"))
            #expect(data["service"] == .string("apns"))
            #expect(data["token_sha256"] == .string(tokenSHA256(device)))
            #expect(data["notification_id"] == .string(sent.id))
            #expect(data["app_id"] == .string("a"))
            #expect(data["opened_at"] == .string(WebhookEvent.timestamp(at(5))))
            #expect(try await store.webhookDeliveries(appID: "a", endpointID: "other", limit: 10).isEmpty)

            // Another installation's first open is told too, with its own facts (no user: null).
            #expect(try await open(other.id, at: at(7)) == .recorded(openedAt: at(7)))
            let second = try #require(
                try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 1).first.map(webhookBody))
            #expect(second["data"]?.objectValue?["installation_id"] == .string(other.id))
            #expect(second["data"]?.objectValue?["user_id"] == .null)
            #expect(second["data"]?.objectValue?["token_sha256"] == .string(tokenSHA256(other)))

            // An app without an endpoint: the open alone.
            let quiet = try await register(ios(), in: store, app: "c")
            let quietSent = notification(app: "c")
            _ = try await store.insertNotification(quietSent, runAt: now, idempotencyWindow: .seconds(60))
            #expect(
                try await store.recordOpen(
                    appID: "c", notificationID: quietSent.id, installationID: quiet.id, userID: nil, openedAt: at(8))
                    == .recorded(openedAt: at(8)))
            #expect(try await store.notification(appID: "c", id: quietSent.id)?.counts.opened == 1)
            let due = try await claim(store, "n", now: at(day), until: at(day + 60))
            #expect(due.map(\.eventType) == [.notificationOpened, .notificationOpened])
        },
        .init(
            "webhooks: clean-up writes one installation.removed per installation it deletes, with its rule and facts",
            keeping: WebhookRecords.self
        ) { store in
            var invalid = try await register(ios(user: "u1", device: "d1"), in: store, now: at(-45 * day))
            invalid.snsEndpointARN = "arn:aws:sns:eu-west-1:1:endpoint/APNS/app/gone"
            invalid = try #require(try await store.update(invalid, now: at(-45 * day)))
            let failing = try await register(android(user: "u2"), in: store, now: at(-10 * day))
            let unseen = try await register(ios(), in: store, now: at(-100 * day))
            let kept = try await register(ios(), in: store, now: at(-1 * day))
            let unsubscribed = try await register(ios(), in: store, app: "b", now: at(-45 * day))
            let silent = try await register(ios(), in: store, app: "c", now: at(-45 * day))
            var events: [(id: String, event: InstallationEvent)] = [invalid.id, unsubscribed.id, silent.id].map {
                ($0, .invalidated(reason: "Unregistered", since: nil, at: at(-40 * day)))
            }
            for index in 0..<5 {
                events.append(
                    (failing.id, .failed(reason: "Timeout", at: at(-8 * day + Double(index)), maxFailures: 99)))
            }
            try await applyEvents(events, in: store)
            // The endpoints come after the installations' events: only the clean-up is told.
            for endpoint in [
                webhook("w", events: [.installationRemoved]),
                webhook("other", events: [.installationInvalidated, .deliveryFailed]),
                webhook("off", events: WebhookEventType.subscribable, disabled: .manual),
                webhook("w", app: "b", events: [.deliveryFailed, .installationInvalidated]),
            ] {
                try await store.createWebhookEndpoint(endpoint)
            }

            let report = try await store.cleanup(CleanupPolicy(unseenAfter: .seconds(90 * day)), now: now)
            #expect(report.invalidInstallations == 3)
            #expect(report.failingInstallations == 1)
            #expect(report.unseenInstallations == 1)
            #expect(try await readAll([invalid.id, failing.id, unseen.id, kept.id], in: store) == [kept.id])

            // Newest first: written rule after rule.
            let rows = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            try #require(rows.count == 3)
            #expect(rows.allSatisfy { $0.eventType == .installationRemoved && $0.createdAt == now })
            let told = try rows.map { try #require(try webhookBody($0)["data"]?.objectValue) }
            #expect(told.map { $0["installation_id"] } == [unseen.id, failing.id, invalid.id].map(JSONValue.string))
            #expect(told.map { $0["reason"] } == ["unseen", "failing", "invalid"].map(JSONValue.string))
            #expect(told.allSatisfy { $0["app_id"] == .string("a") })
            // What each was before it went.
            #expect(told[2]["user_id"] == .string("u1"))
            #expect(told[2]["device_id"] == .string("d1"))
            #expect(told[2]["token_sha256"] == .string(tokenSHA256(invalid)))
            #expect(told[2]["sns_endpoint_arn"] == .string("arn:aws:sns:eu-west-1:1:endpoint/APNS/app/gone"))
            #expect(told[1]["user_id"] == .string("u2"))
            #expect(told[1]["platform"] == .string("android"))
            #expect(told[1]["service"] == .string("fcm"))
            #expect(told[1]["token_sha256"] == .string(tokenSHA256(failing)))
            #expect(told[0]["user_id"] == .null)
            #expect(told[0]["token_sha256"] == .string(tokenSHA256(unseen)))
            for (app, endpoint) in [("a", "other"), ("a", "off"), ("b", "w")] {
                #expect(try await store.webhookDeliveries(appID: app, endpointID: endpoint, limit: 10).isEmpty)
            }
            let due = try await claim(store, "n", now: at(day), until: at(day + 60))
            #expect(due.count == 3, "nothing for the apps without a subscribed endpoint")
            // A clean-up that deletes nothing tells nothing.
            _ = try await store.cleanup(CleanupPolicy(unseenAfter: .seconds(90 * day)), now: at(1))
            #expect(try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10).count == 3)
        },
        .init(
            "webhooks: clean-up deletes delivered and failed rows older than the retention; pending and younger stay",
            keeping: WebhookRecords.self
        ) { store in
            try await store.createWebhookEndpoint(webhook("w", events: [.notificationOpened]))
            try await store.createWebhookEndpoint(webhook("w", app: "b", events: [.notificationOpened]))
            let (old, young) = (at(-8 * day), at(-6 * day))
            let events = [
                opened(at: old), opened(at: old), opened(at: old), opened(at: young), opened(app: "b", at: old),
            ]
            #expect(try await store.enqueueWebhookEvents(events, endpointID: nil) == events.count)
            let claimed = try await claim(store, "n", now: at(-day), until: at(0))
            func row(_ index: Int) throws -> WebhookDelivery {
                try #require(claimed.first(where: { $0.eventID == events[index].id }))
            }
            let outcomes: [WebhookAttempt.Outcome] = [
                .delivered, .failed(nextAttemptAt: nil), .failed(nextAttemptAt: at(day)), .delivered, .delivered,
            ]
            for (index, outcome) in outcomes.enumerated() {
                // Each attempted when its event was written: a row's age counts from its last attempt.
                let attempted = events[index].occurredAt.addingTimeInterval(1)
                #expect(try await store.recordWebhookAttempt(attempt(try row(index), "n", at: attempted, outcome)))
            }
            var longer = CleanupPolicy()
            longer.webhookRetention = .seconds(30 * day)
            let plan = CleanupPlan(default: CleanupPolicy(), apps: ["b": longer])
            _ = try await store.cleanup(plan, now: now)

            func left(_ app: String) async throws -> [String] {
                try await store.webhookDeliveries(appID: app, endpointID: "w", limit: 10).map(\.eventID).sorted()
            }
            // The delivered and the failed older than seven days go; the one still tried and the younger stay.
            #expect(try await left("a") == [events[2].id, events[3].id].sorted())
            #expect(try await left("b") == [events[4].id], "its own retention: thirty days")
            #expect(try await store.webhookBacklog(appID: "a", endpointID: "w") == 1)

            // Later: the younger one goes too, and b's; the one still tried stays however old.
            _ = try await store.cleanup(plan, now: at(30 * day))
            #expect(try await left("a") == [events[2].id])
            #expect(try await left("b").isEmpty)
        },
        .init(
            "webhooks: invalidating an installation invalid already is not told again; once valid again it is",
            keeping: WebhookRecords.self
        ) { store in
            let token = Fixtures.apnsToken()
            let gone = try await register(ios(token, user: "u1"), in: store)
            let rejected = try await register(android(), in: store)
            try await store.createWebhookEndpoint(webhook("w", events: [.installationInvalidated]))
            let item = notification()
            let job = try await insertAndClaim(item, in: store)
            func invalidate(at time: Date) async throws {
                var page = PageCommit(jobID: job.id, owner: "w1", notificationID: item.id)
                page.installationEvents = [
                    (gone.id, .invalidated(reason: "Unregistered", since: nil, at: time)),
                    (rejected.id, .rejected(reason: "BadDeviceToken", at: time, maxFailures: 5, rule: .invalidate)),
                ]
                #expect(try await store.commit(page))
            }
            try await invalidate(at: at(10))
            try await invalidate(at: at(20))
            #expect(try await readBack(gone.id, in: store)?.valid == false)
            #expect(try await readBack(rejected.id, in: store)?.valid == false)
            var rows = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            #expect(rows.count == 2)
            #expect(rows.allSatisfy { $0.eventType == .installationInvalidated && $0.createdAt == at(10) })
            let told = try rows.map { try webhookBody($0)["data"]?.objectValue?["installation_id"] }
            #expect(Set(told) == [.string(gone.id), .string(rejected.id)])

            // Registered again, it is valid: its next invalidation is news.
            _ = try await store.register(ios(token, user: "u1"), appID: "a", now: at(30))
            #expect(try await readBack(gone.id, in: store)?.valid == true)
            try await invalidate(at: at(40))
            rows = try await store.webhookDeliveries(appID: "a", endpointID: "w", limit: 10)
            try #require(rows.count == 3)
            #expect(rows[0].createdAt == at(40))
            #expect(try webhookBody(rows[0])["data"]?.objectValue?["installation_id"] == .string(gone.id))
        },
    ]

    // MARK: Values

    /// An endpoint of app `app` created `now`, with one fresh secret.
    static func webhook(
        _ id: String, app: String = "a", events: [WebhookEventType], disabled: WebhookEndpoint.DisabledReason? = nil
    ) -> WebhookEndpoint {
        WebhookEndpoint(
            id: id, appID: app, url: "https://hooks.example.com/\(app)/\(id)", events: events,
            secrets: [WebhookSecret.generate()], disabledReason: disabled, createdAt: now, updatedAt: now)
    }

    /// A `notification.opened` event (what no page commit writes).
    static func opened(app: String = "a", at time: Date) -> WebhookEvent {
        WebhookEvent(appID: app, type: .notificationOpened, occurredAt: time, data: ["app_id": .string(app)])
    }

    /// Up to `limit` due rows leased to `owner`.
    static func claim(
        _ store: any WebhookStore, _ owner: String, now: Date, until: Date, limit: Int = 100
    ) async throws -> [WebhookDelivery] {
        try await store.claimWebhookDeliveries(owner: owner, now: now, lockedUntil: until, limit: limit)
    }

    /// An attempt of a claimed row (an error text for a status that is not a success).
    static func attempt(
        _ row: WebhookDelivery, _ owner: String, at time: Date, _ outcome: WebhookAttempt.Outcome, status: Int? = nil
    ) -> WebhookAttempt {
        WebhookAttempt(
            deliveryID: row.id, owner: owner, at: time, outcome: outcome, status: status,
            error: status.flatMap { (200..<300).contains($0) ? nil : "HTTP \($0)" })
    }

    /// A row's body, parsed.
    static func webhookBody(_ row: WebhookDelivery) throws -> [String: JSONValue] {
        try #require(try JSONValue.parse(row.body).objectValue)
    }

    /// What an event says of an installation's token.
    static func tokenSHA256(_ installation: Installation) -> String {
        WebhookEvent.Installation(
            id: installation.id, userID: nil, deviceID: nil, platform: installation.platform,
            service: installation.service, snsEndpointARN: nil, token: installation.token.identity
        ).tokenSHA256
    }
}
