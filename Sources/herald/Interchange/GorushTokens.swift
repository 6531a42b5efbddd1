import Foundation
import HeraldCore

/// What gorush users hold of their devices, read by `herald import --format gorush`. gorush keeps
/// no registry: its callers keep the tokens, and what they have is gorush's own request body
/// (`POST /api/push`, `{"notifications": [{"tokens": [...], "platform": 1, ...}]}`) or a plain list of
/// `token,platform` lines.
///
/// Mapping: `platform` 1 (iOS) is an APNs installation (`platform: ios`), in the sandbox
/// environment when the notification says `"development": true` (gorush's flag for Apple's
/// development server), with `topic` as its bundle id; 2 (Android) is FCM. 3 (Huawei HMS) has no
/// Herald service and is refused. In a list, the platform is `1`/`ios` or `2`/`android`; a first
/// line `token,platform` is a header; `#` starts a comment.
public enum GorushTokens {
    /// Whether a parsed value is a gorush request (`{"notifications": [...]}`).
    public static func isRequest(_ value: JSONValue) -> Bool {
        if case .array? = value.objectValue?["notifications"] { return true }
        return false
    }

    /// The registration bodies of one notification of a request, one per token.
    /// - Throws: `HeraldError` naming the field at fault (`notifications[n].platform`, `…tokens`).
    public static func registrationBodies(
        notification value: JSONValue, index: Int
    ) throws(HeraldError)
        -> [JSONValue]
    {
        let prefix = "notifications[\(index)]"
        guard let notification = value.objectValue else { throw .invalidType(prefix, expected: "an object") }
        guard case .array(let tokens)? = notification["tokens"], !tokens.isEmpty else {
            throw .invalidValue(
                "\(prefix).tokens", code: "missing_field",
                "Field '\(prefix).tokens' must list device tokens (a topic or condition message holds no device).")
        }
        guard case .number(let number)? = notification["platform"], let code = number.integerValue else {
            throw .invalidType("\(prefix).platform", expected: "1 (iOS) or 2 (Android)")
        }
        var base = try platform(Int(code), field: "\(prefix).platform")
        if base["service"] == .string("apns") {
            if notification["development"] == .bool(true) { base["environment"] = .string("sandbox") }
            if case .string(let topic)? = notification["topic"], !topic.isEmpty { base["bundle_id"] = .string(topic) }
        }
        var bodies: [JSONValue] = []
        for (position, token) in tokens.enumerated() {
            guard case .string(let text) = token else {
                throw .invalidType("\(prefix).tokens[\(position)]", expected: "a string")
            }
            var body = base
            body["token"] = .string(text)
            bodies.append(.object(body))
        }
        return bodies
    }

    /// One `token,platform` line as a registration body; nil for a header or comment line.
    /// - Throws: `HeraldError` for a line without a platform, or an unknown one.
    public static func registrationBody(line: String) throws(HeraldError) -> JSONValue? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.hasPrefix("#"), trimmed.lowercased() != "token,platform" else { return nil }
        let parts = trimmed.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard parts.count == 2, !parts[0].isEmpty else {
            throw .invalidValue(
                "platform", code: "invalid_line", "A line must be token,platform (1 or ios, 2 or android).")
        }
        let codes = ["1": 1, "ios": 1, "2": 2, "android": 2, "3": 3, "huawei": 3]
        guard let code = codes[parts[1].lowercased()] else {
            throw .invalidValue("platform", "Platform '\(parts[1])' must be 1 or ios, 2 or android.")
        }
        var body = try platform(code, field: "platform")
        body["token"] = .string(parts[0])
        return .object(body)
    }

    private static func platform(_ code: Int, field: String) throws(HeraldError) -> [String: JSONValue] {
        switch code {
        case 1: return ["platform": .string("ios"), "service": .string("apns")]
        case 2: return ["platform": .string("android"), "service": .string("fcm")]
        case 3:
            throw .invalidValue(field, code: "unsupported_platform", "Platform 3 (Huawei HMS) has no Herald service.")
        default: throw .invalidValue(field, "Field '\(field)' must be 1 (iOS) or 2 (Android).")
        }
    }
}
