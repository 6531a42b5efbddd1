import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldSQLite
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@testable import HeraldAPI

@Suite("Authentication and authorization")
struct AuthTests {
    @Test("No key or a wrong key is 401")
    func missingAndWrongKeys() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let missing = try await api.call(.get, "/v1/installations", bearer: nil)
            #expect(missing.status == .unauthorized)
            #expect(missing.errorCode == "unauthorized")
            #expect(missing.headers[.wwwAuthenticate] == "Bearer")
            let wrong = try await api.call(.get, "/v1/installations", bearer: "hsk_not-the-key-000000000")
            #expect(wrong.status == .unauthorized)
            let basic = try await api.call(
                .get, "/v1/installations", bearer: nil, headers: [.authorization: "Basic dXNlcjpwYXNz"])
            #expect(basic.status == .unauthorized)
            let posted = try await api.registerIOS(bearer: "wrong")
            #expect(posted.status == .unauthorized)
            #expect(try await api.call(.get, "/v1/installations").items.isEmpty)
        }
    }

    @Test("The client key registers, updates and deletes, and nothing else")
    func clientKey() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let key = ServerHarness.clientKey
            let created = try await api.registerIOS(bearer: key)
            #expect(created.status == .created)
            let id = created.string("id") ?? ""
            let listed = try await api.call(.get, "/v1/installations", bearer: key)
            #expect(listed.status == .forbidden)
            #expect(listed.errorCode == "forbidden")
            #expect(try await api.call(.get, "/v1/installations/\(id)", bearer: key).status == .forbidden)
            let patched = try await api.call(.patch, "/v1/installations/\(id)", bearer: key, body: #"{"badge":2}"#)
            #expect(patched.status == .ok)
            #expect(try await api.call(.delete, "/v1/installations/\(id)", bearer: key).status == .noContent)
        }
    }

    @Test("A user token registers as its subject and sees only its own installations")
    func userIsolation() async throws {
        let harness = try await ServerHarness()
        let alice = try await harness.userToken("alice")
        let bob = try await harness.userToken("bob")
        try await harness.run { api async throws in
            let mine = try await api.registerIOS(bearer: alice)
            #expect(mine.status == .created)
            #expect(mine.string("user_id") == "alice")
            let id = mine.string("id") ?? ""
            _ = try await api.registerIOS(bearer: bob)

            #expect(try await api.call(.get, "/v1/installations/\(id)", bearer: alice).status == .ok)
            let read = try await api.call(.get, "/v1/installations/\(id)", bearer: bob)
            #expect(read.status == .notFound)
            #expect(read.errorCode == "not_found")
            let patch = try await api.call(.patch, "/v1/installations/\(id)", bearer: bob, body: #"{"badge":9}"#)
            #expect(patch.status == .notFound)
            #expect(try await api.call(.delete, "/v1/installations/\(id)", bearer: bob).status == .notFound)
            #expect(try await api.call(.get, "/v1/installations/\(id)")["badge"] == .number(0))

            let bobsList = try await api.call(.get, "/v1/installations", bearer: bob)
            #expect(bobsList.items.count == 1)
            #expect(bobsList.string("data.0.user_id") == "bob")
            #expect(try await api.call(.get, "/v1/installations?user_id=alice", bearer: bob).items.isEmpty)

            let impersonation = try await api.registerIOS(bearer: bob, extra: #","user_id":"alice""#)
            #expect(impersonation.status == .badRequest)
            #expect(impersonation.errorCode == "user_mismatch")
            let reassign = try await api.call(
                .patch, "/v1/installations/\(id)", bearer: alice, body: #"{"user_id":"bob"}"#)
            #expect(reassign.errorCode == "user_mismatch")
            #expect(try await api.call(.delete, "/v1/installations/\(id)", bearer: alice).status == .noContent)
        }
    }

    @Test("A token presented by another user moves to them")
    func tokenMovesBetweenUsers() async throws {
        let harness = try await ServerHarness()
        let alice = try await harness.userToken("alice")
        let bob = try await harness.userToken("bob")
        try await harness.run { api async throws in
            let token = Fixtures.apnsToken()
            let first = try await api.registerIOS(token: token, bearer: alice)
            let moved = try await api.registerIOS(token: token, bearer: bob)
            #expect(moved.status == .ok)
            #expect(moved.string("id") == first.string("id"))
            #expect(moved.string("user_id") == "bob")
            #expect(try await api.call(.get, "/v1/installations", bearer: alice).items.isEmpty)
            #expect(try await api.call(.get, "/v1/installations").items.count == 1)
        }
    }

    @Test("A user cannot register another user's device id: 409, and the installation is neither shown nor changed")
    func deviceIDIsNotTakenOver() async throws {
        let harness = try await ServerHarness()
        let alice = try await harness.userToken("alice")
        let bob = try await harness.userToken("bob")
        try await harness.run { api async throws in
            let bobs = try await api.registerIOS(
                bearer: bob, extra: #","device_id":"bob-phone-1","channels":["private"],"attributes":{"plan":"pro"}"#)
            #expect(bobs.status == .created)
            let bobID = try #require(bobs.string("id"))
            let taken = try await api.registerIOS(bearer: alice, extra: #","device_id":"bob-phone-1""#)
            #expect(taken.status == .conflict)
            #expect(taken.errorCode == "device_id_in_use")
            #expect(taken.string("id") == nil)
            let still = try await api.call(.get, "/v1/installations/\(bobID)", bearer: bob)
            #expect(still.string("user_id") == "bob")
            #expect(still["attributes"] == .object(["plan": .string("pro")]))
            #expect(still.string("token") == bobs.string("token"))
            #expect(try await api.call(.get, "/v1/installations", bearer: alice).items.isEmpty)
            // With a key, the installation moves between users as it is.
            let moved = try await api.registerIOS(extra: #","device_id":"bob-phone-1","user_id":"carol""#)
            #expect(moved.status == .ok)
            #expect(moved.string("id") == bobID)
            // The same device id with the same token is the phone itself, signed into another account: it moves.
            let token = try #require(moved.string("token"))
            let signedIn = try await api.registerIOS(token: token, bearer: alice, extra: #","device_id":"bob-phone-1""#)
            #expect(signedIn.status == .ok)
            #expect(signedIn.string("id") == bobID)
            #expect(signedIn.string("user_id") == "alice")
        }
    }

    @Test("Expired, not-yet-valid, badly signed and mis-addressed user tokens are 401")
    func badUserTokens() async throws {
        let harness = try await ServerHarness()
        let now = harness.clock.date
        let issuer = ServerHarness.issuer
        let audience = ServerHarness.audience
        let users = harness.users
        let forger = await UserTokenIssuer.hs256(secret: "some-other-secret-that-is-long-enough-too")
        let cases: [(String, String)] = [
            (
                "expired",
                try await users.token(subject: "u", now: now, expiresIn: -120, issuer: issuer, audience: audience)
            ),
            (
                "not yet valid",
                try await users.token(subject: "u", now: now, notBefore: 600, issuer: issuer, audience: audience)
            ),
            ("wrong signature", try await forger.token(subject: "u", now: now, issuer: issuer, audience: audience)),
            (
                "no expiry",
                try await users.token(subject: "u", now: now, expiresIn: nil, issuer: issuer, audience: audience)
            ),
            ("wrong issuer", try await users.token(subject: "u", now: now, issuer: "https://evil", audience: audience)),
            ("wrong audience", try await users.token(subject: "u", now: now, issuer: issuer, audience: "other")),
            ("no subject", try await users.token(subject: nil, now: now, issuer: issuer, audience: audience)),
            ("garbage", "a.b.c"),
        ]
        try await harness.run { api async throws in
            for (name, token) in cases {
                let response = try await api.registerIOS(bearer: token)
                #expect(response.status == .unauthorized, "\(name)")
                #expect(response.errorCode == "unauthorized", "\(name)")
            }
            #expect(try await api.call(.get, "/v1/installations").items.isEmpty)
        }
    }

    @Test("Leeway: a token expired or not yet valid by less than the leeway is accepted")
    func leeway() async throws {
        let harness = try await ServerHarness()
        let now = harness.clock.date
        let justExpired = try await harness.users.token(
            subject: "u", now: now, expiresIn: -30, issuer: ServerHarness.issuer, audience: ServerHarness.audience)
        let almostValid = try await harness.users.token(
            subject: "u", now: now, notBefore: 30, issuer: ServerHarness.issuer, audience: ServerHarness.audience)
        try await harness.run { api async throws in
            #expect(try await api.registerIOS(bearer: justExpired).status == .created)
            #expect(try await api.registerIOS(bearer: almostValid).status == .created)
            harness.clock.advance(by: .seconds(3600 + 61))
            #expect(try await api.registerIOS(bearer: almostValid).status == .unauthorized)
        }
    }

    @Test("ES256 tokens verify against the configured PEM public key")
    func es256() async throws {
        let harness = try await ServerHarness()
        let token = try await harness.es256Users.token(
            subject: "carol", now: harness.clock.date, issuer: ServerHarness.issuer, audience: ServerHarness.audience)
        try await harness.run { api async throws in
            let response = try await api.registerIOS(bearer: token)
            #expect(response.status == .created)
            #expect(response.string("user_id") == "carol")
        }
    }

    @Test("Keys from a JWKS file verify tokens by their kid")
    func jwks() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (issuer, pem) = await UserTokenIssuer.es256(kid: "key-1")
        // A JWKS with the same P-256 key, as an identity provider publishes it.
        let point = Array(try P256.Signing.PublicKey(pemRepresentation: pem).x963Representation)
        let x = Base64URL.encode(point[1..<33])
        let y = Base64URL.encode(point[33..<65])
        let jwks = #"{"keys":[{"kty":"EC","crv":"P-256","kid":"key-1","alg":"ES256","x":"\#(x)","y":"\#(y)"}]}"#
        try jwks.write(toFile: directory.file("jwks.json"), atomically: false, encoding: .utf8)
        let verifier = try await UserTokenVerifier(
            configuration: UserTokenConfiguration(jwksFile: directory.file("jwks.json")), appID: "demo")
        #expect(try await verifier.userID(from: try await issuer.token(subject: "dave")) == "dave")
        let (stranger, _) = await UserTokenIssuer.es256(kid: "key-1")
        await #expect(throws: HeraldError.self) {
            try await verifier.userID(from: try await stranger.token(subject: "x"))
        }
    }
}

@Suite("Publish keys (the ntfy and Gotify publish APIs' credential)")
struct PublishKeyTests {
    @Test(
        "The generated app gets an hpk_ publish key sealed with its other keys (one is added to keys stored before); configured ones are KEY or KEY=TARGET; neither is a server or client key"
    )
    func publishKeys() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: Fixtures.cipher())
        try await store.migrate()
        // Keys stored by a version without publish keys.
        _ = try await store.insertAppKeys(AppKeys(appID: "default", serverKey: "hsk_old-server", clientKey: "hck_old"))
        let generated = try await AppDirectory(apps: [], defaultAppUserTokens: .init(), store: store)
        let stored = try #require(try await store.appKeys(appID: "default"))
        let publish = try #require(stored.publishKey)
        #expect(publish.hasPrefix("hpk_") && publish.count == 47)
        #expect(stored.serverKey == "hsk_old-server", "the others are kept")
        #expect(generated.publisher(forKey: publish) == Publisher(appID: "default", target: nil))
        #expect(generated.publisher(forKey: "hsk_old-server") == nil)
        #expect(generated.principal(forKey: publish) == nil, "a publish key is no API key")

        var app = AppConfiguration(id: "demo", serverKey: "hsk_demo-server-key", clientKey: "hck_demo-client-key")
        app.publishKeys = try [
            #require(PublishKey(entry: "hpk_any-topic-of-demo")),
            #require(PublishKey(entry: "AbCdEfGhIjKlMn=channel:alerts")),
            #require(PublishKey(entry: "hpk_only-bob-1234=user:bob")),
        ]
        let configured = try await AppDirectory(apps: [app], defaultAppUserTokens: .init(), store: store)
        #expect(configured.publisher(forKey: "hpk_any-topic-of-demo") == Publisher(appID: "demo", target: nil))
        #expect(configured.publisher(forKey: "AbCdEfGhIjKlMn")?.target == .channel("alerts"))
        #expect(configured.publisher(forKey: "hpk_only-bob-1234")?.target == .user("bob"))
        #expect(configured.publisher(forKey: publish) == nil, "the generated app is not served with configured apps")
        for bad in ["short", "hpk_has space in it", "hpk_0123456789=group:x", "hpk_0123456789=channel:"] {
            #expect(PublishKey(entry: bad) == nil, "\(bad)")
        }
    }
}
