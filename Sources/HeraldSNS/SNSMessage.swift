import HeraldCore

/// The `Message` of a `Publish` with `MessageStructure=json`, for endpoints of one platform —
/// `{"default": "<text>", "<APNS|APNS_SANDBOX|GCM>": "<provider payload as a JSON string>"}` — or,
/// for a topic, of several (``combining(_:default:)``).
///
/// The SNS notes' two classic mistakes cannot be written with it: the platform key comes from a
/// typed ``SNSPlatform`` whose APNs case carries its environment (a sandbox token is never
/// addressed as `APNS`), and the payload is a JSON object that is always serialized into the
/// key's value (never nested as an object, which SNS does not forward).
public struct SNSMessage: Sendable, Hashable {
    /// SNS's limit on a published message, in bytes: 256 KB.
    public static let maxBytes = 262_144

    /// The provider payload of each platform the message carries, serialized into its key's value.
    public let payloads: [SNSPlatform: [String: JSONValue]]
    /// The `default` text: what SNS sends to endpoints of any other platform. SNS requires it.
    public let defaultText: String

    /// Creates a message from a platform and the payload its provider receives.
    public init(platform: SNSPlatform, payload: [String: JSONValue], default text: String) {
        self.payloads = [platform: payload]
        self.defaultText = text
    }

    private init(payloads: [SNSPlatform: [String: JSONValue]], default text: String) {
        self.payloads = payloads
        self.defaultText = text
    }

    /// One message for the endpoints of several platforms at once (a topic's subscribers): each
    /// platform's key carries that platform's payload; a later message's platform replaces an
    /// earlier one's.
    public static func combining(_ messages: [SNSMessage], default text: String) -> SNSMessage {
        var payloads: [SNSPlatform: [String: JSONValue]] = [:]
        for message in messages { payloads.merge(message.payloads) { $1 } }
        return SNSMessage(payloads: payloads, default: text)
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

    /// The message as JSON: `default` and each platform's key, whose value is always a string.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["default": .string(defaultText)]
        for (platform, payload) in payloads {
            object[platform.key] = .string(String(decoding: JSONValue.object(payload).serialized(), as: UTF8.self))
        }
        return .object(object)
    }

    /// The `Message` parameter's text.
    public var text: String {
        String(decoding: json.serialized(), as: UTF8.self)
    }
}
