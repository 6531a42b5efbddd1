import HeraldCore

/// FCM HTTP v1's `Message` (projects.messages): one target, a notification, string data, and the
/// per-platform blocks.
public struct FCMMessage: Sendable, Equatable {
    /// Who receives the message: exactly one of these.
    public enum Target: Sendable, Equatable {
        case token(String)
        case topic(String)
        case condition(String)
    }

    /// The cross-platform `notification` block.
    public struct Notification: Sendable, Equatable {
        public var title: String?
        public var body: String?
        public var image: String?

        /// Creates a notification block.
        public init(title: String? = nil, body: String? = nil, image: String? = nil) {
            self.title = title
            self.body = body
            self.image = image
        }
    }

    /// `android` (AndroidConfig).
    public struct Android: Sendable, Equatable {
        /// `normal` or `high`.
        public enum Priority: String, Sendable { case normal, high }

        public var collapseKey: String?
        public var priority: Priority?
        /// Seconds; sent as `"<seconds>s"`.
        public var ttl: Int?
        public var restrictedPackageName: String?
        public var data: [String: String]?
        public var directBootOK: Bool?
        /// `android.notification` (AndroidNotification), any of its fields: `channel_id`, `tag`,
        /// `color`, `icon`, `sound`, `image`, `click_action`, `notification_count`, `visibility`…
        public var notification: [String: JSONValue]?

        /// Creates an Android block.
        public init(
            collapseKey: String? = nil, priority: Priority? = nil, ttl: Int? = nil,
            restrictedPackageName: String? = nil, data: [String: String]? = nil, directBootOK: Bool? = nil,
            notification: [String: JSONValue]? = nil
        ) {
            self.collapseKey = collapseKey
            self.priority = priority
            self.ttl = ttl
            self.restrictedPackageName = restrictedPackageName
            self.data = data
            self.directBootOK = directBootOK
            self.notification = notification
        }
    }

    public var target: Target
    public var notification: Notification?
    /// Values must be strings, as FCM requires.
    public var data: [String: String]?
    public var android: Android?
    /// `apns` (ApnsConfig): `headers` and `payload`, passed through.
    public var apns: [String: JSONValue]?
    /// `webpush` (WebpushConfig): `headers`, `data`, `notification`, `fcm_options`, passed through.
    public var webpush: [String: JSONValue]?
    /// `fcm_options` (`analytics_label`).
    public var fcmOptions: [String: JSONValue]?

    /// Creates a message.
    public init(
        target: Target, notification: Notification? = nil, data: [String: String]? = nil, android: Android? = nil,
        apns: [String: JSONValue]? = nil, webpush: [String: JSONValue]? = nil, fcmOptions: [String: JSONValue]? = nil
    ) {
        self.target = target
        self.notification = notification
        self.data = data
        self.android = android
        self.apns = apns
        self.webpush = webpush
        self.fcmOptions = fcmOptions
    }

    /// FCM's limit on a message, in bytes of its JSON.
    public static let maxBytes = 4096

    /// The message as FCM's JSON (snake_case field names, as the REST API accepts them).
    public var json: JSONValue {
        var message: [String: JSONValue] = [:]
        switch target {
        case .token(let token): message["token"] = .string(token)
        case .topic(let topic): message["topic"] = .string(topic)
        case .condition(let condition): message["condition"] = .string(condition)
        }
        if let notification {
            var block: [String: JSONValue] = [:]
            if let title = notification.title { block["title"] = .string(title) }
            if let body = notification.body { block["body"] = .string(body) }
            if let image = notification.image { block["image"] = .string(image) }
            message["notification"] = .object(block)
        }
        if let data { message["data"] = .object(data.mapValues(JSONValue.string)) }
        if let android {
            var block: [String: JSONValue] = [:]
            if let value = android.collapseKey { block["collapse_key"] = .string(value) }
            if let value = android.priority { block["priority"] = .string(value.rawValue) }
            if let value = android.ttl { block["ttl"] = .string("\(value)s") }
            if let value = android.restrictedPackageName { block["restricted_package_name"] = .string(value) }
            if let value = android.data { block["data"] = .object(value.mapValues(JSONValue.string)) }
            if let value = android.directBootOK { block["direct_boot_ok"] = .bool(value) }
            if let value = android.notification { block["notification"] = .object(value) }
            message["android"] = .object(block)
        }
        if let apns { message["apns"] = .object(apns) }
        if let webpush { message["webpush"] = .object(webpush) }
        if let fcmOptions { message["fcm_options"] = .object(fcmOptions) }
        return .object(message)
    }

    /// Checks what FCM would refuse before sending: the token's shape and the size limit.
    /// - Throws: `FCMError` naming the field at fault.
    public func validate() throws(FCMError) {
        if case .token(let token) = target {
            do {
                try InstallationRules.validateFCMToken(token, field: "token")
            } catch {
                throw .invalidToken(error.message)
            }
        }
        let size = json.serialized().count
        guard size <= Self.maxBytes else { throw .messageTooLarge(size: size) }
    }
}
