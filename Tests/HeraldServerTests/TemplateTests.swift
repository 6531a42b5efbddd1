import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Logging
import Testing

/// Templates (docs/content.md, "Templates"): saved through `/v1/templates` as revisions, rendered with
/// Mustache per device language and profile, strict or lenient, previewed, kept by a scheduled send.
@Suite("Templates: rendered per language and recipient through the providers, strict and lenient", .serialized)
struct TemplateTests {
    static let shipped = #"""
        {"description":"An order left the warehouse","title":"Order {{order.id}} shipped",
         "body":"Hi {{recipient.attributes.first_name}}, {{order.items}} items are on their way to {{city}}",
         "data":{"order_id":"{{order.id}}","kind":"shipping"},
         "localizations":{"de":{"title":"Bestellung {{order.id}} versandt",
                                "body":"Hallo {{recipient.attributes.first_name}}, unterwegs nach {{city}}"},
                          "zh-Hant":{"body":"訂單 {{order.id}} 運送中"}}}
        """#
    static let send = #"""
        {"target":{"all":true},"template":{"name":"shipped","variables":{"order":{"id":"A-17","items":3},"city":"Graz & <Wien>"}},
         "payload":{"badge":1,"data":{"source":"shop"}}}
        """#

    /// Each body APNs or FCM received, by token.
    static func bodies(_ harness: EngineHarness) -> [String: (title: String?, body: String?, data: JSONValue?)] {
        var received: [String: (title: String?, body: String?, data: JSONValue?)] = [:]
        for request in harness.apns.requests {
            guard let token = request.token, let payload = request.json?.objectValue else { continue }
            let alert = payload["aps"]?.objectValue?["alert"]?.objectValue
            received[token] = (alert?["title"]?.stringValue, alert?["body"]?.stringValue, payload["order_id"])
        }
        for request in harness.fcm.requests {
            guard let message = request.json?.objectValue?["message"]?.objectValue,
                case .string(let token)? = message["token"]
            else { continue }
            let notification = message["notification"]?.objectValue
            received[token] = (
                notification?["title"]?.stringValue, notification?["body"]?.stringValue,
                message["data"]?.objectValue?["order_id"]
            )
        }
        return received
    }

    @Test(
        "Per locale and profile through APNs and FCM, values never HTML-escaped; the record names the revision",
        arguments: ["sqlite", "postgres"])
    func rendered(_ storeKind: String) async throws {
        try await RangedFanoutTests.withHarness(storeKind) { harness, api in
            let saved = try await api.call(.put, "/v1/templates/shipped", body: Self.shipped)
            #expect(saved.status == .created)
            #expect(saved.int("revision") == 1)
            let devices: [(locale: String?, name: String?, title: String, body: String)] = [
                ("de-AT", "Anna", "Bestellung A-17 versandt", "Hallo Anna, unterwegs nach Graz & <Wien>"),
                ("zh-TW", nil, "Order A-17 shipped", "訂單 A-17 運送中"),
                ("fr", "Luc", "Order A-17 shipped", "Hi Luc, 3 items are on their way to Graz & <Wien>"),
                (nil, nil, "Order A-17 shipped", "Hi , 3 items are on their way to Graz & <Wien>"),
            ]
            var expected: [String: (title: String, body: String)] = [:]
            for (index, device) in devices.enumerated() {
                let ios = index.isMultiple(of: 2)
                let token = ios ? Fixtures.apnsToken() : Fixtures.fcmToken()
                let locale = device.locale.map { #","locale":"\#($0)""# } ?? ""
                let attributes = device.name.map { #","attributes":{"first_name":"\#($0)"}"# } ?? ""
                _ = try await api.register(
                    #"{"platform":"\#(ios ? "ios" : "android")","token":"\#(token)"\#(locale)\#(attributes)}"#)
                expected[token] = (device.title, device.body)
            }
            let id = try await api.send(Self.send)
            try await harness.drain()
            let received = Self.bodies(harness)
            #expect(received.count == devices.count)
            for (token, words) in expected {
                #expect(received[token]?.title == words.title)
                #expect(received[token]?.body == words.body)
                #expect(received[token]?.data == .string("A-17"), "the template's data is rendered too")
            }
            let record = try await api.notification(id)
            #expect(record.int("counts.sent") == devices.count)
            #expect(record["template"] == .object(["name": .string("shipped"), "revision": .number(1)]))
            #expect(
                record["counts.by_locale"]
                    == .object(["de": .number(1), "zh-Hant": .number(1), "default": .number(2)]))
        }
    }

    @Test(
        "Strict: a variable missing for the send is refused at intake; one missing for a recipient fails that delivery")
    func strict() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let strict =
                #"{"strict":true,"title":"Order {{order.id}}","body":"Hi {{recipient.attributes.first_name}}"}"#
            #expect(try await api.call(.put, "/v1/templates/strict", body: strict).status == .created)
            let named = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(named)","attributes":{"first_name":"Ada"}}"#)
            let anonymous = try await api.register(#"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#)

            let refused = try await api.call(
                .post, "/v1/notifications", body: #"{"target":{"all":true},"template":{"name":"strict"}}"#)
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "template_variable_missing")
            #expect(refused.errorField == "template.variables.order.id")
            #expect(try await api.call(.get, "/v1/notifications")["data"] == .array([]), "nothing is stored")

            let id = try await api.send(
                #"{"target":{"all":true},"template":{"name":"strict","variables":{"order":{"id":"B-2"}}}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [named])
            let record = try await api.notification(id)
            #expect(record.int("counts.sent") == 1)
            #expect(record.int("counts.failed") == 1)
            let deliveries = try await api.call(.get, "/v1/notifications/\(id)/deliveries")
            let failed = deliveries["data"]?.arrayValue?.first { $0.objectValue?["outcome"] == .string("failed") }
            #expect(failed?.objectValue?["installation_id"] == .string(anonymous))
            #expect(
                failed?.objectValue?["reason"] == .string("template_variable_missing: recipient.attributes.first_name"))
            // The device is not at fault: its failures are not counted.
            let installation = try await api.call(.get, "/v1/installations/\(anonymous)")
            #expect(installation["valid"] == .bool(true))
        }
    }

    @Test("Lenient: a missing variable renders empty, and the preview names it; sections skip what is missing")
    func lenientAndPreview() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let lenient = #"""
                {"title":"{{#vip}}VIP: {{/vip}}Sale","body":"{{greeting}} {{recipient.user_id}}{{^recipient.user_id}}friend{{/recipient.user_id}}",
                 "localizations":{"pt-BR":{"title":"Promoção"}}}
                """#
            #expect(try await api.call(.put, "/v1/templates/sale", body: lenient).status == .created)
            let token = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            _ = try await api.send(#"{"target":{"all":true},"template":{"name":"sale","variables":{"vip":true}}}"#)
            try await harness.drain()
            #expect(Self.bodies(harness)[token]?.title == "VIP: Sale")
            #expect(Self.bodies(harness)[token]?.body == " friend")

            let preview = try await api.call(
                .post, "/v1/templates/sale/render",
                body: #"{"variables":{"greeting":"Olá"},"recipient":{"user_id":"u-9","locale":"pt-BR"}}"#)
            #expect(preview.status == .ok)
            #expect(preview["localization"] == .string("pt-BR"))
            #expect(preview["title"] == .string("Promoção"))
            #expect(preview["body"] == .string("Olá u-9"))
            #expect(preview["missing"] == .array([]))
            let missing = try await api.call(.post, "/v1/templates/sale/render", body: #"{"locale":"en"}"#)
            #expect(missing["localization"] == .null)
            #expect(missing["missing"] == .array([.string("greeting"), .string("recipient.user_id")]))
        }
    }

    @Test(
        "A scheduled send keeps the revision it was accepted with; the API's errors; a configured template is read-only"
    )
    func revisions() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            #expect(
                try await api.call(.put, "/v1/templates/news", body: #"{"title":"First {{n}}"}"#).status == .created)
            let token = Fixtures.apnsToken()
            _ = try await api.register(#"{"platform":"ios","token":"\#(token)"}"#)
            let later = ISO8601DateFormatter().string(from: harness.server.clock.date.addingTimeInterval(3600))
            let id = try await api.send(
                #"{"target":{"all":true},"template":{"name":"news","variables":{"n":1}},"push_time":"\#(later)"}"#)
            let second = try await api.call(.put, "/v1/templates/news", body: #"{"title":"Second {{n}}"}"#)
            #expect(second.status == .ok)
            #expect(second.int("revision") == 2)
            harness.server.clock.advance(by: .seconds(3601))
            try await harness.drain()
            #expect(Self.bodies(harness)[token]?.title == "First 1")
            #expect(try await api.notification(id)["template.revision"] == .number(1))

            // Bad input changes nothing.
            let broken = try await api.call(.put, "/v1/templates/news", body: #"{"title":"{{#open}} never closed"}"#)
            #expect(broken.status == .badRequest)
            #expect(broken.errorCode == "invalid_template")
            #expect(broken.errorField == "title")
            #expect(try await api.call(.get, "/v1/templates/news").int("revision") == 2)
            let empty = try await api.call(.put, "/v1/templates/news", body: #"{"description":"words?"}"#)
            #expect(empty.errorCode == "empty_template")
            let unknown = try await api.call(
                .post, "/v1/notifications", body: #"{"target":{"all":true},"template":{"name":"nope"}}"#)
            #expect(unknown.errorCode == "template_not_found")
            #expect(unknown.errorField == "template.name")
            let conflict = try await api.call(
                .post, "/v1/notifications",
                body: #"{"target":{"all":true},"template":{"name":"news"},"payload":{"title":"mine"}}"#)
            #expect(conflict.errorCode == "template_conflict")
            #expect(conflict.errorField == "payload.title")
            #expect(try await api.call(.get, "/v1/templates/nope").status == .notFound)

            // A template kept in the configuration is read here and changed only there.
            let store = try #require(harness.server.store as? any TemplateStore)
            try await ConfiguredTemplates.apply(
                [ConfiguredTemplate(appID: "demo", name: "ops", content: TemplateContent(body: "{{text}}"))],
                appIDs: ["demo"], store: store, now: harness.server.clock.date, logger: Logger(label: "test"))
            let configured = try await api.call(.get, "/v1/templates/ops")
            #expect(configured["configured"] == .bool(true))
            #expect(
                try await api.call(.put, "/v1/templates/ops", body: #"{"body":"x"}"#).errorCode == "template_configured"
            )
            #expect(try await api.call(.delete, "/v1/templates/ops").errorCode == "template_configured")
            let listed = try await api.call(.get, "/v1/templates")["data"]?.arrayValue?.compactMap {
                $0.objectValue?["name"]?.stringValue
            }
            #expect(listed == ["news", "ops"])
            #expect(try await api.call(.delete, "/v1/templates/news").status == .noContent)
            #expect(try await api.call(.get, "/v1/templates/news").status == .notFound)
            // The client key cannot touch templates.
            let client = try await api.call(.get, "/v1/templates", bearer: ServerHarness.clientKey)
            #expect(client.status == .forbidden)
        }
    }
}
