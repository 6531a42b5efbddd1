/// What every store keeps of a notification besides its columns: the target, the payload and the
/// sending rules, as one JSON document — sealed like installation tokens when the target holds raw
/// tokens (they are secrets).
public struct NotificationSpec: Sendable, Equatable {
    public var target: NotificationTarget
    public var payload: NotificationPayload
    public var source: String?
    public var category: String?
    public var pushTime: String?
    public var respectPreferences: Bool
    /// The request that created the notification (`X-Request-Id`), carried into its jobs' logs.
    public var requestID: String?
    public var waitsForChannel: Bool
    public var updatable: Bool
    public var revision: NotificationRevision?
    public var liveActivity: LiveActivityPush?
    public var template: TemplateUse?

    /// The spec of a notification.
    public init(_ notification: PushNotification) {
        target = notification.target
        payload = notification.payload
        source = notification.source
        category = notification.category
        pushTime = notification.pushTime
        respectPreferences = notification.respectPreferences
        requestID = notification.requestID
        waitsForChannel = notification.waitsForChannel
        updatable = notification.updatable
        revision = notification.revision
        liveActivity = notification.liveActivity
        template = notification.template
    }

    /// Reads a stored spec.
    /// - Throws: `HeraldError` `secret_key_mismatch` for a spec sealed under another key;
    ///   `internal` for one that is unreadable.
    public init(stored bytes: [UInt8], sealed: Bool, cipher: TokenCipher) throws(HeraldError) {
        let plain = sealed ? try cipher.open(bytes) : bytes
        do {
            let spec = try JSONObjectReader(try JSONValue.parse(plain))
            guard let target = spec.members["target"], let payload = spec.members["payload"] else {
                throw HeraldError.internal("Stored notification is unreadable.")
            }
            self.target = try NotificationTarget(parsing: target, stored: true)
            let live = spec.members["live_activity"]
            let template = spec.members["template"]
            revision = try spec.members["revision"].map { (value) throws(HeraldError) in
                try NotificationRevision(stored: value)
            }
            self.payload = try NotificationPayload(
                parsing: payload, requiringContent: live == nil && template == nil && revision?.removal != true)
            source = try spec.string("source")
            category = try spec.string("category")
            pushTime = try spec.string("push_time")
            respectPreferences = try spec.bool("respect_preferences") ?? true
            requestID = try spec.string("request_id")
            waitsForChannel = try spec.bool("waits_for_channel") ?? false
            updatable = try spec.bool("updatable") ?? false
            liveActivity = try spec.members["live_activity"].map { (value) throws(HeraldError) in
                try LiveActivityPush(stored: value)
            }
            self.template = try template.map { (value) throws(HeraldError) in try TemplateUse(stored: value) }
        } catch let error as HeraldError {
            throw error
        } catch {
            throw HeraldError.internal("Stored notification is unreadable.")
        }
    }

    /// The bytes to store, and whether they are sealed.
    /// - Throws: `HeraldError` when sealing fails.
    public func stored(cipher: TokenCipher) throws(HeraldError) -> (bytes: [UInt8], sealed: Bool) {
        var spec: [String: JSONValue] = [
            "target": target.json, "payload": payload.json, "respect_preferences": .bool(respectPreferences),
        ]
        spec["source"] = source.map(JSONValue.string)
        spec["category"] = category.map(JSONValue.string)
        spec["push_time"] = pushTime.map(JSONValue.string)
        spec["request_id"] = requestID.map(JSONValue.string)
        if waitsForChannel { spec["waits_for_channel"] = .bool(true) }
        if updatable { spec["updatable"] = .bool(true) }
        spec["revision"] = revision?.json
        spec["live_activity"] = liveActivity?.json
        spec["template"] = template?.json
        let bytes = JSONValue.object(spec).serialized()
        if target.holdsTokens { return (try cipher.seal(bytes), true) }
        return (bytes, false)
    }
}
