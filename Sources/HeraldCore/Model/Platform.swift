/// The kind of device an installation runs on.
public enum Platform: String, Sendable, CaseIterable, Codable {
    case ios, ipados, watchos, tvos, macos, android, web
    /// A desktop or server program (Linux, Windows), reached through the direct channel only.
    case desktop

    /// Whether the platform is one of Apple's.
    public var isApple: Bool {
        switch self {
        case .ios, .ipados, .watchos, .tvos, .macos: true
        case .android, .web, .desktop: false
        }
    }
}

/// The push service that delivers to an installation.
public enum PushService: String, Sendable, CaseIterable, Codable {
    case apns, fcm, webpush, sns
    /// Herald's own WebSocket channel only: the device has no cloud token, and its notifications
    /// wait for it to connect (`herald listen`, a desktop or LAN client).
    case direct

    /// The platforms this service can deliver to.
    public var platforms: Set<Platform> {
        switch self {
        case .apns: [.ios, .ipados, .watchos, .tvos, .macos]
        // FCM delivers to Android natively, to Apple devices through APNs, and to browsers.
        case .fcm: [.android, .ios, .ipados, .macos, .web]
        case .webpush: [.web]
        // SNS platform applications exist for APNs and FCM (GCM) endpoints.
        case .sns: [.ios, .ipados, .macos, .android]
        case .direct: Set(Platform.allCases)
        }
    }
}

/// The provider environment an installation's token belongs to (APNs sandbox or production).
public enum PushEnvironment: String, Sendable, CaseIterable, Codable {
    case sandbox, production
}
