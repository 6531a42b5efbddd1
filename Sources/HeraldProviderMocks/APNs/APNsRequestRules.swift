import Foundation
import HeraldCore

/// An APNs error answer: the HTTP status and the `reason` string of Apple's "Handling notification responses from
/// APNs" table (device pushes) or of its "Handling error responses from Apple Push Notification service" table
/// (broadcasts and channel management).
struct APNsRejection: Error, Sendable, Equatable {
    var status: Int
    var reason: String

    static let badCollapseID = APNsRejection(status: 400, reason: "BadCollapseId")
    static let badDeviceToken = APNsRejection(status: 400, reason: "BadDeviceToken")
    static let badExpirationDate = APNsRejection(status: 400, reason: "BadExpirationDate")
    static let badMessageID = APNsRejection(status: 400, reason: "BadMessageId")
    static let badPriority = APNsRejection(status: 400, reason: "BadPriority")
    static let badTopic = APNsRejection(status: 400, reason: "BadTopic")
    static let duplicateHeaders = APNsRejection(status: 400, reason: "DuplicateHeaders")
    static let invalidPushType = APNsRejection(status: 400, reason: "InvalidPushType")
    static let missingDeviceToken = APNsRejection(status: 400, reason: "MissingDeviceToken")
    static let missingTopic = APNsRejection(status: 400, reason: "MissingTopic")
    static let payloadEmpty = APNsRejection(status: 400, reason: "PayloadEmpty")
    static let topicDisallowed = APNsRejection(status: 400, reason: "TopicDisallowed")
    static let badCertificate = APNsRejection(status: 403, reason: "BadCertificate")
    static let expiredProviderToken = APNsRejection(status: 403, reason: "ExpiredProviderToken")
    static let invalidProviderToken = APNsRejection(status: 403, reason: "InvalidProviderToken")
    static let missingProviderToken = APNsRejection(status: 403, reason: "MissingProviderToken")
    static let badPath = APNsRejection(status: 404, reason: "BadPath")
    static let methodNotAllowed = APNsRejection(status: 405, reason: "MethodNotAllowed")
    static let payloadTooLarge = APNsRejection(status: 413, reason: "PayloadTooLarge")

    // Reasons only the broadcast and channel management table lists.

    /// "The `apns-channel-id` header isn’t properly encoded, or it’s greater than the allowed length."
    static let badChannelID = APNsRejection(status: 400, reason: "BadChannelId")
    /// "The JSON Request payload contained an unrecognizable attribute."
    static let badRequestParams = APNsRejection(status: 400, reason: "BadRequestParams")
    /// "The JSON Request payload is unparseable."
    static let badRequestPayload = APNsRejection(status: 400, reason: "BadRequestPayload")
    /// "You have reached the maximum channel limit for your application. Delete channels that you no longer use."
    static let cannotCreateChannelConfig = APNsRejection(status: 400, reason: "CannotCreateChannelConfig")
    /// "The `apns-channel-id` header used in the request doesn’t exist."
    static let channelNotRegistered = APNsRejection(status: 400, reason: "ChannelNotRegistered")
    /// "The `apns-channel-id` header is missing."
    static let missingChannelID = APNsRejection(status: 400, reason: "MissingChannelId")
    /// "The `apns-push-type` attribute is missing."
    static let missingPushType = APNsRejection(status: 400, reason: "MissingPushType")
    /// "The bundle IDs parsed from your token or certificate don’t include the topic present in the path."
    static let topicMismatch = APNsRejection(status: 403, reason: "TopicMismatch")
}

/// The request checks of APNs' provider API ("Sending notification requests to APNs"), as pure functions of the
/// request. Each returns the rejection APNs would answer with, or nil when the request passes.
enum APNsRequestRules {
    static let devicePathPrefix = "/3/device/"

    /// Each `apns-push-type` value and the suffix its `apns-topic` must carry (nil: the bare bundle ID).
    static let topicSuffixes: [String: String?] = [
        "alert": nil, "background": nil, "mdm": nil,
        "location": ".location-query", "voip": ".voip", "complication": ".complication",
        "fileprovider": ".pushkit.fileprovider", "liveactivity": ".push-type.liveactivity",
        "pushtotalk": ".voip-ptt", "widgets": ".push-type.widgets",
    ]

    /// Headers APNs refuses to see twice.
    static let singleValuedHeaders = [
        "authorization", "apns-id", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration",
        "apns-collapse-id",
    ]

    /// The device token named by the path, or the rejection for a path APNs does not serve.
    static func deviceToken(inPath path: String) -> Result<String, APNsRejection> {
        guard path.hasPrefix(devicePathPrefix) else { return .failure(.badPath) }
        let token = path.dropFirst(devicePathPrefix.count)
        if token.isEmpty { return .failure(.missingDeviceToken) }
        if token.contains("/") || token.contains("?") { return .failure(.badPath) }
        return .success(String(token))
    }

    /// Device tokens are hex: 32 bytes today, and Apple warns they may grow, so any even length from 32 to 1024 bytes
    /// passes.
    static func checkDeviceToken(_ token: String) -> APNsRejection? {
        let isHex = token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0 | 0x20) }
        guard isHex, token.utf8.count.isMultiple(of: 2), (64...2048).contains(token.utf8.count) else {
            return .badDeviceToken
        }
        return nil
    }

    static func checkDuplicates(in request: TestHTTPRequest) -> APNsRejection? {
        singleValuedHeaders.contains { request.count(of: $0) > 1 } ? .duplicateHeaders : nil
    }

    /// Checks `apns-topic` against the credential's topics and `apns-push-type`; returns the push type in force
    /// (`alert` when the header is absent, as APNs assumes).
    static func checkTopic(
        _ topic: String?, pushType: String?, allowedTopics: Set<String>
    ) -> Result<String, APNsRejection> {
        guard let topic, !topic.isEmpty else { return .failure(.missingTopic) }
        let allowed =
            allowedTopics.contains(topic)
            || topicSuffixes.values.contains { suffix in
                guard let suffix, topic.hasSuffix(suffix) else { return false }
                return allowedTopics.contains(String(topic.dropLast(suffix.count)))
            }
        guard allowed else { return .failure(.topicDisallowed) }
        let pushType = pushType ?? "alert"
        guard let requiredSuffix = topicSuffixes[pushType] else { return .failure(.invalidPushType) }
        if let requiredSuffix, !topic.hasSuffix(requiredSuffix) { return .failure(.badTopic) }
        return .success(pushType)
    }

    static func checkOptions(of request: TestHTTPRequest) -> APNsRejection? {
        if let priority = request.header("apns-priority"), !["10", "5", "1"].contains(priority) {
            return .badPriority
        }
        if let expiration = request.header("apns-expiration"),
            expiration.isEmpty || !expiration.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        {
            return .badExpirationDate
        }
        if let collapseID = request.header("apns-collapse-id"), collapseID.utf8.count > 64 {
            return .badCollapseID
        }
        if let id = request.header("apns-id"), !isUUID(id) {
            return .badMessageID
        }
        return nil
    }

    /// APNs' payload limits: 4 KB, or 5 KB for VoIP notifications.
    static func maximumPayloadSize(pushType: String) -> Int {
        pushType == "voip" ? 5120 : 4096
    }

    /// Checks the body's size and shape, given the body parsed as JSON (nil when it is not JSON).
    ///
    /// Apple's reason table has no entry for a body that is not a JSON object, nor for one without `aps`, so those
    /// get `PayloadEmpty` too: the payload carries no notification. MDM notifications carry `mdm` instead of `aps`;
    /// Live Activity notifications must also pass ``checkLiveActivity(_:events:)``.
    static func checkPayload(_ body: [UInt8], json: JSONValue?, pushType: String) -> APNsRejection? {
        if body.count > maximumPayloadSize(pushType: pushType) { return .payloadTooLarge }
        guard !body.isEmpty, let object = json?.objectValue else { return .payloadEmpty }
        if pushType == "mdm" { return nil }
        guard case .object(let aps) = object["aps"] else { return .payloadEmpty }
        if pushType == "liveactivity" { return checkLiveActivity(aps, events: liveActivityEvents) }
        return nil
    }

    /// The `event` values of an ActivityKit push notification.
    static let liveActivityEvents: Set<String> = ["start", "update", "end"]

    /// Checks the `aps` dictionary of an ActivityKit push notification, as Apple's "Starting and updating Live
    /// Activities with ActivityKit push notifications" describes it:
    ///
    /// - `timestamp`: "the current time in seconds since 1970", so an integer number;
    /// - `event`: `start`, `update` or `end` (`events` narrows them: a broadcast cannot start an activity);
    /// - `content-state`: an object, required to start and to update; to end, Apple only advises it ("If you end a
    ///   Live Activity, include the final content state"), so it is checked only when present;
    /// - to start: "Include an `alert` in the JSON payload" and "Include the `attributes-type` and `attributes`
    ///   keys".
    ///
    /// Neither of Apple's reason tables has an entry for a Live Activity payload that misses one of these, so the
    /// mock answers `400 PayloadEmpty`, the reason both tables document for a request without a notification payload
    /// ("The message payload is empty." / "The push notification request didn’t include a notification payload."):
    /// the payload carries no Live Activity notification. APNs itself may accept such a payload and leave the device
    /// to drop it; the mock refuses it so that a client's mistake shows in the test that made it.
    static func checkLiveActivity(_ aps: [String: JSONValue], events: Set<String>) -> APNsRejection? {
        guard case .number(let timestamp)? = aps["timestamp"], let seconds = timestamp.integerValue, seconds >= 0,
            case .string(let event)? = aps["event"], events.contains(event)
        else { return .payloadEmpty }
        switch aps["content-state"] {
        case .object?: break
        case nil where event == "end": break
        default: return .payloadEmpty
        }
        guard event == "start" else { return nil }
        guard case .string(let attributesType)? = aps["attributes-type"], !attributesType.isEmpty,
            case .object? = aps["attributes"]
        else { return .payloadEmpty }
        switch aps["alert"] {
        case .string?, .object?: return nil
        default: return .payloadEmpty
        }
    }

    static func isUUID(_ text: String) -> Bool {
        text.utf8.count == 36 && UUID(uuidString: text) != nil
    }
}
