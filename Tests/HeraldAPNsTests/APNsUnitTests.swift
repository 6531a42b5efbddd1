import Crypto
import Foundation
import HeraldCore
import HeraldTestSupport
import JWTKit
import Synchronization
import Testing

@testable import HeraldAPNs

@Suite("APNs: reasons, payloads, provider tokens")
struct APNsUnitTests {
    @Test("Every documented reason maps to one outcome")
    func reasonMatrix() {
        func outcome(
            _ status: Int, _ reason: APNsReason?, timestamp: Int64? = nil, retryAfter: Int? = nil
        )
            -> DeliveryOutcome
        {
            APNsResponseClassifier.outcome(
                status: status, reason: reason, apnsID: "id", timestamp: timestamp, retryAfter: retryAfter)
        }
        #expect(outcome(200, nil) == .delivered(providerID: "id"))
        #expect(
            outcome(410, .unregistered, timestamp: 1_700_000_000_000)
                == .invalidToken(reason: "Unregistered", since: Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(outcome(410, .expiredToken) == .invalidToken(reason: "ExpiredToken", since: nil))
        // Rejected, not gone: a token that is not the topic's may be a development build's (002).
        #expect(outcome(400, .badDeviceToken) == .rejectedToken(reason: "BadDeviceToken"))
        #expect(outcome(400, .deviceTokenNotForTopic) == .rejectedToken(reason: "DeviceTokenNotForTopic"))
        #expect(
            outcome(429, .tooManyRequests, retryAfter: 30) == .retry(reason: "TooManyRequests", after: .seconds(30)))
        #expect(outcome(500, .internalServerError) == .retry(reason: "InternalServerError", after: nil))
        #expect(outcome(503, .serviceUnavailable) == .retry(reason: "ServiceUnavailable", after: nil))
        #expect(outcome(503, .shutdown) == .retry(reason: "Shutdown", after: nil))
        for reason: APNsReason in [
            .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
            .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken,
        ] {
            #expect(outcome(403, reason) == .configurationFailure(reason: reason.wire))
        }
        for reason: APNsReason in [.badTopic, .topicDisallowed, .missingTopic, .invalidPushType] {
            #expect(outcome(400, reason) == .configurationFailure(reason: reason.wire))
        }
        for reason: APNsReason in [
            .badCollapseId, .badExpirationDate, .badMessageId, .badPriority, .duplicateHeaders, .idleTimeout,
            .missingDeviceToken, .payloadEmpty,
        ] {
            #expect(outcome(400, reason) == .rejected(reason: reason.wire))
        }
        #expect(outcome(404, .badPath) == .rejected(reason: "BadPath"))
        #expect(outcome(405, .methodNotAllowed) == .rejected(reason: "MethodNotAllowed"))
        #expect(outcome(413, .payloadTooLarge) == .rejected(reason: "PayloadTooLarge"))
        #expect(outcome(429, .tooManyProviderTokenUpdates) == .retry(reason: "TooManyProviderTokenUpdates", after: nil))
        #expect(outcome(400, APNsReason(wire: "SomethingNew")) == .rejected(reason: "SomethingNew"))
        #expect(APNsReason.documented.allSatisfy { APNsReason(wire: $0.wire) == $0 })
    }

    @Test("Payload keys follow Apple's names")
    func payload() throws {
        let payload = APNsPayload(
            alert: .fields(.init(title: "T", subtitle: "S", body: "B", locKey: "K", locArgs: ["a"])), badge: 3,
            sound: .critical(name: "alarm.caf", volume: 0.5), threadID: "cam-1", category: "SECURITY_ALERT",
            contentAvailable: true, mutableContent: true, targetContentID: "t", interruptionLevel: .timeSensitive,
            relevanceScore: 0.8, custom: ["deepLink": .string("aovis://event/1")])
        let json = payload.json
        let aps = try #require(json.objectValue?["aps"]?.objectValue)
        #expect(aps["alert"]?.objectValue?["loc-args"] == .array([.string("a")]))
        #expect(aps["badge"] == .number(3))
        #expect(aps["sound"]?.objectValue?["critical"] == .number(1))
        #expect(aps["thread-id"] == .string("cam-1"))
        #expect(aps["content-available"] == .number(1))
        #expect(aps["mutable-content"] == .number(1))
        #expect(aps["interruption-level"] == .string("time-sensitive"))
        #expect(json.objectValue?["deepLink"] == .string("aovis://event/1"))
        #expect(String(decoding: APNsPayload(alert: .text("hi")).bytes, as: UTF8.self) == #"{"aps":{"alert":"hi"}}"#)
    }

    @Test("Topics, priorities and limits by push type")
    func pushTypes() throws {
        #expect(APNsPushType.voip.topic(bundleID: "com.a") == "com.a.voip")
        #expect(APNsPushType.liveactivity.topic(bundleID: "com.a") == "com.a.push-type.liveactivity")
        #expect(APNsPushType.alert.topic(bundleID: "com.a") == "com.a")
        let background = APNsNotification(
            deviceToken: Fixtures.apnsToken(), pushType: .background, bundleID: "com.a", priority: .immediate,
            payload: APNsPayload(contentAvailable: true).bytes)
        #expect(background.priority == .considerate)
        let token = Fixtures.apnsToken()
        func notification(_ type: APNsPushType, size: Int) -> APNsNotification {
            let filler = String(repeating: "x", count: size - #"{"aps":{},"f":""}"#.utf8.count)
            let bytes = APNsPayload(custom: ["f": .string(filler)]).bytes
            return APNsNotification(deviceToken: token, pushType: type, bundleID: "com.a", payload: bytes)
        }
        #expect(notification(.alert, size: 4096).payload.count == 4096)
        try notification(.alert, size: 4096).validate()
        #expect(throws: APNsError.self) { try notification(.alert, size: 4097).validate() }
        try notification(.voip, size: 5120).validate()
        let voip = #expect(throws: APNsError.self) { try notification(.voip, size: 5121).validate() }
        #expect(voip?.code == .payloadTooLarge)
        var badCollapse = notification(.alert, size: 100)
        badCollapse.collapseID = String(repeating: "c", count: 65)
        #expect((#expect(throws: APNsError.self) { try badCollapse.validate() })?.code == .invalidCollapseID)
        var badToken = notification(.alert, size: 100)
        badToken.deviceToken = "not-hex"
        #expect((#expect(throws: APNsError.self) { try badToken.validate() })?.field == "token")
    }

    @Test("Provider tokens: renewed after 50 minutes, never sooner than 20, on ExpiredProviderToken once")
    func providerTokenTiming() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let privateKey = P256.Signing.PrivateKey()
        let key = try APNsSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", pem: privateKey.pemRepresentation)
        let tokens = APNsProviderToken(key: key, now: { clock.withLock { $0 } })
        let first = try await tokens.authorization()
        #expect(first.hasPrefix("bearer "))

        // The JWT: ES256, kid header, iss and integer iat.
        let verifier = JWTKeyCollection()
        await verifier.add(ecdsa: try ES256PublicKey(pem: privateKey.publicKey.pemRepresentation), kid: "KEY1234567")
        struct Claims: JWTPayload {
            var iss: String
            var iat: Int
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let claims = try await verifier.verify(String(first.dropFirst("bearer ".count)), as: Claims.self)
        #expect(claims.iss == "TEAM123456")
        #expect(claims.iat == 1_800_000_000)

        clock.withLock { $0 += 49 * 60 }
        #expect(try await tokens.authorization() == first)
        #expect(try await tokens.expired(first))  // 49 minutes is past the 20-minute floor: renews
        let second = try await tokens.authorization()
        #expect(second != first)
        clock.withLock { $0 += 10 * 60 }
        #expect(try await tokens.expired(second) == false)  // 10 minutes old: too young to renew
        #expect(try await tokens.authorization() == second)
        #expect(try await tokens.expired(first))  // a stale header: someone already renewed
        clock.withLock { $0 += 41 * 60 }
        #expect(try await tokens.authorization() != second)
        #expect(await tokens.mintedCount == 3)
    }
}
