import HeraldCore
import HeraldSNS
import Testing

@Suite("SNSMessage: MessageStructure=json for one platform")
struct SNSMessageTests {
    let apnsPayload: [String: JSONValue] = [
        "aps": .object([
            "alert": .object(["title": .string("Vehicle detected"), "body": .string("A dark SUV entered the driveway")]
            ),
            "sound": .string("default"), "mutable-content": .number(1),
        ]),
        "deepLink": .string("aovis://event/evt_1"), "cloudEventId": .string("evt_1"),
        "deviceId": .string("aovis-n4k-1"),
        "eventType": .string("vehicle"),
    ]

    /// The message as SNS reads it: the `Message` text parsed back.
    func parsed(_ message: SNSMessage) throws -> [String: JSONValue] {
        try #require(try JSONValue.parse(Array(message.text.utf8)).objectValue)
    }

    @Test("A sandbox token is addressed as APNS_SANDBOX, never APNS (the notes' first mistake)")
    func sandboxKey() throws {
        let sandbox = try parsed(.apns(apnsPayload, environment: .sandbox, default: "Vehicle detected"))
        #expect(Set(sandbox.keys) == ["default", "APNS_SANDBOX"])
        let production = try parsed(.apns(apnsPayload, environment: .production, default: "Vehicle detected"))
        #expect(Set(production.keys) == ["default", "APNS"])
        #expect(SNSPlatform.apns(.sandbox).key == "APNS_SANDBOX")
        #expect(SNSPlatform.apns(.production).key == "APNS")
        #expect(SNSPlatform.gcm.key == "GCM")
    }

    @Test("The platform value is a JSON string holding the payload, never an object (the notes' second mistake)")
    func valueIsAString() throws {
        let message = SNSMessage.apns(apnsPayload, environment: .production, default: "Vehicle detected")
        let json = try parsed(message)
        #expect(json["default"] == .string("Vehicle detected"))
        guard case .string(let text)? = json["APNS"] else {
            Issue.record("APNS is not a string: \(String(describing: json["APNS"]))")
            return
        }
        #expect(try JSONValue.parse(Array(text.utf8)) == .object(apnsPayload))
        #expect(message.text.contains(#""APNS":"{\"aps\":"#))
        let gcm = try parsed(.gcm(fcmV1Message: ["data": .object(["k": .string("v")])], default: "d"))
        guard case .string = gcm["GCM"] else {
            Issue.record("GCM is not a string")
            return
        }
    }

    @Test("GCM carries the FCM v1 shape the AOVIS guide sends: fcmV1Message.message with notification and data")
    func aovisGCM() throws {
        let message = SNSMessage.gcm(
            fcmV1Message: [
                "token": .string("dropped-because-SNS-sets-it"),
                "notification": .object([
                    "title": .string("Vehicle detected"), "body": .string("A dark SUV entered the driveway"),
                ]),
                "data": .object([
                    "deepLink": .string("aovis://event/evt_1"), "cloudEventId": .string("evt_1"),
                    "deviceId": .string("aovis-n4k-1"), "eventType": .string("vehicle"),
                ]),
            ],
            default: "Vehicle detected")
        guard case .string(let text)? = try parsed(message)["GCM"] else {
            Issue.record("GCM is not a string")
            return
        }
        let expected: JSONValue = .object([
            "fcmV1Message": .object([
                "message": .object([
                    "notification": .object([
                        "title": .string("Vehicle detected"), "body": .string("A dark SUV entered the driveway"),
                    ]),
                    "data": .object([
                        "deepLink": .string("aovis://event/evt_1"), "cloudEventId": .string("evt_1"),
                        "deviceId": .string("aovis-n4k-1"), "eventType": .string("vehicle"),
                    ]),
                ])
            ])
        ])
        #expect(try JSONValue.parse(Array(text.utf8)) == expected)
    }

    @Test("The legacy GCM shape of the SNS notes is kept as given")
    func legacyGCM() throws {
        let payload: [String: JSONValue] = [
            "notification": .object(["title": .string("你好，Android"), "body": .string("这是提醒内容")]),
            "data": .object(["customId": .string("123")]),
        ]
        guard case .string(let text)? = try parsed(.gcm(legacy: payload, default: "默认消息"))["GCM"] else {
            Issue.record("GCM is not a string")
            return
        }
        #expect(try JSONValue.parse(Array(text.utf8)) == .object(payload))
    }

    @Test("Platforms read back from their SNS names, and name their TTL attributes")
    func platforms() {
        for platform in SNSPlatform.all { #expect(SNSPlatform(key: platform.key) == platform) }
        #expect(SNSPlatform(key: "ADM") == nil)
        #expect(
            SNSMessageAttribute.timeToLive(seconds: 60, for: .apns(.sandbox)).name == "AWS.SNS.MOBILE.APNS_SANDBOX.TTL")
        #expect(SNSMessageAttribute.timeToLive(seconds: 60, for: .apns(.production)).name == "AWS.SNS.MOBILE.APNS.TTL")
        #expect(
            SNSMessageAttribute.timeToLive(seconds: 60, for: .gcm) == .init(name: "AWS.SNS.MOBILE.FCM.TTL", value: "60")
        )
    }

    @Test("Endpoint attributes map to SNS's names and back")
    func endpointAttributes() {
        let attributes = SNSEndpointAttributes(token: "t", enabled: false, customUserData: "u", other: ["X": "y"])
        #expect(attributes.wire == ["Token": "t", "Enabled": "false", "CustomUserData": "u", "X": "y"])
        #expect(SNSEndpointAttributes(wire: attributes.wire) == attributes)
        #expect(SNSEndpointAttributes(wire: ["Enabled": "true"]).enabled == true)
        #expect(SNSEndpointAttributes().wire.isEmpty)
    }
}
