import HeraldCore

/// One push to one browser subscription: the payload to encrypt and the RFC 8030 delivery options.
public struct WebPushNotification: Sendable {
    /// Four weeks: the default time to live, and the most Herald asks for (push services cap TTL
    /// near there anyway; FCM at four weeks).
    public static let maxTTL = 28 * 24 * 3600

    /// Where the push goes and the keys it is encrypted for.
    public var subscription: WebPushSubscription
    /// The plaintext payload (usually JSON for the service worker), at most
    /// ``WebPushEncryptor/maxPlaintextBytes``; empty sends a push without a body, which wakes the
    /// service worker with `event.data` null.
    public var payload: [UInt8]
    /// Seconds the push service keeps the push for a browser that is offline (RFC 8030 §5.2); 0
    /// means deliver now or never. Always sent, clamped to `0...maxTTL`.
    public var ttl: Int {
        didSet { ttl = Self.clamp(ttl) }
    }
    /// The `Urgency` header (RFC 8030 §5.3); always sent.
    public var urgency: WebPushUrgency
    /// Replaces an undelivered push with the same topic (RFC 8030 §5.4); see
    /// ``WebPushTopic/derive(fromCollapseID:)`` to make one from a collapse id.
    public var topic: String?

    /// Creates a notification; `ttl` is clamped to `0...maxTTL`.
    public init(
        subscription: WebPushSubscription, payload: [UInt8], ttl: Int = maxTTL, urgency: WebPushUrgency = .normal,
        topic: String? = nil
    ) {
        self.subscription = subscription
        self.payload = payload
        self.ttl = Self.clamp(ttl)
        self.urgency = urgency
        self.topic = topic
    }

    /// Checks what would be refused before a byte is sent: endpoint, keys, payload size, topic.
    /// - Throws: `WebPushError` naming the field at fault.
    public func validate() throws(WebPushError) {
        try subscription.validateForWebPush()
        guard payload.count <= WebPushEncryptor.maxPlaintextBytes else {
            throw .payloadTooLarge(size: payload.count)
        }
        if let topic, !WebPushTopic.isValid(topic) { throw .invalidTopic() }
    }

    private static func clamp(_ ttl: Int) -> Int {
        min(max(0, ttl), maxTTL)
    }
}
