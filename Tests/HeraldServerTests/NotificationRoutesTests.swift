import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@Suite("Send API and dispatch engine, through the router and the mock providers", .serialized)
struct NotificationRoutesTests {
    @Test("A notification to installations is accepted, fanned out to APNs and FCM, and counted")
    func sendsToInstallations() async throws {
        let harness = try await EngineHarness()
        let apnsToken = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        try await harness.run { api in
            let ios = try await api.register(#"{"platform":"ios","token":"\#(apnsToken)"}"#)
            let android = try await api.register(#"{"platform":"android","token":"\#(fcmToken)"}"#)
            let accepted = try await api.call(
                .post, "/v1/notifications",
                body: #"""
                    {"target":{"installation_ids":["\#(ios)","\#(android)"]},
                     "payload":{"title":"Vehicle detected","body":"At the gate","sound":"default","data":{"event":"42"},
                                "deep_link":"app://event/42"}}
                    """#)
            #expect(accepted.status == .accepted)
            #expect(accepted.string("status") == "queued")
            let id = try #require(accepted.string("id"))
            try await harness.drain()
            let record = try await api.notification(id)
            #expect(record.string("status") == "done")
            #expect(record.int("counts.targeted") == 2)
            #expect(record.int("counts.sent") == 2)
            let apnsRequest = try #require(harness.apns.requests.first)
            #expect(apnsRequest.token == apnsToken)
            #expect(
                apnsRequest.json?.objectValue?["aps"]?.objectValue?["alert"]?.objectValue?["title"]
                    == .string("Vehicle detected"))
            #expect(apnsRequest.json?.objectValue?["deep_link"] == .string("app://event/42"))
            let fcmRequest = try #require(harness.fcm.requests.first)
            #expect(fcmRequest.token == fcmToken)
            let message = fcmRequest.json?.objectValue?["message"]?.objectValue
            #expect(message?["data"]?.objectValue?["event"] == .string("42"))
            #expect(message?["notification"]?.objectValue?["title"] == .string("Vehicle detected"))
            // The device learns the notification's id, to report an open with (POST /v1/opens).
            #expect(apnsRequest.json?.objectValue?["herald"] == .object(["id": .string(id)]))
            #expect(message?["data"]?.objectValue?["herald_id"] == .string(id))
            let installation = try await api.call(.get, "/v1/installations/\(ios)")
            #expect(installation["last_delivered_at"] != .null)
        }
    }

    @Test("Bad send requests are refused with the field at fault, and nothing is stored")
    func validation() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let cases: [(String, String, String)] = [
                (#"{"payload":{"title":"x"}}"#, "missing_field", "target"),
                (#"{"target":{"all":true}}"#, "missing_field", "payload"),
                (#"{"target":{"all":true,"user_ids":["a"]},"payload":{"title":"x"}}"#, "invalid_target", "target"),
                (#"{"target":{"user_ids":[]},"payload":{"title":"x"}}"#, "empty_target", "target.user_ids"),
                (#"{"target":{"all":true},"payload":{}}"#, "empty_payload", "payload"),
                (#"{"target":{"all":true},"payload":{"title":"x"},"colour":"red"}"#, "unknown_field", "colour"),
                (#"{"target":{"all":true},"payload":{"title":"x","badge":"lots"}}"#, "invalid_value", "payload.badge"),
                (
                    #"{"target":{"where":{"badge":{"$foo":1}}},"payload":{"title":"x"}}"#, "unknown_operator",
                    "target.where.badge.$foo"
                ),
                (
                    #"{"target":{"all":true},"payload":{"title":"x"},"push_time":"tomorrow"}"#, "invalid_push_time",
                    "push_time"
                ),
                (
                    #"{"target":{"all":true},"payload":{"title":"x"},"push_time":"2099-01-01T00:00:00Z"}"#,
                    "invalid_push_time", "push_time"
                ),
                (
                    #"{"target":{"all":true},"payload":{"title":"x"},"expiration_time":"2001-01-01T00:00:00Z"}"#,
                    "invalid_expiration", "expiration_time"
                ),
                (
                    #"{"target":{"tokens":[{"token":"zz","service":"apns"}]},"payload":{"title":"x"}}"#,
                    "invalid_token", "target.tokens[0].token"
                ),
                (
                    #"{"target":{"all":true},"payload":{"title":"x","body":"\#(String(repeating: "a", count: 3990))","data":{"pad":"\#(String(repeating: "b", count: 400))"}}}"#,
                    "payload_too_large", "payload"
                ),
            ]
            for (body, code, field) in cases {
                let response = try await api.call(.post, "/v1/notifications", body: body)
                #expect(response.status == .badRequest, "\(code)")
                #expect(response.errorCode == code, "\(body.prefix(80))")
                #expect(response.errorField == field, "\(code)")
            }
            let clientKey = try await api.call(
                .post, "/v1/notifications", bearer: ServerHarness.clientKey,
                body: #"{"target":{"all":true},"payload":{"title":"x"}}"#)
            #expect(clientKey.status == .forbidden)
            let list = try await api.call(.get, "/v1/notifications")
            #expect(list.items.isEmpty)
        }
    }

    @Test("Malformed, mistyped and oversized bodies and queries on the new routes are 4xx and change nothing")
    func badInput() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let id = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let big = #"{"target":{"all":true},"payload":{"title":"\#(String(repeating: "x", count: 70_000))"}}"#
            let cases: [(HTTPRequest.Method, String, String?, String?, HTTPResponse.Status, String)] = [
                (.post, "/v1/notifications", "{not json", "application/json", .badRequest, "invalid_json"),
                (
                    .post, "/v1/notifications", #"{"target":{"all":true},"payload":{"title":"x"}}"#, "text/plain",
                    .badRequest, "invalid_content_type"
                ),
                (.post, "/v1/notifications", "[1,2]", "application/json", .badRequest, "invalid_body"),
                (
                    .post, "/v1/notifications", #"{"target":"everyone","payload":{"title":"x"}}"#, "application/json",
                    .badRequest, "invalid_type"
                ),
                (
                    .post, "/v1/notifications", #"{"target":{"all":true},"payload":{"title":7}}"#, "application/json",
                    .badRequest, "invalid_type"
                ),
                (
                    .post, "/v1/notifications", #"{"target":{"all":true},"payload":{"title":"x"},"dry_run":"yes"}"#,
                    "application/json", .badRequest, "invalid_type"
                ),
                (
                    .post, "/v1/notifications",
                    #"{"target":{"all":true},"payload":{"title":"x"},"expiration_interval":0}"#, "application/json",
                    .badRequest, "invalid_value"
                ),
                (.post, "/v1/notifications", big, "application/json", .contentTooLarge, "body_too_large"),
                (.get, "/v1/notifications?status=lost", nil, nil, .badRequest, "invalid_value"),
                (.get, "/v1/notifications?limit=0", nil, nil, .badRequest, "invalid_limit"),
                (.get, "/v1/notifications/none/deliveries", nil, nil, .notFound, "not_found"),
                (.put, "/v1/installations/\(id)/preferences", "{", "application/json", .badRequest, "invalid_json"),
                (
                    .put, "/v1/installations/\(id)/preferences", #"{"sound_enabled":"no"}"#, "application/json",
                    .badRequest, "invalid_type"
                ),
                (
                    .put, "/v1/installations/\(id)/preferences", #"{"volume":3}"#, "application/json", .badRequest,
                    "unknown_field"
                ),
                (
                    .put, "/v1/installations/\(id)/preferences",
                    #"{"enabled_sources":["\#(String(repeating: "s", count: 101))"]}"#, "application/json", .badRequest,
                    "invalid_length"
                ),
                (.put, "/v1/installations/missing/preferences", "{}", "application/json", .notFound, "not_found"),
            ]
            for (method, uri, body, contentType, status, code) in cases {
                let response = try await api.call(method, uri, body: body, contentType: contentType)
                #expect(response.status == status, "\(method) \(uri.prefix(60)) \(body?.prefix(60) ?? "")")
                #expect(response.errorCode == code, "\(method) \(uri.prefix(60)) \(body?.prefix(60) ?? "")")
            }
            let clientKey = try await api.call(
                .put, "/v1/installations/\(id)/preferences", bearer: ServerHarness.clientKey, body: "{}")
            #expect(clientKey.status == .forbidden)
            #expect(try await api.call(.get, "/v1/notifications").items.isEmpty)
            let preferences = try await api.call(.get, "/v1/installations/\(id)/preferences")
            #expect(preferences["sound_enabled"] == .bool(true))
            #expect(preferences["enabled_sources"] == .null)
        }
    }

    @Test("Every targeting form resolves the right audience (dry runs send nothing)")
    func targeting() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            _ = try await api.register(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"ann","channels":["news","sport"],"attributes":{"tier":"gold","level":3,"tags":["a","b"]},"locale":"en-GB","badge":2}"#
            )
            _ = try await api.register(
                #"{"platform":"android","token":"\#(Fixtures.fcmToken())","user_id":"bob","channels":["sport"],"attributes":{"tier":"silver","level":7,"tags":["b"]},"locale":"fr-FR"}"#
            )
            let carol = try await api.register(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"carol","attributes":{"level":"3"}}"#)
            func audience(_ target: String) async throws -> Int? {
                let response = try await api.call(
                    .post, "/v1/notifications", body: #"{"target":\#(target),"payload":{"title":"x"},"dry_run":true}"#)
                #expect(response.status == .ok, "\(target): \(String(describing: response.json))")
                return response.int("targeted")
            }
            let expectations: [(String, Int)] = [
                (#"{"all":true}"#, 3),
                (#"{"all":true,"platforms":["android"]}"#, 1),
                (#"{"all":true,"services":["apns"]}"#, 2),
                (#"{"installation_ids":["\#(carol)"]}"#, 1),
                (#"{"user_ids":["ann","bob","nobody"]}"#, 2),
                (#"{"channels":["news"]}"#, 1),
                (#"{"channels":["news","sport"]}"#, 2),
                (#"{"where":{"platform":"ios"}}"#, 2),
                (#"{"where":{"user_id":{"$eq":"bob"}}}"#, 1),
                (#"{"where":{"user_id":{"$ne":"bob"}}}"#, 2),
                (#"{"where":{"user_id":{"$in":["ann","carol"]}}}"#, 2),
                (#"{"where":{"user_id":{"$nin":["ann","carol"]}}}"#, 1),
                (#"{"where":{"tier":{"$exists":true}}}"#, 2),
                (#"{"where":{"attributes.tier":{"$exists":false}}}"#, 1),
                (#"{"where":{"level":{"$lt":7}}}"#, 1),
                (#"{"where":{"level":{"$lte":7}}}"#, 2),
                (#"{"where":{"level":{"$gt":3}}}"#, 1),
                (#"{"where":{"level":{"$gte":3}}}"#, 2),
                (#"{"where":{"level":"3"}}"#, 1),
                (#"{"where":{"locale":{"$regex":"^EN","$options":"i"}}}"#, 1),
                (#"{"where":{"tags":{"$all":["a","b"]}}}"#, 1),
                (#"{"where":{"channels":"sport"}}"#, 2),
                (#"{"where":{"$and":[{"channels":"sport"},{"$or":[{"tier":"gold"},{"level":{"$gt":5}}]}]}}"#, 2),
                (#"{"where":{"$or":[{"user_id":"carol"},{"$and":[{"tier":"silver"},{"platform":"android"}]}]}}"#, 2),
                (#"{"where":{"badge":{"$gte":2}}}"#, 1),
            ]
            for (target, count) in expectations {
                #expect(try await audience(target) == count, "\(target)")
            }
            #expect(harness.apns.requests.isEmpty)
            #expect(harness.fcm.requests.isEmpty)
        }
    }

    @Test("Raw tokens are sent without registration, and the record does not show them")
    func rawTokens() async throws {
        let harness = try await EngineHarness()
        let token = Fixtures.apnsToken()
        try await harness.run { api in
            let id = try await api.send(
                #"{"target":{"tokens":[{"token":"\#(token)","service":"apns","environment":"sandbox"},{"token":"\#(Fixtures.fcmToken())","service":"fcm"}]},"payload":{"body":"hi"}}"#
            )
            try await harness.drain()
            let record = try await api.notification(id)
            #expect(record.int("counts.sent") == 2)
            #expect(record["target.tokens"] == .number(2))
            #expect(harness.apns.requests.map(\.token) == [token])
        }
    }

    @Test("A push time without an offset is each device's local time")
    func localPushTime() async throws {
        let harness = try await EngineHarness()
        let tokyo = Fixtures.apnsToken()
        let newYork = Fixtures.apnsToken()
        // 2026-07-01 09:00 is 00:00Z in Tokyo (UTC+9) and 13:00Z in New York (UTC-4, summer).
        harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-06-30T18:00:00Z")!)
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(tokyo)","timezone":"Asia/Tokyo"}"#)
            _ = try await api.register(#"{"platform":"ios","token":"\#(newYork)","timezone":"America/New_York"}"#)
            let id = try await api.send(
                #"{"target":{"all":true},"payload":{"title":"Good morning"},"push_time":"2026-07-01T09:00:00"}"#)
            #expect(try await api.notification(id).string("status") == "scheduled")
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-01T00:00:01Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [tokyo])
            #expect(try await api.notification(id).string("status") == "sending")
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-01T12:59:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.count == 1)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-01T13:00:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [tokyo, newYork])
            let record = try await api.notification(id)
            #expect(record.string("status") == "done")
            #expect(record.int("counts.sent") == 2)
        }
    }

    @Test("A notification past its expiry before sending is expired; retries stop at expiry")
    func expiry() async throws {
        let harness = try await EngineHarness()
        let token = Fixtures.fcmToken()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"android","token":"\#(token)"}"#)
            let late = try await api.send(#"{"target":{"all":true},"payload":{"title":"x"},"expiration_interval":60}"#)
            harness.server.clock.advance(by: .seconds(61))
            try await harness.drain()
            let record = try await api.notification(late)
            #expect(record.string("status") == "expired")
            #expect(record.int("counts.skipped_expired") == 1)
            #expect(harness.fcm.requests.isEmpty)

            // Retry-After 20 s (plus up to 1 s of jitter): the second attempt is due before expiry (30 s), a third
            // would not be.
            harness.fcm.script(token: token, .unavailable(retryAfter: 20))
            let retried = try await api.send(
                #"{"target":{"all":true},"payload":{"title":"x"},"expiration_interval":30}"#)
            try await harness.drain()
            #expect(harness.fcm.requests.count == 1)
            #expect(try await api.notification(retried).string("status") == "sending")
            for _ in 0..<6 {
                harness.server.clock.advance(by: .seconds(5))
                try await harness.drain()
            }
            #expect(harness.fcm.requests.count == 2)
            let after = try await api.notification(retried)
            #expect(after.string("status") == "expired")
            #expect(after.int("counts.sent") == 0)
            #expect(after.int("counts.skipped_expired") == 1)
            let ledger = try await api.call(.get, "/v1/notifications/\(retried)/deliveries?outcome=expired")
            #expect(ledger.items.count == 1)
        }
    }

    @Test("A scheduled notification can be canceled; a finished one cannot")
    func cancel() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)
            let future = Date(timeIntervalSince1970: harness.server.clock.date.timeIntervalSince1970 + 3600)
            let id = try await api.send(
                #"{"target":{"all":true},"payload":{"title":"x"},"push_time":"\#(ISO8601DateFormatter().string(from: future))"}"#
            )
            let canceled = try await api.call(.delete, "/v1/notifications/\(id)")
            #expect(canceled.status == .ok)
            #expect(canceled.string("status") == "canceled")
            harness.server.clock.advance(by: .seconds(7200))
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            let again = try await api.call(.delete, "/v1/notifications/\(id)")
            #expect(again.status == .conflict)
            #expect(try await api.call(.delete, "/v1/notifications/nope").status == .notFound)
            let canceledList = try await api.call(.get, "/v1/notifications?status=canceled")
            #expect(canceledList.items.count == 1)
        }
    }

    @Test("An idempotency key returns the first notification within 24 hours")
    func idempotency() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let body = #"{"target":{"all":true},"payload":{"title":"x"}}"#
            let first = try await api.call(
                .post, "/v1/notifications", body: body, headers: [.init("Idempotency-Key")!: "order-17"])
            #expect(first.status == .accepted)
            let repeated = try await api.call(
                .post, "/v1/notifications", body: body, headers: [.init("Idempotency-Key")!: "order-17"])
            #expect(repeated.status == .ok)
            #expect(repeated.string("id") == first.string("id"))
            let inBody = try await api.call(
                .post, "/v1/notifications",
                body: #"{"target":{"all":true},"payload":{"title":"x"},"idempotency_key":"order-17"}"#)
            #expect(inBody.string("id") == first.string("id"))
            harness.server.clock.advance(by: .seconds(86_401))
            let later = try await api.call(
                .post, "/v1/notifications", body: body, headers: [.init("Idempotency-Key")!: "order-17"])
            #expect(later.status == .accepted)
            #expect(later.string("id") != first.string("id"))
        }
    }

    @Test("Badge increments are atomic per device across concurrent notifications")
    func badgeIncrement() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let id = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())","badge":4}"#)
            for _ in 0..<5 {
                _ = try await api.send(#"{"target":{"all":true},"payload":{"title":"x","badge":"increment"}}"#)
            }
            try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<3 {
                    group.addTask { try await harness.server.dispatcher.runDueJobs(owner: "w\(worker)") }
                }
                for try await _ in group {}
            }
            let badges = harness.apns.requests.compactMap { request -> Int? in
                if case .number(let value)? = request.json?.objectValue?["aps"]?.objectValue?["badge"] {
                    return value.integerValue.map(Int.init)
                }
                return nil
            }
            #expect(badges.sorted() == [5, 6, 7, 8, 9])
            #expect(try await api.call(.get, "/v1/installations/\(id)").int("badge") == 9)
        }
    }
}
