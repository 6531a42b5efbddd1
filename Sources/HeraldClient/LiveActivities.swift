import Foundation

#if canImport(ActivityKit) && os(iOS)
    import ActivityKit
#endif

// Live Activity tokens: `/v1/installations/{id}/live-activities`.
extension HeraldClient {
    /// The attributes key under which an activity Herald started by push-to-start carries Herald's
    /// id for it. Give the app's `ActivityAttributes` a property with this coding key to keep it:
    /// ``keep(_:)`` reports the activity's token under that id.
    public static let activityIDAttribute = "herald-activity-id"

    /// Stores the device's push-to-start token for an attributes type, replacing the one stored
    /// before: Herald can then start an activity of that type on this device. Sent as lowercase hex.
    /// - Parameter attributesType: The Swift name of the app's `ActivityAttributes` type.
    /// - Returns: What Herald stored.
    /// - Throws: ``HeraldClientError`` (`not_registered`; the server's `invalid_token`,
    ///   `unsupported_service` for an installation that does not deliver through APNs).
    @discardableResult
    public func registerPushToStartToken(_ token: Data, attributesType: String) async throws -> LiveActivityToken {
        let id = try await registeredID()
        return try await api.call(
            "PUT", "/v1/installations/\(id)/live-activities/push-to-start/\(attributesType)",
            body: try Self.encode(["token": DeviceToken.hex(token)])
        ).decode(LiveActivityToken.self)
    }

    /// Forgets the push-to-start token of an attributes type. A token Herald does not have counts as
    /// forgotten.
    /// - Throws: ``HeraldClientError``.
    public func removePushToStartToken(attributesType: String) async throws {
        let id = try await registeredID()
        _ = try await api.call(
            "DELETE", "/v1/installations/\(id)/live-activities/push-to-start/\(attributesType)", accepting: [404])
    }

    /// Stores a running activity's push token, replacing the one stored before: Herald's updates of
    /// the activity then reach this device. An activity the app started itself is created by its
    /// first token.
    /// - Parameters:
    ///   - activityID: Herald's id for the activity (``activityIDAttribute`` in its attributes when
    ///     Herald started it), else the app's own (`Activity.id`).
    ///   - attributesType: The Swift name of the activity's `ActivityAttributes` type.
    /// - Returns: What Herald stored.
    /// - Throws: ``HeraldClientError`` (`not_registered`; the server's `invalid_token`, `invalid_id`).
    @discardableResult
    public func registerActivityToken(
        _ token: Data, activityID: String, attributesType: String
    ) async throws -> LiveActivityToken {
        let id = try await registeredID()
        return try await api.call(
            "PUT", "/v1/installations/\(id)/live-activities/\(activityID)",
            body: try Self.encode(["attributes_type": attributesType, "token": DeviceToken.hex(token)])
        ).decode(LiveActivityToken.self)
    }

    /// Tells Herald the activity ended on this device: it forgets the activity's token. An activity
    /// Herald does not have counts as ended.
    /// - Throws: ``HeraldClientError``.
    public func endActivity(activityID: String) async throws {
        let id = try await registeredID()
        _ = try await api.call("DELETE", "/v1/installations/\(id)/live-activities/\(activityID)", accepting: [404])
    }

    /// The installation's push-to-start tokens and the activities it takes part in, as Herald has
    /// them (tokens by their last characters only).
    /// - Throws: ``HeraldClientError`` (`not_registered`).
    public func liveActivityTokens() async throws -> LiveActivityTokens {
        let id = try await registeredID()
        return try await api.call("GET", "/v1/installations/\(id)/live-activities").decode(LiveActivityTokens.self)
    }

    /// Registers each push-to-start token `tokens` yields (`Activity.pushToStartTokenUpdates`), a
    /// newer one replacing the older, until the sequence ends.
    /// - Throws: The first error of a registration (``HeraldClientError``, after the client's
    ///   retries) or of the sequence, which ends the loop; `CancellationError` when the task is
    ///   cancelled.
    public nonisolated func keepPushToStartTokens<Tokens: AsyncSequence>(
        _ tokens: Tokens, attributesType: String
    ) async throws where Tokens.Element == Data {
        for try await token in tokens {
            try await registerPushToStartToken(token, attributesType: attributesType)
        }
        // A cancelled task ends some sequences (AsyncStream) as if they had finished.
        try Task.checkCancellation()
    }

    /// Registers each push token of one activity that `tokens` yields (`Activity.pushTokenUpdates`),
    /// a newer one replacing the older; when the sequence ends (the activity ended), calls
    /// ``endActivity(activityID:)``.
    /// - Throws: As ``keepPushToStartTokens(_:attributesType:)``; the activity is not ended then.
    public nonisolated func keepActivityTokens<Tokens: AsyncSequence>(
        _ tokens: Tokens, activityID: String, attributesType: String
    ) async throws where Tokens.Element == Data {
        for try await token in tokens {
            try await registerActivityToken(token, activityID: activityID, attributesType: attributesType)
        }
        // Cancelled, the activity may well be running still: only a sequence that finished ends it.
        try Task.checkCancellation()
        try await endActivity(activityID: activityID)
    }

    /// Herald's id for an activity it started: the ``activityIDAttribute`` member of the activity's
    /// attributes as JSON; nil when they have none (the app started the activity, or its attributes
    /// type does not keep the key).
    public static func heraldActivityID(in attributes: some Encodable) -> String? {
        guard let json = try? JSONEncoder().encode(attributes),
            let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any]
        else { return nil }
        return object[activityIDAttribute] as? String
    }
}

#if canImport(ActivityKit) && os(iOS)
    extension HeraldClient {
        /// Keeps Herald's push-to-start token for `Attributes` current: see
        /// ``keepPushToStartTokens(_:attributesType:)``. Runs until the task is cancelled (then throws
        /// `CancellationError`).
        /// - Throws: As ``keepPushToStartTokens(_:attributesType:)``.
        @available(iOS 17.2, *)
        public nonisolated func keepPushToStartTokens<Attributes: ActivityAttributes>(
            for attributes: Attributes.Type
        ) async throws {
            try await keepPushToStartTokens(
                Activity<Attributes>.pushToStartTokenUpdates, attributesType: String(describing: Attributes.self))
        }

        /// Keeps Herald's push token for a running activity current, under Herald's id for it when
        /// Herald started it (see ``heraldActivityID(in:)``), else `activity.id`; tells Herald when
        /// it ends. See ``keepActivityTokens(_:activityID:attributesType:)``.
        /// - Throws: As ``keepActivityTokens(_:activityID:attributesType:)``.
        @available(iOS 16.1, *)
        public nonisolated func keep<Attributes: ActivityAttributes>(_ activity: Activity<Attributes>) async throws {
            try await keepActivityTokens(
                activity.pushTokenUpdates, activityID: Self.heraldActivityID(in: activity.attributes) ?? activity.id,
                attributesType: String(describing: Attributes.self))
        }
    }
#endif

/// A Live Activity token as Herald keeps it: a push-to-start token (no ``activityID``) or the
/// installation's part in one activity.
public struct LiveActivityToken: Sendable, Equatable, Decodable {
    /// The activity's id; nil for a push-to-start token.
    public var activityID: String?
    /// The Swift name of the `ActivityAttributes` type.
    public var attributesType: String
    /// The token's last eight characters; nil for an installation taking part without a token.
    public var tokenSuffix: String?
    /// When Herald stored it.
    public var updatedAt: Date

    /// Creates a token record.
    public init(activityID: String? = nil, attributesType: String, tokenSuffix: String?, updatedAt: Date) {
        self.activityID = activityID
        self.attributesType = attributesType
        self.tokenSuffix = tokenSuffix
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case activityID = "activity_id"
        case attributesType = "attributes_type"
        case tokenSuffix = "token_suffix"
        case updatedAt = "updated_at"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        activityID = try container.decodeIfPresent(String.self, forKey: .activityID)
        attributesType = try container.decode(String.self, forKey: .attributesType)
        tokenSuffix = try container.decodeIfPresent(String.self, forKey: .tokenSuffix)
        let text = try container.decode(String.self, forKey: .updatedAt)
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .updatedAt, in: container, debugDescription: "not an RFC 3339 date-time: \(text)")
        }
        updatedAt = date
    }
}

/// An installation's Live Activity tokens (``HeraldClient/liveActivityTokens()``).
public struct LiveActivityTokens: Sendable, Equatable, Decodable {
    /// One per attributes type.
    public var pushToStart: [LiveActivityToken]
    /// The activities the installation takes part in.
    public var activities: [LiveActivityToken]

    /// Creates a list.
    public init(pushToStart: [LiveActivityToken], activities: [LiveActivityToken]) {
        self.pushToStart = pushToStart
        self.activities = activities
    }

    enum CodingKeys: String, CodingKey {
        case pushToStart = "push_to_start"
        case activities
    }
}
