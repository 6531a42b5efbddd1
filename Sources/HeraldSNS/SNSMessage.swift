import HeraldCore

/// The `Message` of a `Publish` with `MessageStructure=json`, for endpoints of one platform:
/// `{"default": "<text>", "<APNS|APNS_SANDBOX|GCM>": "<provider payload as a JSON string>"}`.
///
/// The SNS notes' two classic mistakes cannot be written with it: the platform key comes from a
/// typed ``SNSPlatform`` whose APNs case carries its environment (a sandbox token is never
/// addressed as `APNS`), and the payload is a JSON object that is always serialized into the
/// key's value (never nested as an object, which SNS does not forward).
public struct SNSMessage: Sendable, Hashable {
    /// SNS's limit on a published message, in bytes: 256 KB.
    public static let maxBytes = 262_144

    /// The platform whose key carries the payload.
    public let platform: SNSPlatform
    /// The `default` text: what SNS sends to endpoints of any other platform. SNS requires it.
    public let defaultText: String
    /// The provider payload, serialized into the platform key's value.
    public let payload: [String: JSONValue]

    /// Creates a message from a platform and the payload its provider receives.
    public init(platform: SNSPlatform, payload: [String: JSONValue], default text: String) {
        self.platform = platform
        self.payload = payload
        self.defaultText = text
    }

    /// An APNs message: the payload exactly as APNs receives it (`aps` and the app's keys), under
    /// `APNS` for production tokens and `APNS_SANDBOX` for sandbox ones.
    public static func apns(
        _ payload: [String: JSONValue], environment: PushEnvironment, default text: String
    )
        -> SNSMessage
    {
        SNSMessage(platform: .apns(environment), payload: payload, default: text)
    }

    /// An FCM message in the HTTP v1 shape SNS documents today ("Using Google Firebase Cloud
    /// Messaging v1 payloads in Amazon SNS"), and the one the AOVIS guide sends:
    /// `{"fcmV1Message": {"message": {"notification": {…}, "data": {…}, "android": {…}}}}`.
    /// - Parameter message: FCM's `Message` object (projects.messages) without a target: SNS adds
    ///   the endpoint's token, so any `token`, `topic` or `condition` given is dropped. `data`
    ///   values must be strings, as FCM requires.
    public static func gcm(fcmV1Message message: [String: JSONValue], default text: String) -> SNSMessage {
        var message = message
        for target in ["token", "topic", "condition"] { message.removeValue(forKey: target) }
        return SNSMessage(
            platform: .gcm, payload: ["fcmV1Message": .object(["message": .object(message)])], default: text)
    }

    /// An FCM message in the legacy shape (`{"notification": {…}, "data": {…}}`, as in the SNS
    /// notes of 2020), for apps that still read it. SNS documents the top-level `fcmV1Message` key
    /// as the way to use FCM v1's fields: prefer ``gcm(fcmV1Message:default:)``.
    public static func gcm(legacy payload: [String: JSONValue], default text: String) -> SNSMessage {
        SNSMessage(platform: .gcm, payload: payload, default: text)
    }

    /// The provider payload as the JSON text placed under the platform key.
    public var payloadText: String {
        String(decoding: JSONValue.object(payload).serialized(), as: UTF8.self)
    }

    /// The message as JSON: `default` and the platform key, whose value is always a string.
    public var json: JSONValue {
        .object(["default": .string(defaultText), platform.key: .string(payloadText)])
    }

    /// The `Message` parameter's text.
    public var text: String {
        String(decoding: json.serialized(), as: UTF8.self)
    }
}
