import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldAOVIS
@testable import HeraldAPI

/// `POST /api/internal/push/register` and the camera-management routes, driven with the AOVIS
/// guide's own requests and checked against its documented bodies.
@Suite("AOVIS dialect: register and device routes", .serialized)
struct AOVISRegisterTests {
    static let invalidSession = JSONValue.object(["error": .string("invalid_session")])
    static let invalidBody = JSONValue.object(["error": .string("invalid_body")])
    static let internalError = JSONValue.object(["error": .string("internal_error")])

    @Test("The guide's iOS and Android examples register, with its defaults; a repeat returns the same id")
    func examples() async throws {
        let harness = try await ServerHarness()
        let apnsToken = Fixtures.apnsToken()
        let fcmToken = Fixtures.fcmToken()
        let user = try await harness.userToken("user-1")
        try await harness.run { api in
            // §4 iOS example (a real APNs token in place of <apns-device-token>).
            let ios = try await api.aovisRegister(
                #"{"platform": "ios", "token": "\#(apnsToken)", "locale": "en", "timezone": "America/New_York"}"#,
                bearer: user)
            #expect(ios.status == .ok)
            let iosID = try #require(ios.string("push_token_id"))
            #expect(ios.json == .object(["success": .bool(true), "push_token_id": .string(iosID)]))
            let installation = try await api.call(.get, "/v1/installations/\(iosID)")
            #expect(installation.string("platform") == "ios")
            #expect(installation.string("service") == "apns")
            #expect(installation.string("environment") == "production")
            #expect(installation.string("user_id") == "user-1")
            #expect(installation.string("token") == apnsToken)
            #expect(installation["device_id"] == .null)

            // §4 Android example.
            let android = try await api.aovisRegister(
                #"{"platform": "android", "token": "\#(fcmToken)", "locale": "en", "timezone": "America/Los_Angeles"}"#,
                bearer: user)
            #expect(android.status == .ok)
            let androidID = try #require(android.string("push_token_id"))
            #expect(android.json == .object(["success": .bool(true), "push_token_id": .string(androidID)]))
            let stored = try await api.call(.get, "/v1/installations/\(androidID)")
            #expect(stored.string("service") == "fcm")
            #expect(stored.string("timezone") == "America/Los_Angeles")

            // Upsert on (user, platform, token): the same id again; omitted fields take the defaults.
            let again = try await api.aovisRegister(#"{"platform":"android","token":"\#(fcmToken)"}"#, bearer: user)
            #expect(again.json == .object(["success": .bool(true), "push_token_id": .string(androidID)]))
            let defaults = try await api.call(.get, "/v1/installations/\(androidID)")
            #expect(defaults.string("locale") == "en")
            #expect(defaults.string("timezone") == "America/New_York")
            #expect(try await api.call(.get, "/v1/installations?user_id=user-1").items.count == 2)

            // The same token presented by another user moves to that user, keeping its id.
            let other = try await harness.userToken("user-2")
            let moved = try await api.aovisRegister(#"{"platform":"ios","token":"\#(apnsToken)"}"#, bearer: other)
            #expect(moved.json == .object(["success": .bool(true), "push_token_id": .string(iosID)]))
            #expect(try await api.call(.get, "/v1/installations/\(iosID)").string("user_id") == "user-2")
        }
    }

    @Test("Locales and time zones as iOS and Android report them register, kept as BCP 47 tags (000: locale optional)")
    func phoneLocales() async throws {
        let harness = try await ServerHarness()
        let user = try await harness.userToken("user-1")
        let reported: [(platform: String, locale: String, timezone: String, tag: String)] = [
            ("ios", "en_US@rg=gbzzzz", "Europe/London", "en-US"), ("ios", "en_US_POSIX", "Etc/UTC", "en-US-posix"),
            ("ios", "zh-Hans_CN", "Asia/Shanghai", "zh-Hans-CN"), ("ios", "es_419", "America/Mexico_City", "es-419"),
            ("android", "zh_CN_#Hans", "Asia/Shanghai", "zh-Hans-CN"), ("android", "de_DE", "Etc/GMT-1", "de-DE"),
            ("android", "sr_RS_#Latn", "Europe/Belgrade", "sr-Latn-RS"),
        ]
        try await harness.run { api in
            for phone in reported {
                let token = phone.platform == "ios" ? Fixtures.apnsToken() : Fixtures.fcmToken()
                let answer = try await api.aovisRegister(
                    #"{"platform":"\#(phone.platform)","token":"\#(token)","locale":"\#(phone.locale)","timezone":"\#(phone.timezone)"}"#,
                    bearer: user)
                #expect(answer.status == .ok, "\(phone.locale): \(String(describing: answer.json))")
                let id = try #require(answer.string("push_token_id"))
                let stored = try await api.call(.get, "/v1/installations/\(id)")
                #expect(stored.string("locale") == phone.tag)
                #expect(stored.string("timezone") == phone.timezone)
            }
        }
    }

    @Test("iOS registrations take the APNs environment from app.<id>.aovis.apns_environment")
    func apnsEnvironment() async throws {
        let harness = try await ServerHarness()
        var configuration = harness.configuration
        configuration.dialects.aovis["demo"] = AOVISConfiguration(apnsEnvironment: .sandbox)
        let clock = harness.clock
        let router = try HeraldApplication.router(
            configuration: configuration, store: harness.store, apps: harness.apps, dispatcher: harness.dispatcher,
            now: { clock.date }
        ).router
        let user = try await harness.userToken("user-1")
        try await Application(router: router).test(.router) { client in
            let api = API(client: client)
            let response = try await api.aovisRegister(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#, bearer: user)
            let id = try #require(response.string("push_token_id"))
            #expect(try await api.call(.get, "/v1/installations/\(id)").string("environment") == "sandbox")
        }
    }

    @Test("Every error row of the guide: 401 invalid_session, 400 invalid_body; nothing is stored")
    func errors() async throws {
        let harness = try await ServerHarness()
        let user = try await harness.userToken("user-1")
        let foreign = try await UserTokenIssuer.hs256(secret: "another-secret-that-herald-does-not-know-0123")
            .token(subject: "user-1", issuer: ServerHarness.issuer, audience: ServerHarness.audience)
        let expired = try await harness.users.token(
            subject: "user-1", now: harness.clock.date.addingTimeInterval(-7200), expiresIn: 600,
            issuer: ServerHarness.issuer, audience: ServerHarness.audience)
        let valid = #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#
        try await harness.run { api in
            for bearer in [nil, "", "not-a-jwt", foreign, expired, ServerHarness.serverKey, ServerHarness.clientKey] {
                let response = try await api.aovisRegister(valid, bearer: bearer)
                #expect(response.status == .unauthorized, "\(String(describing: bearer?.prefix(12)))")
                #expect(response.json == Self.invalidSession)
            }
            let bodies = [
                #"{"platform":"web","token":"abc"}"#,
                #"{"platform":"IOS","token":"\#(Fixtures.apnsToken())"}"#,
                #"{"token":"\#(Fixtures.fcmToken())"}"#,
                #"{"platform":"android"}"#,
                #"{"platform":"android","token":""}"#,
                #"{"platform":"android","token":"\#(String(repeating: "a", count: 2049))"}"#,
                #"{"platform":"android","token":42}"#,
                #"{"platform":"ios","token":"not-hex-\#(String(repeating: "z", count: 60))"}"#,
                #"{"platform":"android","token":"\#(Fixtures.fcmToken())","timezone":"Mars/Olympus"}"#,
                #"{"platform":"android","token":"\#(Fixtures.fcmToken())","locale":"not a locale"}"#,
                #"{"platform":"android","token":"\#(Fixtures.fcmToken())","deviceId":"no-such-camera"}"#,
                #"{"platform":"android","token":"#,
                #"["platform","android"]"#,
                "",
            ]
            for body in bodies {
                let response = try await api.aovisRegister(body, bearer: user)
                #expect(response.status == .badRequest, "\(body.prefix(60))")
                #expect(response.json == Self.invalidBody, "\(body.prefix(60))")
            }
            let withoutType = try await api.call(
                .post, "/api/internal/push/register", bearer: user, body: valid, contentType: nil)
            #expect(withoutType.json == Self.invalidBody)
            #expect(try await api.call(.get, "/v1/installations").items.isEmpty)

            // The guide's upper bound itself is accepted.
            let longest = try await api.aovisRegister(
                #"{"platform":"android","token":"\#(String(repeating: "a", count: 2048))"}"#, bearer: user)
            #expect(longest.status == .ok)
        }
    }

    @Test("iOS tokens are not cut: 不要截断 token(后端接受最大 2048 字符); odd, non-hex and longer are refused")
    func longAPNsTokens() async throws {
        let harness = try await ServerHarness()
        let user = try await harness.userToken("user-1")
        try await harness.run { api in
            for length in [202, 512, 2048] {
                let token = String(repeating: "0a", count: length / 2)
                let response = try await api.aovisRegister(#"{"platform":"ios","token":"\#(token)"}"#, bearer: user)
                #expect(response.status == .ok, "\(length)")
                let id = try #require(response.string("push_token_id"))
                #expect(try await api.call(.get, "/v1/installations/\(id)").string("token") == token)
            }
            for token in [
                String(repeating: "a", count: 2050), String(repeating: "a", count: 2047),
                String(repeating: "g", count: 64),
            ] {
                let response = try await api.aovisRegister(#"{"platform":"ios","token":"\#(token)"}"#, bearer: user)
                #expect(response.status == .badRequest)
                #expect(response.json == Self.invalidBody)
            }
            // The native API takes the same tokens.
            let native = try await api.call(
                .post, "/v1/installations",
                body: #"{"platform":"ios","token":"\#(String(repeating: "c", count: 1000))"}"#)
            #expect(native.status == .created)
            let tooLong = try await api.call(
                .post, "/v1/installations",
                body: #"{"platform":"ios","token":"\#(String(repeating: "c", count: 2050))"}"#)
            #expect(tooLong.errorCode == "invalid_token")
        }
    }

    @Test("A failing store answers 500 internal_error")
    func internalError() async throws {
        let harness = try await ServerHarness()
        let user = try await harness.userToken("user-1")
        // The real store, made to fail: every insert into installations aborts.
        try harness.execute(
            """
            CREATE TRIGGER refuse_installations BEFORE INSERT ON installations
            BEGIN SELECT RAISE(ABORT, 'disk full'); END
            """, [])
        try await harness.run { api in
            let response = try await api.aovisRegister(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())"}"#, bearer: user)
            #expect(response.status == .internalServerError)
            #expect(response.json == Self.internalError)
        }
    }

    @Test("deviceId must be a camera the user owns ACTIVE, by id or alias")
    func ownership() async throws {
        let harness = try await ServerHarness()
        let ann = try await harness.userToken("ann")
        let bob = try await harness.userToken("bob")
        try await harness.run { api in
            let created = try await api.call(
                .post, "/api/internal/devices",
                body: #"{"id":"cam-front","alias":"aovis-n4k-3f9a2c","name":"Front door"}"#)
            #expect(created.status == .created)
            #expect(created.string("alias") == "aovis-n4k-3f9a2c")
            let granted = try await api.call(
                .put, "/api/internal/devices/cam-front/owners/ann", body: #"{"status":"ACTIVE"}"#)
            #expect(granted.status == .ok)
            #expect(granted.string("status") == "ACTIVE")

            let token = Fixtures.apnsToken()
            for reference in ["aovis-n4k-3f9a2c", "cam-front"] {
                let response = try await api.aovisRegister(
                    #"{"platform":"ios","token":"\#(token)","deviceId":"\#(reference)"}"#, bearer: ann)
                #expect(response.status == .ok, "\(reference)")
                let id = try #require(response.string("push_token_id"))
                let installation = try await api.call(.get, "/v1/installations/\(id)")
                #expect(installation["attributes.source_device_id"] == .string("cam-front"))
                #expect(installation["device_id"] == .null)
            }

            // Another user's camera, and a REVOKED ownership, are refused and change nothing.
            let bobToken = Fixtures.apnsToken()
            let bobs = #"{"platform":"ios","token":"\#(bobToken)","deviceId":"aovis-n4k-3f9a2c"}"#
            #expect(try await api.aovisRegister(bobs, bearer: bob).json == Self.invalidBody)
            let revoked = try await api.call(
                .put, "/api/internal/devices/aovis-n4k-3f9a2c/owners/bob", body: #"{"status":"REVOKED"}"#)
            #expect(revoked.string("status") == "REVOKED")
            #expect(try await api.aovisRegister(bobs, bearer: bob).json == Self.invalidBody)
            #expect(try await api.call(.get, "/v1/installations?user_id=bob").items.isEmpty)
            _ = try await api.call(.put, "/api/internal/devices/cam-front/owners/ann", body: #"{"status":"REVOKED"}"#)
            let annAgain = #"{"platform":"ios","token":"\#(token)","deviceId":"cam-front"}"#
            #expect(try await api.aovisRegister(annAgain, bearer: ann).json == Self.invalidBody)

            let device = try await api.call(.get, "/api/internal/devices/aovis-n4k-3f9a2c")
            #expect(device.string("id") == "cam-front")
            #expect(device.string("name") == "Front door")
            let owners = device["owners"]?.arrayValue?.compactMap { $0.objectValue?["userId"] }
            #expect(owners == [.string("ann"), .string("bob")])
        }
    }

    @Test("The backend routes take the server key and refuse bad input in the native shape")
    func backendRoutes() async throws {
        let harness = try await ServerHarness()
        let user = try await harness.userToken("ann")
        try await harness.run { api in
            let generated = try await api.call(.post, "/api/internal/devices", body: #"{"name":"Garage"}"#)
            #expect(generated.status == .created)
            #expect(generated.string("id")?.count == 36)
            #expect(generated["alias"] == .null)
            _ = try await api.call(.post, "/api/internal/devices", body: #"{"id":"cam-1","alias":"aovis-n4k-000001"}"#)
            for body in [#"{"id":"cam-1"}"#, #"{"alias":"aovis-n4k-000001"}"#, #"{"id":"aovis-n4k-000001"}"#] {
                let clash = try await api.call(.post, "/api/internal/devices", body: body)
                #expect(clash.status == .conflict, "\(body)")
                #expect(clash.errorCode == "device_exists")
            }
            let spaced = try await api.call(.post, "/api/internal/devices", body: #"{"id":"front door"}"#)
            #expect(spaced.errorField == "id")
            #expect(
                try await api.call(.post, "/api/internal/devices", body: #"{"colour":"red"}"#).errorCode
                    == "unknown_field")

            for bearer in [ServerHarness.clientKey, user] {
                let refused = try await api.call(.post, "/api/internal/devices", bearer: bearer, body: "{}")
                #expect(refused.status == .forbidden)
                #expect(try await api.call(.get, "/api/internal/events/x", bearer: bearer).status == .forbidden)
            }
            let anonymous = try await api.call(.post, "/api/internal/events", bearer: nil, body: "{}")
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.errorCode == "unauthorized")

            let badStatus = try await api.call(
                .put, "/api/internal/devices/cam-1/owners/ann", body: #"{"status":"active"}"#)
            #expect(badStatus.errorField == "status")
            let noDevice = try await api.call(
                .put, "/api/internal/devices/cam-9/owners/ann", body: #"{"status":"ACTIVE"}"#)
            #expect(noDevice.status == .notFound)
            #expect(try await api.call(.get, "/api/internal/devices/cam-9").status == .notFound)

            let unknown = try await api.call(
                .post, "/api/internal/events",
                body: #"{"eventId":"e1","deviceId":"cam-9","classifyEventType":"pet","classifySummaryShort":"A cat"}"#)
            #expect(unknown.errorCode == "unknown_device")
            let badType = try await api.call(
                .post, "/api/internal/events",
                body: #"{"eventId":"e1","deviceId":"cam-1","classifyEventType":"dog","classifySummaryShort":"A dog"}"#)
            #expect(badType.errorField == "classifyEventType")
            let badTime = try await api.call(
                .post, "/api/internal/events",
                body: #"""
                    {"eventId":"e1","deviceId":"cam-1","classifyEventType":"pet","classifySummaryShort":"A dog",
                     "occurredAt":"yesterday"}
                    """#)
            #expect(badTime.errorCode == "invalid_timestamp")
            let missing = try await api.call(
                .post, "/api/internal/events", body: #"{"eventId":"e1","deviceId":"cam-1","classifyEventType":"pet"}"#)
            #expect(missing.errorField == "classifySummaryShort")
            #expect(try await api.call(.get, "/api/internal/events/nothing").status == .notFound)
        }
    }
}
