/// What the fan-out needs of an installation to send to it, and no more: a broadcast reads, copies
/// and frees one of these per device, so it leaves out channels, attributes and the rest of
/// ``Installation``.
public struct InstallationAddress: Sendable, Equatable {
    public var installationID: String
    public var token: PushToken
    public var platform: Platform
    public var service: PushService
    public var environment: PushEnvironment
    /// The device's IANA time zone (device-local push times, quiet hours).
    public var timezone: String?
    /// The app's bundle id on the device (the APNs topic when it differs from the app's).
    public var bundleID: String?

    /// Creates a target from its parts.
    public init(
        installationID: String, token: PushToken, platform: Platform, service: PushService,
        environment: PushEnvironment, timezone: String?, bundleID: String?
    ) {
        self.installationID = installationID
        self.token = token
        self.platform = platform
        self.service = service
        self.environment = environment
        self.timezone = timezone
        self.bundleID = bundleID
    }

    /// The target of a whole installation.
    public init(_ installation: Installation) {
        self.init(
            installationID: installation.id, token: installation.token, platform: installation.platform,
            service: installation.service, environment: installation.environment, timezone: installation.timezone,
            bundleID: installation.bundleID)
    }
}
