import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Registration bodies")
struct InstallationRegistrationTests {
    private func parse(_ text: String) throws -> InstallationRegistration {
        try InstallationRegistration(json: try JSONValue.parse(Array(text.utf8)))
    }

    @Test("A full iOS body parses, with the service inferred")
    func fullBody() throws {
        let token = Fixtures.apnsToken()
        let registration = try parse(
            """
            {"platform":"ios","token":"\(token)","environment":"sandbox","user_id":"u1","device_id":"d1",
             "channels":["news","news","sports"],"locale":"zh_CN","timezone":"Asia/Shanghai","badge":3,
             "app_version":"1.2","os_version":"18.1","device_model":"iPhone16,1","bundle_id":"com.example.app",
             "attributes":{"tier":"gold","age":30}}
            """)
        #expect(registration.service == .apns)
        #expect(registration.environment == .sandbox)
        #expect(registration.token == .device(token))
        #expect(registration.channels == ["news", "sports"])
        #expect(registration.locale == "zh-CN")
        #expect(registration.attributes?["age"] == .number(30))
    }

    @Test(
        "Each malformed field is refused with its name and code",
        arguments: [
            (#"{"token":"x"}"#, "platform", "missing_field"),
            (#"{"platform":"ios"}"#, "token", "missing_field"),
            (#"{"platform":"phone","token":"x"}"#, "platform", "invalid_value"),
            (#"{"platform":"android","service":"apns","token":"x"}"#, "platform", "platform_service_mismatch"),
            (#"{"platform":"android","token":"a b"}"#, "token", "invalid_token"),
            (#"{"platform":"android","token":7}"#, "token", "invalid_type"),
            (#"{"platform":"android","token":"t","environment":"dev"}"#, "environment", "invalid_value"),
            (#"{"platform":"android","token":"t","timezone":"Nowhere/City"}"#, "timezone", "invalid_timezone"),
            (#"{"platform":"android","token":"t","locale":"english"}"#, "locale", "invalid_locale"),
            (#"{"platform":"android","token":"t","badge":-1}"#, "badge", "invalid_value"),
            (#"{"platform":"android","token":"t","badge":1.5}"#, "badge", "invalid_value"),
            (#"{"platform":"android","token":"t","channels":"news"}"#, "channels", "invalid_type"),
            (#"{"platform":"android","token":"t","channels":[1]}"#, "channels[0]", "invalid_type"),
            (#"{"platform":"android","token":"t","attributes":[]}"#, "attributes", "invalid_type"),
            (#"{"platform":"android","token":"t","colour":"red"}"#, "colour", "unknown_field"),
            (#"{"platform":"web","token":"t"}"#, "token", "invalid_token"),
            (#"{"platform":"web"}"#, "subscription", "missing_field"),
            (#"{"platform":"web","subscription":{"endpoint":"https://a.b/c"}}"#, "subscription.keys", "missing_field"),
            (#"{"platform":"android","token":"t","user_id":""}"#, "user_id", "invalid_length"),
        ])
    func malformed(body: String, field: String, code: String) throws {
        let error = #expect(throws: HeraldError.self) { try parse(body) }
        #expect(error?.field == field)
        #expect(error?.code == code)
        #expect(error?.kind == .badRequest)
    }

    @Test("Non-object bodies and broken JSON are bad requests")
    func notObjects() {
        #expect((#expect(throws: HeraldError.self) { try parse("[1]") })?.code == "invalid_body")
        #expect((#expect(throws: HeraldError.self) { try parse("{\"platform\":") })?.code == "invalid_json")
    }
}
