import Foundation
import HTTPTypes
import HeraldCore
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// Every dialect keeps one language: none of the systems they copy has per-language content, so no
/// dialect maps anything to `payload.localizations` (docs/content.md, "Dialects"). These pin that
/// decision where it could be mistaken for a gap: LeanCloud's `alert-<locale>` keys (Parse's, not
/// LeanCloud's) and AOVIS, the one dialect whose registration stores a locale.
@Suite(
    "Dialect languages: one language per dialect push; a dialect's locale serves native localized sends", .serialized)
struct DialectLanguageTests {
    @Test("LeanCloud: alert-fr and title-fr are custom data, localeIdentifier an attribute; the push is not localized")
    func leanCloudKeepsOneLanguage() async throws {
        let harness = try await EngineHarness(dialects: LeanCloudClient.dialects())
        let apnsToken = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        try await harness.run { api in
            let clock = harness.server.clock
            let lc = LeanCloudClient(client: api.client, now: { clock.date })
            let ios = try await lc.save(
                #"{"deviceType":"ios","deviceToken":"\#(apnsToken)","localeIdentifier":"fr-FR"}"#)
            let android = try await lc.save(
                #"{"deviceType":"android","installationId":"inst-0003-0000-0000-000000000003","registrationId":"\#(fcmToken)","vendor":"fcm","localeIdentifier":"fr-FR"}"#
            )
            let push = try await lc.push(#"{"data":{"alert":"Hi","alert-fr":"Salut","title-fr":"T"}}"#)
            try await harness.drain()

            // APNs: the alert is the default text; the Parse-style keys sit beside aps as custom keys.
            let apns = try #require(harness.apns.requests.first { $0.token == apnsToken }?.json?.objectValue)
            #expect(apns["aps"]?.objectValue?["alert"] == .object(["body": .string("Hi")]))
            #expect(apns["alert-fr"] == .string("Salut"))
            #expect(apns["title-fr"] == .string("T"))
            // FCM: the same in the notification and data.
            let fcm = try #require(
                harness.fcm.requests.first { $0.token == fcmToken }?.json?.objectValue?["message"]?.objectValue)
            #expect(fcm["notification"] == .object(["body": .string("Hi")]))
            #expect(fcm["data"]?.objectValue?["alert-fr"] == .string("Salut"))
            #expect(fcm["data"]?.objectValue?["title-fr"] == .string("T"))

            // Not localized: no per-language counts on the notification (the push's objectId is its id).
            let record = try await api.notification(push)
            #expect(record.int("counts.sent") == 2)
            #expect(record["counts.by_locale"] == nil)

            // localeIdentifier comes back as saved, and is an attribute, not the installation's locale.
            for id in [ios, android] {
                let saved = try await lc.call(.get, "/1.1/installations/\(id)")
                #expect(saved.string("localeIdentifier") == "fr-FR")
                let native = try await api.call(.get, "/v1/installations/\(id)")
                #expect(native.string("locale") == nil)
                #expect(native.string("attributes.localeIdentifier") == "fr-FR")
            }
        }
    }

    @Test("AOVIS: the registered locale picks a native localized send's words; an event push is not localized")
    func aovisLocaleServesNativeSends() async throws {
        let harness = try await EngineHarness()
        let ann = try await harness.server.userToken("ann")
        let bea = try await harness.server.userToken("bea")
        let hansToken = Fixtures.apnsToken()
        let taiwanToken = Fixtures.fcmToken()
        let germanToken = Fixtures.apnsToken()
        try await harness.run { api in
            // Locales as the phones report them (AOVIS's register: iOS Locale.current.identifier, Android's toString).
            let hans = try await api.aovisRegister(
                #"{"platform":"ios","token":"\#(hansToken)","locale":"zh-Hans_CN"}"#, bearer: ann)
            let taiwan = try await api.aovisRegister(
                #"{"platform":"android","token":"\#(taiwanToken)","locale":"zh_TW"}"#, bearer: ann)
            let ids = try [hans, taiwan].map { try #require($0.string("push_token_id")) }
            let send = try await api.send(
                #"""
                {"target":{"installation_ids":["\#(ids[0])","\#(ids[1])"]},
                 "payload":{"title":"Package delivered","body":"At the front door",
                  "localizations":{"zh":{"title":"包裹已送达","body":"在前门"},"zh-Hant":{"title":"包裹已送達","body":"在前門"}}}}
                """#)
            try await harness.drain()
            let alert = harness.apns.requests.first { $0.token == hansToken }?.json?.objectValue?["aps"]?
                .objectValue?["alert"]
            #expect(alert == .object(["title": .string("包裹已送达"), "body": .string("在前门")]))
            let notification = harness.fcm.requests.first { $0.token == taiwanToken }?.json?.objectValue?["message"]?
                .objectValue?["notification"]
            #expect(notification == .object(["title": .string("包裹已送達"), "body": .string("在前門")]))
            #expect(
                try await api.notification(send)["counts.by_locale"]
                    == .object(["zh": .number(1), "zh-Hant": .number(1)]))

            // A German phone's event push is the guide's §6 payload, as AOVISEventTests expects it.
            let german = try await api.aovisRegister(
                #"{"platform":"ios","token":"\#(germanToken)","locale":"de"}"#, bearer: bea)
            let germanID = try #require(german.string("push_token_id"))
            #expect(try await api.call(.get, "/v1/installations/\(germanID)").string("locale") == "de")
            try await AOVISFixtures.camera(api, id: "cam-drive", alias: "aovis-n4k-3f9a2c", owners: ["bea"])
            let event = try await AOVISFixtures.event(api, id: "evt-de", device: "aovis-n4k-3f9a2c")
            let id = try #require(event.string("id"))
            let notificationID = try #require(event.string("notificationId"))
            try await harness.drain()
            let pushed = try #require(harness.apns.requests.first { $0.token == germanToken })
            #expect(
                pushed.json
                    == .object([
                        "aps": .object([
                            "alert": .object([
                                "title": .string("Vehicle detected"),
                                "body": .string("A dark SUV entered the driveway"),
                            ]),
                            "sound": .string("default"),
                            "mutable-content": .number(1),
                        ]),
                        "deepLink": .string("aovis://event/\(id)"),
                        "cloudEventId": .string(id),
                        "deviceId": .string("aovis-n4k-3f9a2c"),
                        "eventType": .string("vehicle"),
                    ]))
            let record = try await api.notification(notificationID)
            #expect(record.int("counts.sent") == 1)
            #expect(record["counts.by_locale"] == nil)
        }
    }
}
