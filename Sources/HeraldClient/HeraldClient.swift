import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Herald from the device's side: register the push token, keep it current, set the
/// installation's preferences, report that the user opened a notification, unregister.
///
/// ```swift
/// let herald = HeraldClient(
///     baseURL: URL(string: "https://push.example.com")!, clientKey: "hck_…",
///     userToken: { try await session.accessToken })
/// try await herald.register(deviceToken: deviceToken, channels: ["news"])
/// try await herald.reportOpen(userInfo: response.notification.request.content.userInfo)
/// ```
///
/// The installation id is kept in an ``InstallationStore`` (`UserDefaults` on Apple platforms, a
/// file elsewhere). Calls are serialized; each is retried on `429`, `5xx` and network failures per
/// ``Configuration/retry``, and fails with ``HeraldClientError``.
public actor HeraldClient {
    /// Where and how the client calls Herald.
    public nonisolated let configuration: Configuration
    private let store: any InstallationStore
    let api: NativeAPIClient
    /// The stored installation once read: nil not read yet, `.some(nil)` none.
    private var current: RegisteredInstallation??

    /// A client.
    /// - Parameters:
    ///   - store: Where the installation is kept; nil for the platform's default.
    ///   - session: The URLSession requests go through.
    public init(
        configuration: Configuration, store: (any InstallationStore)? = nil, session: URLSession = .shared
    ) {
        self.configuration = configuration
        self.store = store ?? defaultInstallationStore()
        self.api = NativeAPIClient(configuration: configuration, session: session)
    }

    /// A client for `baseURL` with the app's client key, and the signed-in user's token when
    /// there is one (see ``Configuration/userToken``).
    public init(
        baseURL: URL, clientKey: String, appID: String? = nil, store: (any InstallationStore)? = nil,
        userToken: @escaping @Sendable () async throws -> String? = { nil }
    ) {
        self.init(
            configuration: Configuration(baseURL: baseURL, clientKey: clientKey, appID: appID, userToken: userToken),
            store: store)
    }

    // MARK: Registration

    /// The installation this device registered, if any.
    /// - Throws: When the store cannot be read.
    public func installation() async throws -> RegisteredInstallation? {
        if let current { return current }
        let loaded = try await store.load()
        current = .some(loaded)
        return loaded
    }

    /// Registers an APNs device token (`application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`),
    /// sent as lowercase hex. See ``register(_:)``.
    /// - Parameters:
    ///   - platform: nil for the running platform.
    ///   - locale: BCP 47; by default the current locale's language and region (`en-US`).
    ///   - timeZone: By default the current one.
    /// - Throws: ``HeraldClientError`` (`unknown_platform` off Apple platforms without `platform`).
    @discardableResult
    public func register(
        deviceToken: Data, platform: Platform? = nil, service: Service = .apns, environment: Environment? = nil,
        userID: String? = nil, deviceID: String? = nil, channels: [String]? = nil,
        locale: String? = HeraldClient.currentLocale, timeZone: TimeZone = .current, badge: Int? = nil,
        appVersion: String? = HeraldClient.currentAppVersion, bundleID: String? = Bundle.main.bundleIdentifier,
        attributes: [String: HeraldJSON]? = nil
    ) async throws -> Installation {
        try await register(
            deviceToken: DeviceToken.hex(deviceToken), platform: platform, service: service, environment: environment,
            userID: userID, deviceID: deviceID, channels: channels, locale: locale, timeZone: timeZone, badge: badge,
            appVersion: appVersion, bundleID: bundleID, attributes: attributes)
    }

    /// Registers a token given as text (an FCM registration token, an APNs token already in hex),
    /// as the `Data` variant does.
    /// - Throws: ``HeraldClientError``.
    @discardableResult
    public func register(
        deviceToken: String, platform: Platform? = nil, service: Service = .apns, environment: Environment? = nil,
        userID: String? = nil, deviceID: String? = nil, channels: [String]? = nil,
        locale: String? = HeraldClient.currentLocale, timeZone: TimeZone = .current, badge: Int? = nil,
        appVersion: String? = HeraldClient.currentAppVersion, bundleID: String? = Bundle.main.bundleIdentifier,
        attributes: [String: HeraldJSON]? = nil
    ) async throws -> Installation {
        guard let platform = platform ?? .current else { throw HeraldClientError.unknownPlatform }
        return try await register(
            Registration(
                token: deviceToken, platform: platform, service: service, environment: environment, userID: userID,
                deviceID: deviceID, channels: channels, locale: locale, timeZone: Self.zoneName(timeZone), badge: badge,
                appVersion: appVersion, bundleID: bundleID, attributes: attributes))
    }

    /// Registers the device and keeps the installation in the store.
    ///
    /// A device registered before keeps its installation: a new token (same service) updates the
    /// stored installation in place (`PATCH`); the same token registers again (`POST`, which the
    /// server matches to the same installation). When the server no longer has the stored
    /// installation, a new one is registered.
    /// - Throws: ``HeraldClientError`` with the server's code (`invalid_token`, `invalid_locale`, …).
    @discardableResult
    public func register(_ registration: Registration) async throws -> Installation {
        if let stored = try await installation(), stored.registration.service == registration.service,
            stored.registration.token != registration.token
        {
            let answer = try await api.call(
                "PATCH", "/v1/installations/\(stored.id)", body: try Self.changes(registration), accepting: [404])
            if answer.status != 404 {
                let updated = try answer.decode(Installation.self)
                try await keep(RegisteredInstallation(id: updated.id, registration: registration))
                return updated
            }
        }
        let answer = try await api.call("POST", "/v1/installations", body: try Self.encode(registration))
        let created = try answer.decode(Installation.self)
        try await keep(RegisteredInstallation(id: created.id, registration: registration))
        return created
    }

    /// Registers a new APNs token for the stored installation, keeping its id; nothing is sent when
    /// the token is the one registered.
    /// - Returns: The updated installation; nil when the token had not changed.
    /// - Throws: ``HeraldClientError`` (`not_registered` before any registration).
    @discardableResult
    public func refresh(deviceToken: Data) async throws -> Installation? {
        try await refresh(deviceToken: DeviceToken.hex(deviceToken))
    }

    /// Registers a new token given as text, as the `Data` variant does.
    /// - Throws: ``HeraldClientError``.
    @discardableResult
    public func refresh(deviceToken: String) async throws -> Installation? {
        guard var registration = try await installation()?.registration else {
            throw HeraldClientError.notRegistered
        }
        guard registration.token != deviceToken else { return nil }
        registration.token = deviceToken
        return try await register(registration)
    }

    /// Deletes the installation from Herald (sign-out, push turned off) and forgets it. An
    /// installation the server no longer has counts as deleted.
    /// - Throws: ``HeraldClientError``; nothing is forgotten then.
    public func unregister() async throws {
        guard let stored = try await installation() else { return }
        _ = try await api.call("DELETE", "/v1/installations/\(stored.id)", accepting: [404])
        try await keep(nil)
    }

    // MARK: Preferences

    /// The installation's preferences (the defaults when none were set). Needs a user token.
    /// - Throws: ``HeraldClientError`` (`not_registered`, `forbidden` with the client key alone).
    public func preferences() async throws -> Preferences {
        let id = try await registeredID()
        return try await api.call("GET", "/v1/installations/\(id)/preferences").decode(Preferences.self)
    }

    /// Replaces the installation's preferences. Needs a user token.
    /// - Returns: The preferences as stored.
    /// - Throws: ``HeraldClientError`` with the field at fault (`invalid_timezone`, …).
    @discardableResult
    public func setPreferences(_ preferences: Preferences) async throws -> Preferences {
        let id = try await registeredID()
        return try await api.call(
            "PUT", "/v1/installations/\(id)/preferences", body: try Self.encode(preferences)
        ).decode(Preferences.self)
    }

    // MARK: Opens

    /// Reports that the user opened a notification, from its `userInfo` (APNs: `herald.id`;
    /// through FCM: `herald_id`). Counted once per installation however often it is reported.
    /// - Throws: ``HeraldClientError`` (`no_notification_id` when Herald did not send it,
    ///   `not_found` for a notification of another app).
    @discardableResult
    public nonisolated func reportOpen(
        userInfo: [AnyHashable: Any], openedAt: Date? = nil
    ) async throws -> OpenReport {
        guard let id = Self.notificationID(in: userInfo) else { throw HeraldClientError.noNotificationID }
        return try await reportOpen(notificationID: id, openedAt: openedAt)
    }

    /// Reports that the user opened the notification with this id.
    /// - Parameter openedAt: When; nil is when Herald receives the report.
    /// - Throws: ``HeraldClientError`` (`not_registered`, `not_found`).
    @discardableResult
    public func reportOpen(notificationID: String, openedAt: Date? = nil) async throws -> OpenReport {
        let id = try await registeredID()
        var body = ["notification_id": notificationID, "installation_id": id]
        body["opened_at"] = openedAt.map(Timestamp.format)
        let answer = try await api.call("POST", "/v1/opens", body: try Self.encode(body))
        struct Body: Decodable {
            var openedAt: String
            enum CodingKeys: String, CodingKey { case openedAt = "opened_at" }
        }
        let text = try answer.decode(Body.self).openedAt
        guard let at = Timestamp.parse(text) else {
            throw HeraldClientError.invalidResponse(status: answer.status, "opened_at is not a date-time: \(text)")
        }
        return OpenReport(
            notificationID: notificationID, installationID: id, openedAt: at, counted: answer.status == 201)
    }

    /// The Herald notification id a notification's payload carries: `herald.id` (APNs) or
    /// `herald_id` (FCM data); nil when Herald did not send it.
    public static func notificationID(in userInfo: [AnyHashable: Any]) -> String? {
        if let herald = userInfo["herald"] as? [AnyHashable: Any], let id = herald["id"] as? String { return id }
        return userInfo["herald_id"] as? String
    }

    // MARK: Defaults

    /// The current locale as BCP 47 language, script and region (`en-US`, `zh-Hans-CN`): the parts
    /// Herald takes (a numeric region such as `001` is left out); nil without a language.
    public static var currentLocale: String? {
        func letters(_ text: String?, _ counts: ClosedRange<Int>) -> String? {
            guard let text, counts.contains(text.count), text.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                return nil
            }
            return text
        }
        let language = Locale.current.language
        guard let code = letters(language.languageCode?.identifier, 2...3) else { return nil }
        let rest = [letters(language.script?.identifier, 4...4), letters(language.region?.identifier, 2...2)]
        return ([code] + rest.compactMap { $0 }).joined(separator: "-")
    }

    /// The app's `CFBundleShortVersionString`, if it has one.
    public static var currentAppVersion: String? {
        Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String
    }

    // MARK: Internals

    /// The zone's IANA name as Herald takes it: the `Etc/` aliases of UTC (what Linux calls its
    /// clock's zone) as `UTC`.
    static func zoneName(_ zone: TimeZone) -> String {
        ["Etc/UTC", "Etc/Universal", "Etc/Zulu", "Etc/GMT", "Etc/Greenwich"].contains(zone.identifier)
            ? "UTC" : zone.identifier
    }

    /// A request body: the value as JSON, keys sorted.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(value)
    }

    /// A registration as a `PATCH` body: the service cannot change, absent fields stay as stored.
    private static func changes(_ registration: Registration) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: encode(registration)) as? [String: Any] ?? [:]
        object["service"] = nil
        return try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
    }

    /// The stored installation's id.
    /// - Throws: ``HeraldClientError/notRegistered`` before any registration; when the store cannot be read.
    func registeredID() async throws -> String {
        guard let id = try await installation()?.id else { throw HeraldClientError.notRegistered }
        return id
    }

    private func keep(_ installation: RegisteredInstallation?) async throws {
        try await store.save(installation)
        current = .some(installation)
    }
}

/// What reporting an open did.
public struct OpenReport: Sendable, Equatable {
    public var notificationID: String
    public var installationID: String
    /// When the open was recorded: the first report's time for a repeat.
    public var openedAt: Date
    /// True for the first report of this open (counted), false for a repeat.
    public var counted: Bool

    /// Creates a report.
    public init(notificationID: String, installationID: String, openedAt: Date, counted: Bool) {
        self.notificationID = notificationID
        self.installationID = installationID
        self.openedAt = openedAt
        self.counted = counted
    }
}
