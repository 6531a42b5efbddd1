import Foundation
import HeraldProviderMocks
import HeraldTestSupport
import JWTKit
import NIOHTTP1
import Testing

@Suite("MockFCMServer: token exchange, sends and scripts")
struct MockFCMServerTests {
    @Test("A service account exchanges an assertion for a token and sends a message")
    func exchangeAndSend() async throws {
        try await FCMHarness.run { fcm async throws in
            let exchange = try await fcm.exchange(
                assertion: FCMHarness.account.assertion(tokenURI: fcm.server.tokenURI))
            #expect(exchange.status == 200)
            #expect(exchange.string("token_type") == "Bearer")
            #expect(exchange.number("expires_in") == 3599)
            let accessToken = try #require(exchange.string("access_token"))
            #expect(fcm.server.tokenRequestCount == 1)

            let token = Fixtures.fcmToken()
            let reply = try await fcm.send(
                #"""
                {"message":{"token":"\#(token)","notification":{"title":"Hi"},"data":{"a":"1"},
                 "android":{"ttl":"3.5s","priority":"high","collapse_key":"news"},
                 "apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"badge":1}}}}}
                """#, accessToken: accessToken)
            #expect(reply.status == 200)
            let name = try #require(reply.string("name"))
            #expect(name.hasPrefix("projects/herald-test/messages/0:"))

            let recorded = try #require(fcm.server.requests.first)
            #expect(recorded.token == token)
            #expect(recorded.accessToken == accessToken)
            #expect(recorded.projectID == "herald-test")
            #expect(recorded.messageName == name)
            #expect(recorded.status == 200 && recorded.errorStatus == nil)
            #expect(recorded.json != nil)
        }
    }

    @Test("validate_only answers with FCM's fake message ID")
    func validateOnly() async throws {
        try await FCMHarness.run { fcm async throws in
            let reply = try await fcm.send(
                #"{"validate_only":true,"message":{"topic":"news"}}"#, accessToken: fcm.accessToken())
            #expect(reply.status == 200)
            #expect(reply.string("name") == "projects/herald-test/messages/fake_message_id")
        }
    }

    @Test("Bad assertions get Google's OAuth errors", arguments: AssertionFailure.all)
    func badAssertions(_ failure: AssertionFailure) async throws {
        try await FCMHarness.run { fcm async throws in
            let reply = try await fcm.exchange(failure.fields(fcm.server.tokenURI))
            #expect(reply.status == 400)
            #expect(reply.string("error") == failure.error)
            #expect(reply.string("error_description")?.isEmpty == false)
            #expect(fcm.server.tokenRequestCount == 1)
        }
    }

    @Test("A send without a valid access token gets 401 UNAUTHENTICATED")
    func unauthenticated() async throws {
        try await FCMHarness.run { fcm async throws in
            let body = #"{"message":{"token":"\#(Fixtures.fcmToken())"}}"#
            for accessToken in [nil, "ya29.forged"] {
                let reply = try await fcm.send(body, accessToken: accessToken)
                #expect(reply.status == 401)
                #expect(reply.number("error", "code") == 401)
                #expect(reply.string("error", "status") == "UNAUTHENTICATED")
                #expect(reply.headers.first(name: "www-authenticate")?.hasPrefix("Bearer") == true)
            }
        }
    }

    @Test("Revoked tokens get 401 until the client exchanges a new assertion")
    func revoked() async throws {
        try await FCMHarness.run { fcm async throws in
            let first = try await fcm.accessToken()
            #expect(try await fcm.send(token: Fixtures.fcmToken(), accessToken: first).status == 200)
            fcm.server.revokeAccessTokens()
            let reply = try await fcm.send(token: Fixtures.fcmToken(), accessToken: first)
            #expect(reply.status == 401)
            #expect(reply.string("error", "status") == "UNAUTHENTICATED")
            #expect(fcm.server.requests.last?.errorStatus == "UNAUTHENTICATED")

            let second = try await fcm.accessToken()
            #expect(try await fcm.send(token: Fixtures.fcmToken(), accessToken: second).status == 200)
            #expect(fcm.server.tokenRequestCount == 2)
        }
    }

    @Test("Scripted token lifetimes are announced and enforced")
    func scriptedLifetimes() async throws {
        try await FCMHarness.run { fcm async throws in
            fcm.server.scriptAccessTokenLifetimes([0, 120])
            let assertion = try await FCMHarness.account.assertion(tokenURI: fcm.server.tokenURI)
            let expired = try await fcm.exchange(assertion: assertion)
            #expect(expired.number("expires_in") == 0)
            let expiredToken = try #require(expired.string("access_token"))
            #expect(try await fcm.send(token: Fixtures.fcmToken(), accessToken: expiredToken).status == 401)

            let short = try await fcm.exchange(assertion: assertion)
            #expect(short.number("expires_in") == 120)
            #expect(try await fcm.exchange(assertion: assertion).number("expires_in") == 3599)
            let shortToken = try #require(short.string("access_token"))
            #expect(try await fcm.send(token: Fixtures.fcmToken(), accessToken: shortToken).status == 200)
        }
    }

    @Test("Messages FCM refuses get 400 INVALID_ARGUMENT", arguments: MessageFailure.all)
    func invalidMessages(_ failure: MessageFailure) async throws {
        try await FCMHarness.run { fcm async throws in
            let reply = try await fcm.send(failure.body, accessToken: fcm.accessToken())
            #expect(reply.status == 400)
            #expect(reply.number("error", "code") == 400)
            #expect(reply.string("error", "status") == "INVALID_ARGUMENT")
            let message = try #require(reply.string("error", "message"))
            #expect(message.contains(failure.messageContains), "\(message)")
            if let field = failure.field {
                let violations = reply.rpcDetails.compactMap { $0["fieldViolations"] as? [[String: Any]] }.joined()
                #expect(violations.contains { $0["field"] as? String == field }, "\(reply.rpcDetails)")
            }
            #expect(fcm.server.requests.last?.errorStatus == "INVALID_ARGUMENT")
        }
    }

    @Test("Every AndroidNotification field, by either name, with enums by name or number, is accepted")
    func androidNotificationFields() async throws {
        try await FCMHarness.run { fcm async throws in
            let reply = try await fcm.send(
                #"""
                {"message":{"token":"\#(Fixtures.fcmToken())","android":{"direct_boot_ok":true,
                 "fcmOptions":{"analyticsLabel":"l"},"notification":{
                 "title":"t","body":"b","icon":"i","color":"#ff0000","sound":"default","tag":"x",
                 "click_action":"OPEN","body_loc_key":"k","body_loc_args":["a"],"titleLocKey":"k",
                 "title_loc_args":[],"channel_id":"alerts","ticker":"t","sticky":true,
                 "event_time":"2026-11-29T10:00:00.5Z","localOnly":false,"notification_priority":"PRIORITY_HIGH",
                 "default_sound":true,"default_vibrate_timings":false,"default_light_settings":false,
                 "vibrate_timings":["0.5s","1s"],"visibility":"PUBLIC","notificationCount":3,
                 "light_settings":{"color":{"red":1,"green":0.5,"blue":0},"light_on_duration":"1s",
                 "lightOffDuration":"2s"},"image":"https://example.com/a.png","bypass_proxy_notification":false,
                 "proxy":2}}}}
                """#, accessToken: fcm.accessToken())
            #expect(reply.status == 200, "\(reply.string("error", "message") ?? "")")
            let secret = try await fcm.send(
                #"{"message":{"token":"\#(Fixtures.fcmToken())","android":{"notification":{"visibility":3}}}}"#,
                accessToken: fcm.accessToken())
            #expect(secret.status == 200)
        }
    }

    @Test("A send to another project gets 403 PERMISSION_DENIED")
    func wrongProject() async throws {
        try await FCMHarness.run { fcm async throws in
            let reply = try await fcm.send(
                #"{"message":{"token":"\#(Fixtures.fcmToken())"}}"#, accessToken: fcm.accessToken(), project: "other")
            #expect(reply.status == 403)
            #expect(reply.string("error", "status") == "PERMISSION_DENIED")
            #expect(reply.rpcDetails.first?["errorCode"] as? String == "SENDER_ID_MISMATCH")
        }
    }

    @Test("A scripted UNREGISTERED answers 404 with the FcmError detail")
    func scriptedUnregistered() async throws {
        try await FCMHarness.run { fcm async throws in
            let token = Fixtures.fcmToken()
            fcm.server.script(token: token, .unregistered)
            let accessToken = try await fcm.accessToken()
            let reply = try await fcm.send(token: token, accessToken: accessToken)
            #expect(reply.status == 404)
            #expect(reply.string("error", "status") == "NOT_FOUND")
            let detail = try #require(reply.rpcDetails.first)
            #expect(detail["@type"] as? String == "type.googleapis.com/google.firebase.fcm.v1.FcmError")
            #expect(detail["errorCode"] as? String == "UNREGISTERED")
            #expect(fcm.server.requests.last?.errorCode == "UNREGISTERED")
            #expect(try await fcm.send(token: Fixtures.fcmToken(), accessToken: accessToken).status == 200)
        }
    }

    @Test("A scripted invalid token names message.token; a scripted 503 carries Retry-After once")
    func scriptedErrors() async throws {
        try await FCMHarness.run { fcm async throws in
            let accessToken = try await fcm.accessToken()
            let stale = Fixtures.fcmToken()
            fcm.server.script(token: stale, .invalidToken)
            let invalid = try await fcm.send(token: stale, accessToken: accessToken)
            #expect(invalid.status == 400)
            let violations = invalid.rpcDetails.compactMap { $0["fieldViolations"] as? [[String: Any]] }.joined()
            #expect(violations.contains { $0["field"] as? String == "message.token" })

            let busy = Fixtures.fcmToken()
            fcm.server.script(token: busy, .unavailable(retryAfter: 7), times: 1)
            let unavailable = try await fcm.send(token: busy, accessToken: accessToken)
            #expect(unavailable.status == 503)
            #expect(unavailable.headers.first(name: "retry-after") == "7")
            #expect(try await fcm.send(token: busy, accessToken: accessToken).status == 200)
        }
    }

    @Test("The service account renders a key file clients can load")
    func serviceAccountJSON() throws {
        let account = FCMHarness.account
        let json = account.json(tokenURI: "https://127.0.0.1:1234/token")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "service_account")
        #expect(object["project_id"] as? String == "herald-test")
        #expect(object["client_email"] as? String == account.clientEmail)
        #expect(object["private_key_id"] as? String == account.privateKeyID)
        #expect(object["token_uri"] as? String == "https://127.0.0.1:1234/token")
        let pem = try #require(object["private_key"] as? String)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try Insecure.RSA.PrivateKey(pem: pem) == account.privateKey)
    }
}

/// A token request the token endpoint refuses, and the OAuth error it answers with.
struct AssertionFailure: Sendable, CustomTestStringConvertible {
    let name: String
    let error: String
    let fields: @Sendable (_ tokenURI: String) async throws -> [(String, String)]

    var testDescription: String { "\(name) → \(error)" }

    static let grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    static let all: [AssertionFailure] = [
        AssertionFailure(name: "signed by another key", error: "invalid_grant") { uri in
            let impostor = try TestServiceAccount(clientEmail: FCMHarness.account.clientEmail)
            return [("grant_type", grant), ("assertion", try await impostor.assertion(tokenURI: uri))]
        },
        AssertionFailure(name: "another account", error: "invalid_grant") { uri in
            // The right key, but an email the mock was not started with.
            let assertion = try await signed(iss: "someone@else.iam.gserviceaccount.com", aud: uri)
            return [("grant_type", grant), ("assertion", assertion)]
        },
        AssertionFailure(name: "wrong audience", error: "invalid_grant") { _ in
            let assertion = try await FCMHarness.account.assertion(tokenURI: "https://oauth2.googleapis.com/token")
            return [("grant_type", grant), ("assertion", assertion)]
        },
        AssertionFailure(name: "two-hour lifetime", error: "invalid_grant") { uri in
            [
                ("grant_type", grant),
                ("assertion", try await FCMHarness.account.assertion(tokenURI: uri, lifetime: 7200)),
            ]
        },
        AssertionFailure(name: "expired", error: "invalid_grant") { uri in
            let assertion = try await FCMHarness.account.assertion(
                tokenURI: uri, issuedAt: Date().addingTimeInterval(-7200))
            return [("grant_type", grant), ("assertion", assertion)]
        },
        AssertionFailure(name: "scope without FCM", error: "invalid_scope") { uri in
            let assertion = try await FCMHarness.account.assertion(
                tokenURI: uri, scope: "https://www.googleapis.com/auth/userinfo.email")
            return [("grant_type", grant), ("assertion", assertion)]
        },
        AssertionFailure(name: "not a JWT", error: "invalid_grant") { _ in
            [("grant_type", grant), ("assertion", "a.b.c")]
        },
        AssertionFailure(name: "other grant type", error: "unsupported_grant_type") { uri in
            [
                ("grant_type", "client_credentials"),
                ("assertion", try await FCMHarness.account.assertion(tokenURI: uri)),
            ]
        },
        AssertionFailure(name: "no assertion", error: "invalid_request") { _ in [("grant_type", grant)] },
    ]

    /// An assertion with the shared account's key and `kid` but chosen claims.
    static func signed(iss: String, aud: String) async throws -> String {
        struct Claims: JWTPayload {
            var iss: IssuerClaim
            var scope: String
            var aud: AudienceClaim
            var iat: IssuedAtClaim
            var exp: ExpirationClaim
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let keys = JWTKeyCollection()
        await keys.add(rsa: FCMHarness.account.privateKey, digestAlgorithm: .sha256)
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        return try await keys.sign(
            Claims(
                iss: IssuerClaim(value: iss), scope: "https://www.googleapis.com/auth/firebase.messaging",
                aud: AudienceClaim(value: aud), iat: IssuedAtClaim(value: now),
                exp: ExpirationClaim(value: now.addingTimeInterval(3600))))
    }
}

/// A `messages:send` body FCM refuses, with what its error says.
struct MessageFailure: Sendable, CustomTestStringConvertible {
    let name: String
    let body: String
    let messageContains: String
    let field: String?

    var testDescription: String { name }

    static let token = Fixtures.fcmToken()

    static let all: [MessageFailure] = [
        MessageFailure(
            name: "data value not a string", body: #"{"message":{"token":"\#(token)","data":{"a":"x","b":12}}}"#,
            messageContains: "Invalid value at 'message.data[1].value' (TYPE_STRING), 12",
            field: "message.data[1].value"),
        MessageFailure(
            name: "no recipient", body: #"{"message":{"data":{"a":"x"}}}"#,
            messageContains: "Recipient of the message is not set.", field: "message"),
        MessageFailure(
            name: "token and topic", body: #"{"message":{"token":"\#(token)","topic":"news"}}"#,
            messageContains: "oneof field 'target' is already set", field: "message"),
        MessageFailure(
            name: "malformed token", body: #"{"message":{"token":"not a token"}}"#,
            messageContains: "not a valid FCM registration token", field: nil),
        MessageFailure(
            name: "TTL without unit", body: #"{"message":{"token":"\#(token)","android":{"ttl":"3600"}}}"#,
            messageContains: "Invalid value at 'message.android.ttl'", field: "message.android.ttl"),
        MessageFailure(
            name: "TTL over four weeks", body: #"{"message":{"token":"\#(token)","android":{"ttl":"2419201s"}}}"#,
            messageContains: "TTL", field: "message.android.ttl"),
        MessageFailure(
            name: "unknown priority", body: #"{"message":{"token":"\#(token)","android":{"priority":"urgent"}}}"#,
            messageContains: "Invalid value at 'message.android.priority'", field: "message.android.priority"),
        MessageFailure(
            name: "legacy key in android.notification",
            body: #"{"message":{"token":"\#(token)","android":{"notification":{"android_channel_id":"alerts"}}}}"#,
            messageContains: #"Unknown name "android_channel_id" at 'message.android.notification'"#,
            field: "message.android.notification"),
        MessageFailure(
            name: "visibility not one of the enum's names",
            body: #"{"message":{"token":"\#(token)","android":{"notification":{"visibility":"VISIBLE"}}}}"#,
            messageContains: "Invalid value at 'message.android.notification.visibility'",
            field: "message.android.notification.visibility"),
        MessageFailure(
            name: "visibility as Android's -1 (legacy SECRET)",
            body: #"{"message":{"token":"\#(token)","android":{"notification":{"visibility":-1}}}}"#,
            messageContains: "Invalid value at 'message.android.notification.visibility'",
            field: "message.android.notification.visibility"),
        MessageFailure(
            name: "notification_count not an integer",
            body: #"{"message":{"token":"\#(token)","android":{"notification":{"notification_count":"many"}}}}"#,
            messageContains: "Invalid value at 'message.android.notification.notification_count' (TYPE_INT32)",
            field: "message.android.notification.notification_count"),
        MessageFailure(
            name: "body_loc_args not a list of strings",
            body: #"{"message":{"token":"\#(token)","android":{"notification":{"body_loc_args":["a",1]}}}}"#,
            messageContains: "Invalid value at 'message.android.notification.body_loc_args[1]' (TYPE_STRING)",
            field: "message.android.notification.body_loc_args[1]"),
        MessageFailure(
            name: "android.notification not an object",
            body: #"{"message":{"token":"\#(token)","android":{"notification":"alerts"}}}"#,
            messageContains: "Invalid value at 'message.android.notification'", field: "message.android.notification"),
        MessageFailure(
            name: "unknown android field", body: #"{"message":{"token":"\#(token)","android":{"channel_id":"x"}}}"#,
            messageContains: #"Unknown name "channel_id" at 'message.android'"#, field: "message.android"),
        MessageFailure(
            name: "unknown message field", body: #"{"message":{"token":"\#(token)","badge":1}}"#,
            messageContains: #"Unknown name "badge" at 'message'"#, field: "message"),
        MessageFailure(
            name: "unknown request field", body: #"{"message":{"token":"\#(token)"},"dry_run":true}"#,
            messageContains: #"Unknown name "dry_run""#, field: nil),
        MessageFailure(
            name: "reserved data key", body: #"{"message":{"token":"\#(token)","data":{"from":"me"}}}"#,
            messageContains: "from", field: "message.data"),
        MessageFailure(
            name: "message over 4 KB",
            body: #"{"message":{"token":"\#(token)","data":{"blob":"\#(String(repeating: "z", count: 4096))"}}}"#,
            messageContains: "Message is too big", field: nil),
        MessageFailure(
            name: "topic message over 2 KB",
            body: #"{"message":{"topic":"news","data":{"blob":"\#(String(repeating: "z", count: 2048))"}}}"#,
            messageContains: "Message is too big", field: nil),
        MessageFailure(
            name: "not JSON", body: "message=hello", messageContains: "Invalid JSON payload received", field: nil),
    ]
}
