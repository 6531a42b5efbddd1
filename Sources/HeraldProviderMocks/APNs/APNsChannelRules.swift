import Foundation
import HeraldCore

/// The request checks of APNs' broadcast API ("Sending broadcast push notification requests to APNs") and channel
/// management API ("Sending channel management requests to APNs"), as pure functions of the request. Each returns the
/// rejection APNs would answer with, from the table of "Handling error responses from Apple Push Notification
/// service", or nil when the request passes.
enum APNsChannelRules {
    static let broadcastPathPrefix = "/4/broadcasts/apps/"
    static let channelsPathPrefix = "/1/apps/"

    /// "The payload is limited to a maximum size of 5 KB (5,120 bytes)" for a broadcast, whatever its push type.
    static let maximumBroadcastPayloadSize = 5120

    /// The longest `apns-channel-id` the mock takes. Apple documents a limit ("greater than the allowed length") but
    /// not its value, and warns "don’t make assumptions on the channel ID size"; the mock's own channel IDs are 24
    /// characters.
    static let maximumChannelIDLength = 256

    /// The one push type a channel carries: `LiveActivity` in the creation body and the read answer.
    static let channelPushType = "LiveActivity"

    /// The members a channel creation body may have.
    static let creationBodyKeys: Set<String> = ["message-storage-policy", "push-type"]

    typealias Operation = MockAPNsChannelServer.RecordedRequest.Operation

    /// The bundle ID named by a broadcast path, `/4/broadcasts/apps/<bundle ID>`; `404 BadPath` otherwise.
    static func bundleID(inBroadcastPath path: String) -> Result<String, APNsRejection> {
        guard path.hasPrefix(broadcastPathPrefix) else { return .failure(.badPath) }
        return plainSegment(path.dropFirst(broadcastPathPrefix.count))
    }

    /// The bundle ID and operation of a channel management request: `/1/apps/<bundle ID>/channels` (create with
    /// `POST`, read with `GET`, delete with `DELETE`) or `/1/apps/<bundle ID>/all-channels` (list with `GET`).
    ///
    /// Another path is `404 BadPath` and another method on a known path `405 MethodNotAllowed` ("The specified
    /// `:method` value isn’t allowed.").
    static func operation(
        method: String, path: String
    ) -> Result<(bundleID: String, operation: Operation), APNsRejection> {
        guard path.hasPrefix(channelsPathPrefix) else { return .failure(.badPath) }
        let rest = path.dropFirst(channelsPathPrefix.count)
        guard let slash = rest.lastIndex(of: "/") else { return .failure(.badPath) }
        let bundleID: String
        switch plainSegment(rest[..<slash]) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let value): bundleID = value
        }
        let operation: Operation?
        switch (rest[rest.index(after: slash)...], method) {
        case ("channels", "POST"): operation = .create
        case ("channels", "GET"): operation = .read
        case ("channels", "DELETE"): operation = .delete
        case ("all-channels", "GET"): operation = .list
        case ("channels", _), ("all-channels", _): operation = nil
        default: return .failure(.badPath)
        }
        guard let operation else { return .failure(.methodNotAllowed) }
        return .success((bundleID, operation))
    }

    /// Checks the bundle ID of the path against the topics the credential covers.
    ///
    /// - `400 TopicDisallowed`: "The topic is not allowed. Ensure that no push type suffix is added to the bundle ID."
    /// - `403 TopicMismatch`: "The bundle IDs parsed from your token or certificate don’t include the topic present in
    ///   the path."
    static func checkBundleID(_ bundleID: String, allowedTopics: Set<String>) -> APNsRejection? {
        let suffixes = APNsRequestRules.topicSuffixes.values.compactMap { $0 }
        if suffixes.contains(where: { bundleID.hasSuffix($0) }) { return .topicDisallowed }
        return allowedTopics.contains(bundleID) ? nil : .topicMismatch
    }

    /// The `apns-channel-id` header: "a base64-encoded string that identifies the channel".
    ///
    /// - `400 MissingChannelId`: "The `apns-channel-id` header is missing."
    /// - `400 BadChannelId`: "The `apns-channel-id` header isn’t properly encoded, or it’s greater than the allowed
    ///   length."
    static func channelID(of request: TestHTTPRequest) -> Result<String, APNsRejection> {
        guard let channelID = request.header("apns-channel-id"), !channelID.isEmpty else {
            return .failure(.missingChannelID)
        }
        guard channelID.utf8.count <= maximumChannelIDLength, let bytes = Data(base64Encoded: channelID),
            !bytes.isEmpty
        else { return .failure(.badChannelID) }
        return .success(channelID)
    }

    /// Checks the optional `apns-request-id`: "The request identifier must be encoded as a UUID string."
    ///
    /// The broadcast table has no reason for a malformed request identifier; the mock answers with the one it has for
    /// a malformed message identifier, `400 BadMessageId` ("The `apns-id` value is invalid."). Apple's token-based
    /// broadcast sample sends `apns-id` instead, so that header is held to the same rule.
    static func checkRequestID(of request: TestHTTPRequest) -> APNsRejection? {
        for name in ["apns-request-id", "apns-id"] {
            if let id = request.header(name), !APNsRequestRules.isUUID(id) { return .badMessageID }
        }
        return nil
    }

    /// The request identifier to answer with: the request's own when it is a UUID, a new lowercase one otherwise.
    static func answerRequestID(for request: TestHTTPRequest) -> String {
        let requested = request.header("apns-request-id") ?? request.header("apns-id")
        return requested.flatMap { APNsRequestRules.isUUID($0) ? $0 : nil } ?? UUID().uuidString.lowercased()
    }

    /// Checks a broadcast's `apns-push-type`, `apns-priority` and `apns-expiration`, which the broadcast API all
    /// requires, against the channel's message storage policy.
    ///
    /// - `400 MissingPushType`: "The `apns-push-type` attribute is missing."
    /// - `400 InvalidPushType`: "The `apns-push-type` attribute is set to an incorrect value. The only allowed value
    ///   is `LiveActivity`." Apple spells the value three ways (`Liveactivity` in the header table, `liveactivity` in
    ///   its samples, `LiveActivity` here), so case is ignored.
    /// - `400 BadPriority`: "The `apns-priority` header is an invalid value." (10, 5 or 1; a missing one too, as the
    ///   header is required and no other reason fits).
    /// - `400 BadExpirationDate`: "The `apns-expiration header` is an invalid epoch timestamp. For channels with a
    ///   `No Messages Stored` storage policy, you can only specify a `0` expiration value." (a missing one too).
    static func checkBroadcastHeaders(
        of request: TestHTTPRequest, policy: APNsChannelRegistry.MessageStoragePolicy
    ) -> APNsRejection? {
        guard let pushType = request.header("apns-push-type"), !pushType.isEmpty else { return .missingPushType }
        guard pushType.lowercased() == "liveactivity" else { return .invalidPushType }
        guard let priority = request.header("apns-priority"), ["10", "5", "1"].contains(priority) else {
            return .badPriority
        }
        guard let expiration = request.header("apns-expiration"), !expiration.isEmpty,
            expiration.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        else { return .badExpirationDate }
        if policy == .noMessageStored, expiration.contains(where: { $0 != "0" }) { return .badExpirationDate }
        return checkRequestID(of: request)
    }

    /// Checks a broadcast's body: at most 5,120 bytes (`413 PayloadTooLarge`), present (`400 PayloadEmpty`), JSON
    /// (`400 BadRequestPayload`: "The JSON Request payload is unparseable."), an object with an `aps` object
    /// (`400 PayloadEmpty`), and a Live Activity update or end (``APNsRequestRules/checkLiveActivity(_:events:)``:
    /// "You can’t use broadcast push notifications to start a Live Activity").
    static func checkBroadcastPayload(_ body: [UInt8], json: JSONValue?) -> APNsRejection? {
        if body.count > maximumBroadcastPayloadSize { return .payloadTooLarge }
        if body.isEmpty { return .payloadEmpty }
        guard let json else { return .badRequestPayload }
        guard case .object(let aps)? = json.objectValue?["aps"] else { return .payloadEmpty }
        return APNsRequestRules.checkLiveActivity(aps, events: ["update", "end"])
    }

    /// The message storage policy of a channel creation body, `{"message-storage-policy": 0|1, "push-type":
    /// "LiveActivity"}`.
    ///
    /// - `400 PayloadEmpty` for no body; `400 BadRequestPayload` for one that is not a JSON object.
    /// - `400 BadRequestParams` ("The JSON Request payload contained an unrecognizable attribute.") for a member other
    ///   than those two, and for a `message-storage-policy` that is missing or not `0` or `1`: the table has no reason
    ///   of its own for those.
    /// - `400 MissingPushType` / `400 InvalidPushType` for a `push-type` that is missing or not `LiveActivity`.
    static func creationPolicy(
        _ body: [UInt8], json: JSONValue?
    ) -> Result<APNsChannelRegistry.MessageStoragePolicy, APNsRejection> {
        if body.isEmpty { return .failure(.payloadEmpty) }
        guard let object = json?.objectValue else { return .failure(.badRequestPayload) }
        if object.keys.contains(where: { !creationBodyKeys.contains($0) }) { return .failure(.badRequestParams) }
        guard let pushType = object["push-type"] else { return .failure(.missingPushType) }
        guard pushType == .string(channelPushType) else { return .failure(.invalidPushType) }
        guard case .number(let number)? = object["message-storage-policy"],
            let value = number.integerValue.flatMap({ Int(exactly: $0) }),
            let policy = APNsChannelRegistry.MessageStoragePolicy(rawValue: value)
        else { return .failure(.badRequestParams) }
        return .success(policy)
    }

    /// A path segment with no `/` or query, or `404 BadPath`.
    private static func plainSegment(_ segment: Substring) -> Result<String, APNsRejection> {
        if segment.isEmpty || segment.contains("/") || segment.contains("?") { return .failure(.badPath) }
        return .success(String(segment))
    }
}
