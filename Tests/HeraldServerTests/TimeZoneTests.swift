import Foundation
import HTTPTypes
import HeraldArgusAI
import HeraldCore
import HeraldLeanCloud
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

/// Time zones as phones report them, through every surface that takes one: the IANA database's zone
/// and link names are kept as sent and computed with; abbreviations and offsets are refused.
@Suite("Time zones as iOS and Android report them, on every surface", .serialized)
struct TimeZoneTests {
    /// What `TimeZone.current.identifier` (iOS) and `TimeZone.getDefault().getID()` (Android) report:
    /// canonical names, and the old spellings of renamed zones that older systems (and Android's ICU)
    /// still report — both must register.
    static let reported = [
        "Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv", "Europe/Kiev", "America/Argentina/Buenos_Aires",
        "America/Buenos_Aires", "Asia/Ho_Chi_Minh", "Asia/Saigon", "Asia/Kathmandu", "Asia/Katmandu", "Asia/Yangon",
        "Asia/Rangoon", "Europe/Istanbul", "Asia/Istanbul", "America/Indiana/Indianapolis", "America/Indianapolis",
        "Atlantic/Faroe", "Atlantic/Faeroe", "Pacific/Kanton", "US/Eastern", "US/Pacific", "Canada/Newfoundland",
        "Universal", "Zulu", "UTC", "GMT", "Etc/UTC", "Etc/GMT-14", "CET", "EST5EDT", "Europe/Paris",
    ]
    /// Names `TimeZone(identifier:)` takes but no device reports as its zone.
    static let refused = [
        "PST", "IST", "GMT+5", "GMT-03:00", "UTC+8", "Factory", "SystemV/EST5", "asia/kolkata", "Mars/Olympus",
    ]

    @Test("The system's tzdata names are the rule: zones and links, not Factory or SystemV")
    func databaseNames() throws {
        let names = TimeZoneNames.parse(
            tzdataZI: """
                # version 2025b
                R E 1981 ma - Mar lastSu 1u 1 S
                Z Asia/Kolkata 5:53:28 - LMT 1854 Jun 28
                5:30 - IST
                Z Factory 0 - -00
                L Asia/Kolkata Asia/Calcutta
                L America/New_York US/Eastern
                """)
        #expect(names == ["Asia/Kolkata", "Factory", "Asia/Calcutta", "US/Eastern"])
        #expect(!TimeZoneNames.isPlace("Factory"))
        #expect(!TimeZoneNames.isPlace("SystemV/EST5"))
        for name in Self.reported {
            #expect(throws: Never.self, "\(name)") { try InstallationRules.validateTimeZone(name) }
        }
        for name in Self.refused {
            #expect(throws: HeraldError.self, "\(name)") { try InstallationRules.validateTimeZone(name) }
        }
    }

    @Test("Every reported zone registers, kept as sent, through the native API, AOVIS, ArgusAI and LeanCloud")
    func everySurface() async throws {
        var dialects = LeanCloudClient.dialects()
        dialects.argus = ["demo": ArgusAIConfiguration()]
        let harness = try await ServerHarness(dialects: dialects)
        let user = try await harness.userToken("ann")
        let clock = harness.clock
        try await harness.run { api in
            let leanCloud = LeanCloudClient(client: api.client, now: { clock.date })
            let argusID = try await api.argusRegister(ArgusAIHarness.registration(), as: user)
            for zone in Self.reported {
                // The native API: an installation and its quiet hours.
                let native = try await api.call(
                    .post, "/v1/installations",
                    body: #"{"platform":"android","token":"\#(Fixtures.fcmToken())","timezone":"\#(zone)"}"#)
                #expect(native.status == .created, "\(zone): \(String(describing: native.json))")
                let id = try #require(native.string("id"))
                #expect(try await api.call(.get, "/v1/installations/\(id)").string("timezone") == zone)
                let quiet = try await api.call(
                    .put, "/v1/installations/\(id)/preferences",
                    body: #"{"quiet_hours":{"start":"22:00","end":"07:00","timezone":"\#(zone)"}}"#)
                #expect(quiet["quiet_hours.timezone"] == .string(zone), "\(zone)")

                // AOVIS's register.
                let aovis = try await api.aovisRegister(
                    #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","timezone":"\#(zone)"}"#, bearer: user)
                #expect(aovis.status == .ok, "\(zone): \(String(describing: aovis.json))")
                let aovisID = try #require(aovis.string("push_token_id"))
                #expect(try await api.call(.get, "/v1/installations/\(aovisID)").string("timezone") == zone)

                // ArgusAI's preferences.
                let argus = try await api.call(
                    .put, "/api/v1/push/mobile/preferences", bearer: user,
                    body: #"{"device_id":"\#(ArgusAIHarness.deviceID)","timezone":"\#(zone)"}"#)
                #expect(argus.status == .ok, "\(zone): \(String(describing: argus.json))")
                #expect(try await api.call(.get, "/v1/installations/\(argusID)").string("timezone") == zone)

                // LeanCloud's installation save, as the guide writes it.
                let saved = try await leanCloud.call(
                    .post, "/1.1/installations", auth: .appKey,
                    body: #"{"deviceType":"android","installationId":"\#(Fixtures.fcmToken())","timeZone":"\#(zone)"}"#
                )
                #expect(saved.status == .created, "\(zone): \(String(describing: saved.json))")
                let objectID = try #require(saved.string("objectId"))
                let fetched = try await leanCloud.call(.get, "/1.1/installations/\(objectID)")
                #expect(fetched.string("timeZone") == zone)
            }
            for zone in Self.refused {
                let native = try await api.call(
                    .post, "/v1/installations",
                    body: #"{"platform":"android","token":"\#(Fixtures.fcmToken())","timezone":"\#(zone)"}"#)
                #expect(native.status == .badRequest, "\(zone)")
                #expect(native.errorCode == "invalid_timezone", "\(zone)")
                #expect(native.errorField == "timezone", "\(zone)")
                let aovis = try await api.aovisRegister(
                    #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","timezone":"\#(zone)"}"#, bearer: user)
                #expect(aovis.status == .badRequest, "\(zone)")
                #expect(aovis.json == .object(["error": .string("invalid_body")]), "\(zone)")
                let argus = try await api.call(
                    .put, "/api/v1/push/mobile/preferences", bearer: user,
                    body: #"{"device_id":"\#(ArgusAIHarness.deviceID)","timezone":"\#(zone)"}"#)
                #expect(argus.status == .badRequest, "\(zone)")
                #expect(argus.errorCode == "invalid_timezone", "\(zone)")
                let saved = try await leanCloud.call(
                    .post, "/1.1/installations", auth: .appKey,
                    body: #"{"deviceType":"android","installationId":"\#(Fixtures.fcmToken())","timeZone":"\#(zone)"}"#
                )
                #expect(saved.status == .badRequest, "\(zone)")
                #expect(saved.leanCloudCode == 111, "\(zone)")
            }
        }
    }

    @Test("A device-local push time and quiet hours are computed in a backward-link zone")
    func backwardLinksCompute() async throws {
        let harness = try await EngineHarness()
        let calcutta = Fixtures.apnsToken()
        let eastern = Fixtures.apnsToken()
        let quiet = Fixtures.apnsToken()
        // 2026-07-01 09:00 is 03:30Z in Asia/Calcutta (UTC+5:30) and 13:00Z in US/Eastern (UTC-4, summer).
        harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-06-30T18:00:00Z")!)
        try await harness.run { api in
            _ = try await api.register(#"{"platform":"ios","token":"\#(calcutta)","timezone":"Asia/Calcutta"}"#)
            _ = try await api.register(#"{"platform":"ios","token":"\#(eastern)","timezone":"US/Eastern"}"#)
            let id = try await api.send(
                #"{"target":{"all":true},"payload":{"title":"Good morning"},"push_time":"2026-07-01T09:00:00"}"#)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-01T03:29:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-01T03:30:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [calcutta])
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-01T13:00:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [calcutta, eastern])
            #expect(try await api.notification(id).string("status") == "done")

            // Quiet hours 22:00-07:00 deferred, in the device's Asia/Calcutta: at 23:00 IST (17:30Z) the push
            // waits until 07:00 IST (01:30Z the next day).
            let quietID = try await api.register(
                #"{"platform":"ios","token":"\#(quiet)","timezone":"Asia/Calcutta"}"#)
            let stored = try await api.call(
                .put, "/v1/installations/\(quietID)/preferences",
                body: #"{"quiet_hours":{"start":"22:00","end":"07:00"},"quiet_hours_mode":"defer"}"#)
            #expect(stored.status == .ok)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-01T17:30:00Z")!)
            _ = try await api.send(#"{"target":{"installation_ids":["\#(quietID)"]},"payload":{"title":"Later"}}"#)
            try await harness.drain()
            #expect(harness.apns.requests.count == 2)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-02T01:29:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.count == 2)
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2026-07-02T01:30:00Z")!)
            try await harness.drain()
            #expect(harness.apns.requests.map(\.token) == [calcutta, eastern, quiet])
        }
    }
}
