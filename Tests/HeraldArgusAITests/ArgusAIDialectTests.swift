import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@testable import HeraldAPI
@testable import HeraldArgusAI

@Suite("ArgusAI dialect: registration, tokens, preferences and devices through HTTP", .serialized)
struct ArgusAIDialectTests {
    static let registerPath = "/api/v1/push/mobile/register"
    static let tokenPath = "/api/v1/push/mobile/tokens/\(ArgusAIHarness.deviceID)"
    static let preferencesPath = "/api/v1/push/mobile/preferences"

    @Test("Register, re-register (upsert), update the token and unregister, with the document's bodies")
    func tokenLifecycle() async throws {
        let harness = try await ArgusAIHarness()
        harness.server.clock.set(ISO8601DateFormatter().date(from: "2025-12-25T10:30:00Z")!)
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            let registered = try await api.call(
                .post, Self.registerPath, bearer: ann, body: ArgusAIHarness.registration())
            #expect(registered.status == .created)
            let id = try #require(registered.string("id"))
            #expect(
                registered.json
                    == (try JSONValue.literal(
                        """
                        {
                          "id": "\(id)",
                          "device_id": "550e8400-e29b-41d4-a716-446655440000",
                          "platform": "ios",
                          "push_service": "apns",
                          "created_at": "2025-12-25T10:30:00Z",
                          "preferences_created": true
                        }
                        """)))
            let native = try await api.call(.get, "/v1/installations/\(id)")
            #expect(native.string("user_id") == "ann")
            #expect(native.string("device_model") == "iPhone15,3")
            #expect(native.string("os_version") == "iOS 18.0")
            #expect(native.string("app_version") == "1.0.0")
            #expect(native.string("bundle_id") == "com.argusai.app")
            #expect(native.string("environment") == "production")
            #expect(native.string("token") == ArgusAIHarness.deviceToken)
            #expect(native["channels"] == .array([.string("argusai")]))

            // The same (device_id, push_service) again is the same device: updated, preferences kept.
            harness.server.clock.advance(by: .seconds(60))
            let sandboxToken = Fixtures.apnsToken()
            let again = try await api.call(
                .post, Self.registerPath, bearer: ann,
                body: ArgusAIHarness.registration(token: sandboxToken).replacingOccurrences(
                    of: #""production""#, with: #""sandbox""#))
            #expect(again.status == .created)
            #expect(again.string("id") == id)
            #expect(again.string("created_at") == "2025-12-25T10:30:00Z")
            #expect(again["preferences_created"] == .bool(false))
            #expect(try await api.call(.get, "/v1/installations/\(id)").string("environment") == "sandbox")

            // A failing, deactivated token is replaced: valid again, failures reset.
            try harness.server.execute(
                "UPDATE installations SET failure_count = 3, valid = 0, invalidated_at = 1 WHERE id = ?", [id])
            harness.server.clock.set(ISO8601DateFormatter().date(from: "2025-12-25T14:00:00Z")!)
            let annLater = try await harness.server.userToken("ann")
            let newToken = Fixtures.apnsToken()
            let updated = try await api.call(
                .put, Self.tokenPath, bearer: annLater, body: #"{"device_token": "\#(newToken)"}"#)
            #expect(updated.status == .ok)
            #expect(
                updated.json
                    == (try JSONValue.literal(
                        #"{"id": "\#(id)", "device_token_updated": true, "updated_at": "2025-12-25T14:00:00Z"}"#)))
            let devices = try await api.call(.get, "/api/v1/devices", bearer: annLater)
            #expect(devices["devices.0.failure_count"] == .number(0))
            #expect(devices["devices.0.is_active"] == .bool(true))
            #expect(try await api.call(.get, "/v1/installations/\(id)").string("token") == newToken)
            let same = try await api.call(
                .put, Self.tokenPath, bearer: annLater, body: #"{"device_token": "\#(newToken)"}"#)
            // The document's answer: true whenever the update succeeded, the same token included (002).
            #expect(same.status == .ok)
            #expect(same["device_token_updated"] == .bool(true))

            let deleted = try await api.call(.delete, Self.tokenPath, bearer: annLater)
            #expect(deleted.status == .noContent)
            #expect(try await api.call(.get, "/v1/installations/\(id)").status == .notFound)
            #expect(try await api.call(.delete, Self.tokenPath, bearer: annLater).status == .notFound)
            #expect(
                try await api.call(.put, Self.tokenPath, bearer: annLater, body: #"{"device_token": "\#(newToken)"}"#)
                    .status == .notFound)
        }
    }

    @Test("Preferences: defaults on registration, the document's request and response, mapped to native ones")
    func preferences() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            let id = try await api.argusRegister(ArgusAIHarness.registration(), as: ann)
            let read = try await api.call(
                .post, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "550e8400-e29b-41d4-a716-446655440000"}"#)
            #expect(read.status == .ok)
            #expect(
                read.json
                    == (try JSONValue.literal(
                        """
                        {"id": "\(id)", "token_id": "\(id)", "enabled_cameras": null, "enabled_object_types": null,
                         "quiet_hours_enabled": false, "quiet_hours_start": "22:00", "quiet_hours_end": "07:00",
                         "timezone": "UTC", "sound_enabled": true}
                        """)))

            // The cross-platform section's request.
            let put = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body: """
                    {
                      "device_id": "550e8400-e29b-41d4-a716-446655440000",
                      "enabled_cameras": ["cam-123", "cam-456"],
                      "enabled_object_types": ["person", "vehicle"],
                      "quiet_hours_enabled": true,
                      "quiet_hours_start": "22:00",
                      "quiet_hours_end": "07:00",
                      "timezone": "America/New_York",
                      "sound_enabled": true
                    }
                    """)
            #expect(put.status == .ok)
            #expect(put["enabled_cameras"] == .array([.string("cam-123"), .string("cam-456")]))
            // All cameras again: the API section's response, field by field.
            let all = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "550e8400-e29b-41d4-a716-446655440000", "enabled_cameras": null}"#)
            #expect(all.status == .ok)
            let documented = try JSONValue.literal(
                """
                {
                  "id": "\(id)",
                  "token_id": "\(id)",
                  "enabled_cameras": null,
                  "enabled_object_types": ["person", "vehicle"],
                  "quiet_hours_enabled": true,
                  "quiet_hours_start": "22:00",
                  "quiet_hours_end": "07:00",
                  "timezone": "America/New_York",
                  "sound_enabled": true
                }
                """)
            #expect(all.json == documented)
            let reread = try await api.call(
                .post, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "550e8400-e29b-41d4-a716-446655440000"}"#)
            #expect(reread.json == documented)

            // The engine's own preferences and the device's zone hold the same choices.
            let native = try await api.call(.get, "/v1/installations/\(id)/preferences")
            #expect(
                native.json
                    == (try JSONValue.literal(
                        """
                        {"enabled_sources": null, "enabled_categories": ["person", "vehicle"],
                         "quiet_hours": {"start": "22:00", "end": "07:00", "timezone": null, "enabled": true},
                         "quiet_hours_mode": "skip", "sound_enabled": true, "muted_until": null}
                        """)))
            #expect(try await api.call(.get, "/v1/installations/\(id)").string("timezone") == "America/New_York")

            // Quiet hours off: kept in the engine, switched off, and answered as stored (002); sound off.
            let off = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body:
                    #"{"device_id": "\#(ArgusAIHarness.deviceID)", "quiet_hours_enabled": false, "sound_enabled": false}"#
            )
            #expect(off["quiet_hours_enabled"] == .bool(false))
            #expect(off["quiet_hours_start"] == .string("22:00"))
            #expect(off["quiet_hours_end"] == .string("07:00"))
            #expect(off["sound_enabled"] == .bool(false))
            #expect(off["enabled_object_types"] == .array([.string("person"), .string("vehicle")]))
            let nativeOff = try await api.call(.get, "/v1/installations/\(id)/preferences")
            #expect(
                nativeOff["quiet_hours"]
                    == (try JSONValue.literal(
                        #"{"start": "22:00", "end": "07:00", "timezone": null, "enabled": false}"#)))
            #expect(nativeOff["sound_enabled"] == .bool(false))

            // Bad values are refused with the document's field names, and change nothing.
            let cases: [(String, String, String)] = [
                (
                    #""quiet_hours_enabled": true, "quiet_hours_start": "25:00", "quiet_hours_end": "07:00""#,
                    "invalid_time", "quiet_hours_start"
                ),
                (#""timezone": "Mars/Olympus""#, "invalid_timezone", "timezone"),
                (#""enabled_cameras": "cam-1""#, "invalid_type", "enabled_cameras"),
                (#""enabled_object_types": [""]"#, "invalid_length", "enabled_object_types[0]"),
                (#""sound_enabled": "yes""#, "invalid_type", "sound_enabled"),
            ]
            for (members, code, field) in cases {
                let response = try await api.call(
                    .put, Self.preferencesPath, bearer: ann,
                    body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", \#(members)}"#)
                #expect(response.status == .badRequest, "\(members)")
                #expect(response.errorCode == code, "\(members)")
                #expect(response.errorField == field, "\(members)")
            }
            #expect(try await api.call(.get, "/v1/installations/\(id)/preferences").json == nativeOff.json)
            // POST with a bad member changes nothing either.
            let postWithBadField = try await api.call(
                .post, Self.preferencesPath, bearer: ann,
                body:
                    #"{"device_id": "\#(ArgusAIHarness.deviceID)", "quiet_hours_start": "25:00", "quiet_hours_enabled": true}"#
            )
            #expect(postWithBadField.status == .badRequest)
            #expect(postWithBadField.errorField == "quiet_hours_start")
            #expect(try await api.call(.get, "/v1/installations/\(id)/preferences").json == nativeOff.json)

            // Times changed while off are kept; `quiet_hours_enabled: true` alone switches them back on.
            let moved = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", "quiet_hours_start": "23:30"}"#)
            #expect(moved["quiet_hours_enabled"] == .bool(false))
            #expect(moved["quiet_hours_start"] == .string("23:30"))
            let on = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", "quiet_hours_enabled": true}"#)
            #expect(on.status == .ok)
            #expect(on["quiet_hours_enabled"] == .bool(true))
            #expect(on["quiet_hours_start"] == .string("23:30"))
            #expect(on["quiet_hours_end"] == .string("07:00"))
            #expect(
                try await api.call(.get, "/v1/installations/\(id)/preferences")["quiet_hours"]
                    == (try JSONValue.literal(#"{"start": "23:30", "end": "07:00", "timezone": null, "enabled": true}"#))
            )
        }
    }

    @Test("Quiet hours switched on by a device that never set them take 22:00 to 07:00 (002's example times)")
    func quietHoursDefaults() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            let id = try await api.argusRegister(ArgusAIHarness.registration(), as: ann)
            let on = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", "quiet_hours_enabled": true}"#)
            #expect(on.status == .ok)
            #expect(on["quiet_hours_enabled"] == .bool(true))
            #expect(on["quiet_hours_start"] == .string("22:00"))
            #expect(on["quiet_hours_end"] == .string("07:00"))
            #expect(
                try await api.call(.get, "/v1/installations/\(id)/preferences")["quiet_hours"]
                    == (try JSONValue.literal(#"{"start": "22:00", "end": "07:00", "timezone": null, "enabled": true}"#))
            )
        }
    }

    @Test("POST with the Cross-Platform Preference API's request format creates or updates the preferences")
    func postFullPreferences() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            let id = try await api.argusRegister(ArgusAIHarness.registration(), as: ann)
            // Straight after registration, before any read: the document's request body as it is.
            let posted = try await api.call(
                .post, Self.preferencesPath, bearer: ann,
                body: """
                    {
                      "device_id": "550e8400-e29b-41d4-a716-446655440000",
                      "enabled_cameras": ["cam-123", "cam-456"],
                      "enabled_object_types": ["person", "vehicle"],
                      "quiet_hours_enabled": true,
                      "quiet_hours_start": "22:00",
                      "quiet_hours_end": "07:00",
                      "timezone": "America/New_York",
                      "sound_enabled": true
                    }
                    """)
            #expect(posted.status == .ok)
            let expected = try JSONValue.literal(
                """
                {"id": "\(id)", "token_id": "\(id)", "enabled_cameras": ["cam-123", "cam-456"],
                 "enabled_object_types": ["person", "vehicle"], "quiet_hours_enabled": true,
                 "quiet_hours_start": "22:00", "quiet_hours_end": "07:00", "timezone": "America/New_York",
                 "sound_enabled": true}
                """)
            #expect(posted.json == expected)
            // POST {device_id} alone still reads them.
            let read = try await api.call(
                .post, Self.preferencesPath, bearer: ann, body: #"{"device_id": "\#(ArgusAIHarness.deviceID)"}"#)
            #expect(read.json == expected)
            let native = try await api.call(.get, "/v1/installations/\(id)/preferences")
            #expect(native["enabled_sources"] == .array([.string("cam-123"), .string("cam-456")]))
            // A second POST updates only what it names.
            let muted = try await api.call(
                .post, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", "sound_enabled": false}"#)
            #expect(muted["sound_enabled"] == .bool(false))
            #expect(muted["enabled_object_types"] == .array([.string("person"), .string("vehicle")]))
            // Another user's device is not theirs to change.
            let bob = try await harness.server.userToken("bob")
            let foreign = try await api.call(
                .post, Self.preferencesPath, bearer: bob,
                body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", "sound_enabled": true}"#)
            #expect(foreign.status == .notFound)
            #expect(try await api.call(.get, "/v1/installations/\(id)/preferences")["sound_enabled"] == .bool(false))
        }
    }

    @Test("Devices: list, rename and revoke the user's own")
    func devices() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            let phone = try await api.argusRegister(ArgusAIHarness.registration(), as: ann)
            // Ids are time-ordered: a later registration lists after.
            harness.server.clock.advance(by: .seconds(1))
            let tablet = try await api.argusRegister(
                ArgusAIHarness.registration(
                    deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: Fixtures.fcmToken(), platform: "android",
                    service: "fcm"), as: ann)
            let list = try await api.call(.get, "/api/v1/devices", bearer: ann)
            #expect(list.status == .ok)
            #expect(list["devices.0.id"] == .string(phone))
            #expect(list["devices.1.id"] == .string(tablet))
            #expect(list["devices.1.platform"] == .string("android"))
            #expect(list["devices.1.push_service"] == .string("fcm"))
            #expect(list["devices.0.token_type"] == .string("production"))
            #expect(list["devices.0.name"] == .null)
            #expect(list["devices.0.device_token"] == nil)

            let renamed = try await api.call(
                .patch, "/api/v1/devices/\(phone)", bearer: ann, body: #"{"name": "Kitchen iPhone"}"#)
            #expect(renamed.status == .ok)
            #expect(renamed["name"] == .string("Kitchen iPhone"))
            #expect(
                try await api.call(.get, "/api/v1/devices", bearer: ann)["devices.0.name"] == .string("Kitchen iPhone"))
            let empty = try await api.call(.patch, "/api/v1/devices/\(phone)", bearer: ann, body: #"{"name": ""}"#)
            #expect(empty.status == .badRequest)
            #expect(empty.errorField == "name")

            #expect(try await api.call(.delete, "/api/v1/devices/\(tablet)", bearer: ann).status == .noContent)
            let after = try await api.call(.get, "/api/v1/devices", bearer: ann)
            #expect(after["devices.0.id"] == .string(phone))
            #expect(after["devices.1"] == nil)
            #expect(try await api.call(.get, "/v1/installations/\(tablet)").status == .notFound)
        }
    }

    @Test("A user cannot see, rename, revoke, update or read another user's device: 404")
    func ownership() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        let bob = try await harness.server.userToken("bob")
        try await harness.run { api in
            let id = try await api.argusRegister(ArgusAIHarness.registration(), as: ann)
            let before = try await api.call(.get, "/v1/installations/\(id)")
            #expect(try await api.call(.get, "/api/v1/devices", bearer: bob)["devices"] == .array([]))
            let attempts: [(HTTPRequest.Method, String, String?)] = [
                (.patch, "/api/v1/devices/\(id)", #"{"name": "Mine now"}"#),
                (.delete, "/api/v1/devices/\(id)", nil),
                (.put, Self.tokenPath, #"{"device_token": "\#(Fixtures.apnsToken())"}"#),
                (.delete, Self.tokenPath, nil),
                (.post, Self.preferencesPath, #"{"device_id": "\#(ArgusAIHarness.deviceID)"}"#),
                (.put, Self.preferencesPath, #"{"device_id": "\#(ArgusAIHarness.deviceID)", "sound_enabled": false}"#),
            ]
            for (method, path, body) in attempts {
                let response = try await api.call(method, path, bearer: bob, body: body)
                #expect(response.status == .notFound, "\(method) \(path)")
                #expect(response.errorCode == "not_found", "\(method) \(path)")
            }
            #expect(try await api.call(.get, "/v1/installations/\(id)").json == before.json)
            #expect(try await api.call(.get, "/v1/installations/\(id)/preferences")["sound_enabled"] == .bool(true))

            // Keys are not users: the device routes take a user token.
            let server = try await api.call(.get, "/api/v1/devices")
            #expect(server.status == .forbidden)
            #expect(try await api.call(.get, "/api/v1/devices", bearer: nil).status == .unauthorized)
        }
    }

    @Test("A device registered again by another user moves to them, with fresh default preferences")
    func accountSwitch() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        let bob = try await harness.server.userToken("bob")
        try await harness.run { api in
            let id = try await api.argusRegister(ArgusAIHarness.registration(), as: ann)
            let annPreferences = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", "enabled_cameras": ["ann-garage"]}"#)
            #expect(annPreferences.status == .ok)
            let moved = try await api.call(.post, Self.registerPath, bearer: bob, body: ArgusAIHarness.registration())
            #expect(moved.status == .created)
            #expect(moved.string("id") == id)
            #expect(moved["preferences_created"] == .bool(true))
            #expect(try await api.call(.get, "/api/v1/devices", bearer: ann)["devices"] == .array([]))
            #expect(try await api.call(.get, "/api/v1/devices", bearer: bob)["devices.0.id"] == .string(id))
            let bobPreferences = try await api.call(
                .post, Self.preferencesPath, bearer: bob, body: #"{"device_id": "\#(ArgusAIHarness.deviceID)"}"#)
            #expect(bobPreferences["enabled_cameras"] == .null)
        }
    }

    @Test("Registration validation: device_id a UUID, platform whitelist, token hex or base64; nothing stored")
    func validation() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        try await harness.run { api in
            let cases: [(String, String, String)] = [
                (ArgusAIHarness.registration(deviceID: "my-phone"), "invalid_device_id", "device_id"),
                (
                    ArgusAIHarness.registration(deviceID: "550e8400e29b41d4a716446655440000"), "invalid_device_id",
                    "device_id"
                ),
                (ArgusAIHarness.registration(platform: "web"), "invalid_value", "platform"),
                (ArgusAIHarness.registration(platform: "blackberry"), "invalid_value", "platform"),
                (ArgusAIHarness.registration(service: "webpush"), "invalid_value", "push_service"),
                (
                    ArgusAIHarness.registration(platform: "android", service: "apns"), "platform_service_mismatch",
                    "push_service"
                ),
                (
                    ArgusAIHarness.registration(token: String(repeating: "zz", count: 32)), "invalid_token",
                    "device_token"
                ),
                (ArgusAIHarness.registration(token: "abc$%^&*()"), "invalid_token", "device_token"),
                (
                    ArgusAIHarness.registration(token: "<script>", platform: "android", service: "fcm"),
                    "invalid_token", "device_token"
                ),
                (
                    ArgusAIHarness.registration(token: "a b", platform: "android", service: "fcm"), "invalid_token",
                    "device_token"
                ),
                (
                    ArgusAIHarness.registration(token: "abc=def", platform: "android", service: "fcm"), "invalid_token",
                    "device_token"
                ),
                (ArgusAIHarness.registration(token: "abc"), "invalid_token", "device_token"),
                (#"{"platform": "ios", "device_id": "\#(ArgusAIHarness.deviceID)"}"#, "missing_field", "device_token"),
                (
                    ArgusAIHarness.registration().replacingOccurrences(of: #""production""#, with: #""staging""#),
                    "invalid_value", "token_type"
                ),
            ]
            for (body, code, field) in cases {
                let response = try await api.call(.post, Self.registerPath, bearer: ann, body: body)
                #expect(response.status == .badRequest, "\(body)")
                #expect(response.errorCode == code, "\(body)")
                #expect(response.errorField == field, "\(body)")
            }
            let badPath = try await api.call(
                .put, "/api/v1/push/mobile/tokens/not-a-uuid", bearer: ann,
                body: #"{"device_token": "\#(Fixtures.apnsToken())"}"#)
            #expect(badPath.errorCode == "invalid_device_id")
            #expect(try await api.call(.get, "/api/v1/devices", bearer: ann)["devices"] == .array([]))

            // Real FCM tokens (`<instance id>:APA91b…`, base64url) and the server key.
            let android = ArgusAIHarness.registration(
                deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: Fixtures.fcmToken(), platform: "android",
                service: "fcm")
            #expect(try await api.call(.post, Self.registerPath, bearer: ann, body: android).status == .created)
            #expect(try await api.call(.post, Self.registerPath, body: android).status == .forbidden)

            // APNs tokens are variable-length: up to 2048 hex characters, never more.
            let long = ArgusAIHarness.registration(
                deviceID: "7a2b3c4d-5e6f-4a70-8b9c-0d1e2f3a4b5c", token: String(repeating: "ab", count: 1024))
            #expect(try await api.call(.post, Self.registerPath, bearer: ann, body: long).status == .created)
            let tooLong = try await api.call(
                .post, Self.registerPath, bearer: ann,
                body: ArgusAIHarness.registration(token: String(repeating: "ab", count: 1025)))
            #expect(tooLong.errorCode == "invalid_token")
        }
    }

    @Test("Registration is rate-limited per user: 429 with Retry-After, then allowed again")
    func rateLimit() async throws {
        let harness = try await ArgusAIHarness(settings: ArgusAIConfiguration(registerRateLimit: 2))
        let ann = try await harness.server.userToken("ann")
        let bob = try await harness.server.userToken("bob")
        try await harness.run { api in
            for _ in 0..<2 {
                #expect(
                    try await api.call(.post, Self.registerPath, bearer: ann, body: ArgusAIHarness.registration())
                        .status == .created)
            }
            let limited = try await api.call(.post, Self.registerPath, bearer: ann, body: ArgusAIHarness.registration())
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "30")
            #expect(limited.errorCode == "rate_limited")
            // Another user has their own allowance.
            let other = ArgusAIHarness.registration(
                deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: Fixtures.apnsToken())
            #expect(try await api.call(.post, Self.registerPath, bearer: bob, body: other).status == .created)
            harness.server.clock.advance(by: .seconds(29))
            #expect(
                try await api.call(.post, Self.registerPath, bearer: ann, body: ArgusAIHarness.registration()).status
                    == .tooManyRequests)
            harness.server.clock.advance(by: .seconds(1))
            #expect(
                try await api.call(.post, Self.registerPath, bearer: ann, body: ArgusAIHarness.registration()).status
                    == .created)
        }
    }

    @Test("Settings come from app.<id>.argus.*, and bad values stop start-up naming the key")
    func configuration() async throws {
        let defaults = try await HeraldConfiguration.load(file: nil, environment: [:])
        #expect(defaults.dialects.argus["default"]?.publicBaseURL == nil)
        #expect(defaults.dialects.argus["default"]?.registerRateLimit == 20)
        let configured = try await HeraldConfiguration.load(
            file: nil,
            environment: [
                "HERALD_APP_DEFAULT_ARGUS_PUBLIC_BASE_URL": "https://argusai.local/",
                "HERALD_APP_DEFAULT_ARGUS_REGISTER_RATE_LIMIT": "5",
            ])
        #expect(configured.dialects.argus["default"]?.publicBaseURL == "https://argusai.local")
        #expect(configured.dialects.argus["default"]?.registerRateLimit == 5)
        for (key, value) in [
            ("HERALD_APP_DEFAULT_ARGUS_PUBLIC_BASE_URL", "argusai.local"),
            ("HERALD_APP_DEFAULT_ARGUS_REGISTER_RATE_LIMIT", "0"),
        ] {
            await #expect(throws: HeraldError.self) {
                _ = try await HeraldConfiguration.load(file: nil, environment: [key: value])
            }
        }
    }

    @Test("Account deleted → cascade delete tokens: one server-key route deletes every installation of a user")
    func accountDeletion() async throws {
        let harness = try await ArgusAIHarness()
        let ann = try await harness.server.userToken("ann")
        let bob = try await harness.server.userToken("bob")
        try await harness.run { api in
            let argus = try await api.argusRegister(ArgusAIHarness.registration(), as: ann)
            _ = try await api.call(
                .put, Self.preferencesPath, bearer: ann,
                body: #"{"device_id": "\#(ArgusAIHarness.deviceID)", "sound_enabled": false}"#)
            let aovis = try #require(
                try await api.aovisRegister(#"{"platform":"android","token":"\#(Fixtures.fcmToken())"}"#, bearer: ann)
                    .string("push_token_id"))
            let native = try await api.register(
                #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","user_id":"ann"}"#)
            let bobs = try await api.argusRegister(
                ArgusAIHarness.registration(
                    deviceID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", token: Fixtures.apnsToken()),
                as: bob)
            let path = "/v1/users/ann/installations"
            for bearer in [ServerHarness.clientKey, ann] {
                let refused = try await api.call(.delete, path, bearer: bearer)
                #expect(refused.status == .forbidden)
                #expect(refused.errorCode == "forbidden")
            }
            #expect(try await api.call(.delete, path, bearer: nil).status == .unauthorized)
            #expect(try await api.call(.get, "/v1/installations/\(native)").status == .ok)

            let deleted = try await api.call(.delete, path)
            #expect(deleted.status == .ok)
            #expect(deleted.json == .object(["deleted": .number(3)]))
            for id in [argus, aovis, native] {
                #expect(try await api.call(.get, "/v1/installations/\(id)").status == .notFound)
                #expect(try await api.call(.get, "/v1/installations/\(id)/preferences").status == .notFound)
            }
            #expect(try await api.call(.get, "/api/v1/devices", bearer: ann)["devices"] == .array([]))
            #expect(try await api.call(.get, "/v1/installations/\(bobs)").status == .ok)
            #expect(try await api.call(.delete, path).json == .object(["deleted": .number(0)]))
        }
    }
}
