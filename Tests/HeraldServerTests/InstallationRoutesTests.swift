import Foundation
import HTTPTypes
import HeraldCore
import HeraldSQLite
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@Suite("Installation routes")
struct InstallationRoutesTests {
    @Test("Register creates (201), re-register updates the same row (200)")
    func upsertIdempotency() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let token = Fixtures.apnsToken()
            let first = try await api.registerIOS(token: token, extra: #","channels":["news"]"#)
            #expect(first.status == .created)
            #expect(first.string("token") == token)
            #expect(first.string("service") == "apns")
            let second = try await api.registerIOS(token: token)
            #expect(second.status == .ok)
            #expect(second.string("id") == first.string("id"))
            #expect(second["channels"] == .array([.string("news")]))
            let list = try await api.call(.get, "/v1/installations")
            #expect(list.items.count == 1)
        }
    }

    @Test("Every platform and service registers")
    func allServices() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let subscription = Fixtures.webPushSubscription()
            let bodies = [
                #"{"platform":"android","token":"\#(Fixtures.fcmToken())"}"#,
                #"{"platform":"ios","service":"fcm","token":"\#(Fixtures.fcmToken())"}"#,
                #"{"platform":"android","service":"sns","token":"\#(Fixtures.fcmToken())"}"#,
                #"{"platform":"ipados","service":"sns","environment":"sandbox","token":"\#(Fixtures.apnsToken())"}"#,
                #"{"platform":"watchos","token":"\#(Fixtures.apnsToken())"}"#,
                #"""
                {"platform":"web","subscription":{"endpoint":"\#(subscription.endpoint)","expirationTime":null,
                 "keys":{"p256dh":"\#(subscription.p256dh)","auth":"\#(subscription.auth)"}}}
                """#,
            ]
            for body in bodies {
                let response = try await api.call(.post, "/v1/installations", body: body)
                #expect(response.status == .created, "\(body)")
            }
            let web = try await api.call(.get, "/v1/installations?platform=web")
            #expect(web.items.count == 1)
            let id = web.string("data.0.id") ?? ""
            let single = try await api.call(.get, "/v1/installations/\(id)")
            #expect(single.string("subscription.endpoint") == subscription.endpoint)
            #expect(single.string("subscription.keys.auth") == subscription.auth)
        }
    }

    @Test(
        "Bad registrations answer 400 naming the field",
        arguments: [
            (#"{"platform":"ios"}"#, "token", "missing_field"),
            (#"{"platform":"blackberry","token":"x"}"#, "platform", "invalid_value"),
            (#"{"platform":"android","service":"apns","token":"x"}"#, "platform", "platform_service_mismatch"),
            (#"{"platform":"ios","token":"abc"}"#, "token", "invalid_token"),
            (#"{"platform":"ios","token":"\#(String(repeating: "z", count: 64))"}"#, "token", "invalid_token"),
            (#"{"platform":"android","token":"with space"}"#, "token", "invalid_token"),
            (#"{"platform":"android","token":"\#(String(repeating: "x", count: 4097))"}"#, "token", "invalid_token"),
            (
                #"{"platform":"web","subscription":{"endpoint":"http://x.y/z","keys":{"p256dh":"AA","auth":"AA"}}}"#,
                "subscription.endpoint", "invalid_endpoint"
            ),
            (
                #"{"platform":"web","subscription":{"endpoint":"https://x.y/z","keys":{"p256dh":"AAAA","auth":"AA"}}}"#,
                "subscription.keys.p256dh", "invalid_key"
            ),
            (#"{"platform":"android","token":"t","environment":"staging"}"#, "environment", "invalid_value"),
            (#"{"platform":"android","token":"t","timezone":"Europe/Atlantis"}"#, "timezone", "invalid_timezone"),
            (#"{"platform":"android","token":"t","locale":"xx-yy-zz-ww"}"#, "locale", "invalid_locale"),
            (#"{"platform":"android","token":"t","channels":["bad channel"]}"#, "channels[0]", "invalid_channel"),
            (#"{"platform":"android","token":"t","attributes":"x"}"#, "attributes", "invalid_type"),
            (#"{"platform":"android","token":"t","nickname":"x"}"#, "nickname", "unknown_field"),
            (#"{"platform":"android","token":"t","badge":"1"}"#, "badge", "invalid_type"),
        ])
    func validation(body: String, field: String, code: String) async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let response = try await api.call(.post, "/v1/installations", body: body)
            #expect(response.status == .badRequest)
            #expect(response.errorField == field)
            #expect(response.errorCode == code)
            #expect(try await api.call(.get, "/v1/installations").items.isEmpty)
        }
    }

    @Test("Channel and attribute limits over HTTP")
    func limits() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let channels = (0..<101).map { #""c\#($0)""# }.joined(separator: ",")
            let tooMany = try await api.registerIOS(extra: #","channels":[\#(channels)]"#)
            #expect(tooMany.status == .badRequest)
            #expect(tooMany.errorCode == "too_many_channels")
            let big = String(repeating: "x", count: 9000)
            let attributes = try await api.registerIOS(extra: #","attributes":{"blob":"\#(big)"}"#)
            #expect(attributes.status == .badRequest)
            #expect(attributes.errorCode == "attributes_too_large")
        }
    }

    @Test("Malformed JSON, wrong types, wrong content type and huge bodies are 4xx, never 500")
    func malformedRequests() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let broken = try await api.call(.post, "/v1/installations", body: #"{"platform":"ios","#)
            #expect(broken.status == .badRequest)
            #expect(broken.errorCode == "invalid_json")
            let array = try await api.call(.post, "/v1/installations", body: "[]")
            #expect(array.status == .badRequest)
            #expect(array.errorCode == "invalid_body")
            let text = try await api.call(.post, "/v1/installations", body: "platform=ios", contentType: "text/plain")
            #expect(text.status == .badRequest)
            #expect(text.errorCode == "invalid_content_type")
            let none = try await api.call(.post, "/v1/installations", body: "{}", contentType: nil)
            #expect(none.errorCode == "invalid_content_type")
            let withCharset = try await api.call(
                .post, "/v1/installations", body: #"{"platform":"android","token":"t"}"#,
                contentType: "application/json; charset=utf-8")
            #expect(withCharset.status == .created)
            let huge =
                #"{"platform":"android","token":"t","attributes":{"x":""#
                + String(repeating: "y", count: 70_000) + #""}}"#
            let tooLarge = try await api.call(.post, "/v1/installations", body: huge)
            #expect(tooLarge.status == .contentTooLarge)
            #expect(tooLarge.errorCode == "body_too_large")
        }
    }

    @Test("GET shows the whole token; lists show only its last 8 characters")
    func tokenVisibility() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let token = Fixtures.apnsToken()
            let created = try await api.registerIOS(token: token)
            let id = created.string("id") ?? ""
            #expect(try await api.call(.get, "/v1/installations/\(id)").string("token") == token)
            let list = try await api.call(.get, "/v1/installations")
            #expect(list.items.first?.objectValue?["token"] == nil)
            #expect(list.string("data.0.token_suffix") == String(token.suffix(8)))
        }
    }

    @Test("PATCH changes fields, null clears them, and the service is fixed")
    func patch() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let created = try await api.registerIOS(extra: #","locale":"en","app_version":"1.0""#)
            let id = created.string("id") ?? ""
            let patched = try await api.call(
                .patch, "/v1/installations/\(id)",
                body: #"{"badge":4,"channels":["alerts"],"locale":null,"timezone":"Asia/Tokyo","attributes":{"a":1}}"#)
            #expect(patched.status == .ok)
            #expect(patched["badge"] == .number(4))
            #expect(patched["locale"] == .null)
            #expect(patched.string("timezone") == "Asia/Tokyo")
            #expect(patched.string("app_version") == "1.0")
            #expect(patched["attributes.a"] == .number(1))

            let newToken = Fixtures.apnsToken()
            let retokened = try await api.call(.patch, "/v1/installations/\(id)", body: #"{"token":"\#(newToken)"}"#)
            #expect(retokened.string("token") == newToken)

            let service = try await api.call(.patch, "/v1/installations/\(id)", body: #"{"service":"fcm"}"#)
            #expect(service.status == .badRequest)
            #expect(service.errorCode == "immutable_field")
            let platform = try await api.call(.patch, "/v1/installations/\(id)", body: #"{"platform":"android"}"#)
            #expect(platform.errorCode == "platform_service_mismatch")
            let badToken = try await api.call(.patch, "/v1/installations/\(id)", body: #"{"token":"nothex"}"#)
            #expect(badToken.errorCode == "invalid_token")
            let nullBadge = try await api.call(.patch, "/v1/installations/\(id)", body: #"{"badge":null}"#)
            #expect(nullBadge.status == .badRequest)
            let unknown = try await api.call(.patch, "/v1/installations/\(id)", body: #"{"colour":"red"}"#)
            #expect(unknown.errorCode == "unknown_field")
            // Nothing of the refused patches stuck.
            let current = try await api.call(.get, "/v1/installations/\(id)")
            #expect(current.string("token") == newToken)
            #expect(current.string("platform") == "ios")
            let missing = try await api.call(.patch, "/v1/installations/nope", body: #"{"badge":1}"#)
            #expect(missing.status == .notFound)
        }
    }

    @Test("DELETE removes the installation")
    func delete() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let id = try await api.registerIOS().string("id") ?? ""
            #expect(try await api.call(.delete, "/v1/installations/\(id)").status == .noContent)
            #expect(try await api.call(.get, "/v1/installations/\(id)").status == .notFound)
            let again = try await api.call(.delete, "/v1/installations/\(id)")
            #expect(again.status == .notFound)
            #expect(again.errorCode == "not_found")
        }
    }

    @Test("Re-registering an invalidated token re-validates it and resets failures")
    func revalidation() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let token = Fixtures.apnsToken()
            let id = try await api.registerIOS(token: token).string("id") ?? ""
            var stored = try #require(try await harness.store.installation(appID: "demo", id: id))
            stored.valid = false
            stored.failureCount = 5
            stored.invalidatedAt = harness.clock.date
            _ = try await harness.store.update(stored, now: harness.clock.date)
            #expect(try await api.call(.get, "/v1/installations?valid=false").items.count == 1)
            let again = try await api.registerIOS(token: token)
            #expect(again.status == .ok)
            #expect(again["valid"] == .bool(true))
            #expect(again["failure_count"] == .number(0))
            #expect(again["invalidated_at"] == .null)
        }
    }

    @Test("Filters and cursor pagination")
    func listing() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            for index in 0..<5 {
                _ = try await api.registerIOS(extra: #","user_id":"u\#(index % 2)","channels":["c\#(index % 3)"]"#)
            }
            _ = try await api.call(
                .post, "/v1/installations", body: #"{"platform":"android","token":"\#(Fixtures.fcmToken())"}"#)
            #expect(try await api.call(.get, "/v1/installations?user_id=u0").items.count == 3)
            #expect(try await api.call(.get, "/v1/installations?channel=c0").items.count == 2)
            #expect(try await api.call(.get, "/v1/installations?platform=android").items.count == 1)
            #expect(try await api.call(.get, "/v1/installations?service=fcm&valid=true").items.count == 1)
            var ids: [String] = []
            var uri = "/v1/installations?limit=4"
            while true {
                let page = try await api.call(.get, uri)
                #expect(page.status == .ok)
                ids += page.items.compactMap { if case .string(let id)? = $0.objectValue?["id"] { id } else { nil } }
                guard let next = page.string("next_cursor") else { break }
                uri = "/v1/installations?limit=4&cursor=\(next)"
            }
            #expect(ids.count == 6)
            #expect(Set(ids).count == 6)
            for (query, field, code) in [
                ("limit=0", "limit", "invalid_limit"), ("limit=1001", "limit", "invalid_limit"),
                ("cursor=%21%21", "cursor", "invalid_cursor"), ("valid=yes", "valid", "invalid_value"),
                ("platform=nokia", "platform", "invalid_value"), ("sort=id", "sort", "unknown_field"),
            ] {
                let response = try await api.call(.get, "/v1/installations?\(query)")
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.errorField == field, "\(query)")
                #expect(response.errorCode == code, "\(query)")
            }
        }
    }
}
