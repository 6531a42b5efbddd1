import HeraldCore
import HeraldFCM
import HeraldTestSupport
import Testing

@Suite("FCM: messages, service accounts, error mapping")
struct FCMUnitTests {
    private func error(_ status: String, code: String? = nil, field: String? = nil) -> FCMResponseClassifier.ErrorBody?
    {
        var details: [JSONValue] = []
        if let code {
            details.append(
                .object([
                    "@type": .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"), "errorCode": .string(code),
                ]))
        }
        if let field {
            details.append(
                .object([
                    "@type": .string("type.googleapis.com/google.rpc.BadRequest"),
                    "fieldViolations": .array([.object(["field": .string(field), "description": .string("bad")])]),
                ]))
        }
        return FCMResponseClassifier.ErrorBody(
            json: .object([
                "error": .object(["code": .number(400), "status": .string(status), "details": .array(details)])
            ]))
    }

    @Test("FcmError codes map to one outcome each")
    func errorMatrix() {
        func outcome(_ status: Int, _ body: FCMResponseClassifier.ErrorBody?, retryAfter: Int? = nil) -> DeliveryOutcome
        {
            FCMResponseClassifier.outcome(status: status, name: nil, error: body, retryAfter: retryAfter)
        }
        #expect(
            FCMResponseClassifier.outcome(status: 200, name: "projects/p/messages/1", error: nil, retryAfter: nil)
                == .delivered(providerID: "projects/p/messages/1"))
        #expect(
            outcome(404, error("NOT_FOUND", code: "UNREGISTERED")) == .invalidToken(reason: "UNREGISTERED", since: nil))
        #expect(
            outcome(400, error("INVALID_ARGUMENT", code: "INVALID_ARGUMENT", field: "message.token"))
                == .rejectedToken(reason: "INVALID_ARGUMENT"))
        #expect(
            outcome(400, error("INVALID_ARGUMENT", code: "INVALID_ARGUMENT", field: "message.data"))
                == .rejected(reason: "INVALID_ARGUMENT"))
        #expect(
            outcome(429, error("RESOURCE_EXHAUSTED", code: "QUOTA_EXCEEDED"), retryAfter: 60)
                == .retry(reason: "QUOTA_EXCEEDED", after: .seconds(60)))
        #expect(outcome(503, error("UNAVAILABLE", code: "UNAVAILABLE")) == .retry(reason: "UNAVAILABLE", after: nil))
        #expect(outcome(500, error("INTERNAL", code: "INTERNAL")) == .retry(reason: "INTERNAL", after: nil))
        #expect(
            outcome(403, error("PERMISSION_DENIED", code: "SENDER_ID_MISMATCH"))
                == .configurationFailure(reason: "SENDER_ID_MISMATCH"))
        #expect(
            outcome(401, error("UNAUTHENTICATED", code: "THIRD_PARTY_AUTH_ERROR"))
                == .configurationFailure(reason: "THIRD_PARTY_AUTH_ERROR"))
        #expect(outcome(400, error("FAILED_PRECONDITION")) == .rejected(reason: "FAILED_PRECONDITION"))
        #expect(outcome(502, nil) == .retry(reason: "HTTP 502", after: nil))
    }

    @Test("Messages render FCM's JSON with string data and ttl in seconds")
    func messageJSON() throws {
        let message = FCMMessage(
            target: .token(Fixtures.fcmToken()), notification: .init(title: "T", body: "B"),
            data: ["cloudEventId": "42"],
            android: .init(
                priority: .high, ttl: 86400,
                notification: ["channel_id": .string("security_alerts"), "tag": .string("cam")]))
        let json = try #require(message.json.objectValue)
        #expect(json["data"] == .object(["cloudEventId": .string("42")]))
        #expect(json["android"]?.objectValue?["ttl"] == .string("86400s"))
        #expect(json["android"]?.objectValue?["priority"] == .string("high"))
        #expect(json["notification"]?.objectValue?["title"] == .string("T"))
        try message.validate()
    }

    @Test("The 4096-byte limit: exactly 4096 accepted, 4097 refused")
    func sizeLimit() throws {
        func message(size: Int) -> FCMMessage {
            let empty = FCMMessage(target: .topic("news"), data: ["k": ""]).json.serialized().count
            return FCMMessage(target: .topic("news"), data: ["k": String(repeating: "x", count: size - empty)])
        }
        #expect(message(size: 4096).json.serialized().count == 4096)
        try message(size: 4096).validate()
        let error = #expect(throws: FCMError.self) { try message(size: 4097).validate() }
        #expect(error?.code == .messageTooLarge)
        #expect(error?.field == "payload")
    }

    @Test("Service account JSON is read, and missing fields are named")
    func serviceAccount() throws {
        let json = #"""
            {"type":"service_account","project_id":"demo","private_key_id":"k1","private_key":"PEM",
             "client_email":"push@demo.iam.gserviceaccount.com","token_uri":"https://oauth2.googleapis.com/token"}
            """#
        let account = try FCMServiceAccount(json: Array(json.utf8))
        #expect(account.projectID == "demo")
        #expect(account.privateKeyID == "k1")
        let missing = #expect(throws: FCMError.self) {
            try FCMServiceAccount(json: Array(#"{"project_id":"demo"}"#.utf8))
        }
        #expect(missing?.code == .invalidServiceAccount)
        #expect(missing?.field == "service_account.private_key_id" || missing?.field == "service_account.client_email")
        let unreadable = #expect(throws: FCMError.self) { try FCMServiceAccount(json: Array("[1]".utf8)) }
        #expect(unreadable?.field == "service_account")
    }
}
