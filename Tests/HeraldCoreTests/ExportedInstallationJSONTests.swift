import Foundation
import HeraldCore
import Testing

private func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

/// A record with every field set, dates with awkward fractions of a second.
private func fullRecord() -> ExportedInstallation {
    let created = Date(timeIntervalSince1970: 1_767_225_600.123_456)
    let installation = Installation(
        id: "0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", appID: "shop", userID: "ann", deviceID: "device-1",
        platform: .ios, service: .apns, environment: .sandbox, token: .device(""), channels: ["news", "sale"],
        locale: "fr_FR", timezone: "Europe/Paris", badge: 3, appVersion: "2.1", osVersion: "18.2",
        deviceModel: "iPhone17,1", bundleID: "com.example.shop",
        attributes: ["plan": .string("gold"), "n": .number(JSONNumber(9_007_199_254_740_993)), "x": .null],
        snsEndpointARN: "arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/shop/1", valid: false, failureCount: 2,
        lastFailureAt: created.addingTimeInterval(10.000_001), lastFailureReason: "BadDeviceToken",
        lastDeliveredAt: created.addingTimeInterval(5.5), lastSeenAt: created.addingTimeInterval(1),
        createdAt: created, updatedAt: created.addingTimeInterval(20.987_654_3),
        invalidatedAt: created.addingTimeInterval(10.000_001), deleteWhenInvalid: true)
    let preferences = Preferences(
        enabledSources: ["orders"], enabledCategories: [], quietHoursMode: .defer, soundEnabled: false,
        mutedUntil: Date(timeIntervalSince1970: 1_800_000_000.25))
    return ExportedInstallation(
        installation: installation, sealedToken: SealedToken(index: Array(0..<32), sealed: [0xFF, 0xFE, 0x00, 0x01]),
        preferences: preferences)
}

@Suite("ExportedInstallation: the export line's JSON")
struct ExportedInstallationJSONTests {
    @Test("Every field round-trips, through text, to an equal record (dates to the same Date)")
    func roundTrip() throws {
        let record = fullRecord()
        let line = record.json.serialized()
        #expect(!line.contains(UInt8(ascii: "\n")))
        let read = try ExportedInstallation(json: try JSONValue.parse(line))
        #expect(read == record)
        #expect(read.installation.createdAt == record.installation.createdAt)
        #expect(ExportedInstallation.isRecord(try JSONValue.parse(line)))
    }

    @Test("A minimal record: nullable members null or absent, no preferences")
    func minimal() throws {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let record = ExportedInstallation(
            installation: Installation(
                id: "a", appID: "default", platform: .web, service: .webpush, environment: .production,
                token: .device(""), createdAt: now, updatedAt: now),
            sealedToken: SealedToken(index: [1], sealed: [2]), preferences: nil)
        guard case .object(var members) = record.json else { Issue.record("not an object"); return }
        #expect(members["preferences"] == .null)
        #expect(members["created_at"] == .string("2026-01-01T00:00:00Z"))
        #expect(try ExportedInstallation(json: .object(members)) == record)
        for key in ["user_id", "locale", "last_seen_at", "invalidated_at", "preferences", "sns_endpoint_arn"] {
            members[key] = nil
        }
        #expect(try ExportedInstallation(json: .object(members)) == record)
    }

    @Test("The fields are the API's snake_case names, the token sealed and base64url")
    func shape() throws {
        guard case .object(let members) = fullRecord().json else { Issue.record("not an object"); return }
        #expect(Set(members.keys) == ExportedInstallation.fields)
        #expect(members["format"] == .string("herald.installation.v1"))
        #expect(
            members["token"]
                == .object([
                    "index": .string("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"), "sealed": .string("__4AAQ"),
                ]))
        #expect(members["created_at"] == .string("2026-01-01T00:00:00.123456Z"))
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        var change: @Sendable (inout [String: JSONValue]) -> Void
        var code: String
        var field: String?
        var name: String
        var testDescription: String { name }
    }

    static let failures: [Failure] = [
        Failure(change: { $0["colour"] = .string("red") }, code: "unknown_field", field: "colour", name: "unknown"),
        Failure(
            change: { $0["format"] = .string("herald.installation.v2") }, code: "invalid_value", field: "format",
            name: "format"),
        Failure(change: { $0["id"] = nil }, code: "missing_field", field: "id", name: "no id"),
        Failure(change: { $0["id"] = .string("") }, code: "invalid_length", field: "id", name: "empty id"),
        Failure(
            change: { $0["app_id"] = .number(JSONNumber(1)) }, code: "invalid_type", field: "app_id",
            name: "app id type"),
        Failure(
            change: { $0["platform"] = .string("palm") }, code: "invalid_value", field: "platform", name: "platform"),
        Failure(
            change: { $0["platform"] = .string("android") }, code: "invalid_value", field: "platform",
            name: "apns to android"),
        Failure(change: { $0["service"] = nil }, code: "missing_field", field: "service", name: "no service"),
        Failure(
            change: { $0["environment"] = .null }, code: "missing_field", field: "environment", name: "null environment"
        ),
        Failure(change: { $0["token"] = nil }, code: "missing_field", field: "token", name: "no token"),
        Failure(change: { $0["token"] = .string("abc") }, code: "invalid_type", field: "token", name: "token in clear"),
        Failure(
            change: { $0["token"] = .object(["index": .string("AA"), "sealed": .string("*")]) },
            code: "invalid_token", field: "token.sealed", name: "sealed not base64url"),
        Failure(
            change: { $0["token"] = .object(["index": .string("AA")]) }, code: "missing_field", field: "token.sealed",
            name: "no sealed"),
        Failure(
            change: {
                $0["token"] = .object(["index": .string("AA"), "sealed": .string("AA"), "plain": .string("x")])
            },
            code: "unknown_field", field: "token.plain", name: "token extra member"),
        Failure(
            change: { $0["channels"] = .array([.bool(true)]) }, code: "invalid_type", field: "channels[0]",
            name: "channel"),
        Failure(change: { $0["badge"] = .string("3") }, code: "invalid_type", field: "badge", name: "badge"),
        Failure(
            change: { $0["failure_count"] = .number(JSONNumber(-1)) }, code: "invalid_value", field: "failure_count",
            name: "failures"),
        Failure(
            change: { $0["attributes"] = .array([]) }, code: "invalid_type", field: "attributes", name: "attributes"),
        Failure(change: { $0["valid"] = .string("yes") }, code: "invalid_type", field: "valid", name: "valid"),
        Failure(
            change: { $0["delete_when_invalid"] = nil }, code: "missing_field", field: "delete_when_invalid",
            name: "no rule"),
        Failure(
            change: { $0["created_at"] = .string("2026-01-01T00:00:00") }, code: "invalid_timestamp",
            field: "created_at",
            name: "local time"),
        Failure(
            change: { $0["last_seen_at"] = .string("yesterday") }, code: "invalid_timestamp", field: "last_seen_at",
            name: "bad date"),
        Failure(change: { $0["updated_at"] = nil }, code: "missing_field", field: "updated_at", name: "no updated_at"),
        Failure(
            change: { $0["preferences"] = .object(["quiet_hours_mode": .string("loud")]) }, code: "invalid_value",
            field: "preferences.quiet_hours_mode", name: "preferences"),
    ]

    @Test("Bad input names the member at fault", arguments: failures)
    func badInput(_ failure: Failure) throws {
        guard case .object(var members) = fullRecord().json else { Issue.record("not an object"); return }
        failure.change(&members)
        let error = #expect(throws: HeraldError.self) { try ExportedInstallation(json: .object(members)) }
        #expect(error?.code == failure.code, "\(String(describing: error))")
        #expect(error?.field == failure.field, "\(String(describing: error))")
    }

    @Test("A registration body is not an export record; a line that is not an object is refused")
    func registrationBody() throws {
        let registration = try json(#"{"platform":"ios","token":"ab"}"#)
        #expect(!ExportedInstallation.isRecord(registration))
        #expect(!ExportedInstallation.isRecord(.array([])))
        let error = #expect(throws: HeraldError.self) { try ExportedInstallation(json: .array([])) }
        #expect(error?.code == "invalid_body")
    }
}
