import Foundation

/// The device registry: app keys, installations and their preferences, and the clean-up of dead ones
/// (what the engine changes of it is ``DispatchRegistry``; the rest is what the API and the dialects
/// read and change).
public protocol InstallationRegistry: DispatchRegistry {
    /// The stored keys of an app whose keys Herald generated, if any.
    func appKeys(appID: String) async throws -> AppKeys?

    /// Stores generated keys for an app unless it has some already.
    /// - Returns: The keys now stored (the existing ones when another node won the race).
    func insertAppKeys(_ keys: AppKeys) async throws -> AppKeys

    /// Registers many installations in one transaction (bulk import), each as
    /// ``register(_:appID:now:)`` would.
    func register(
        batch registrations: [InstallationRegistration], appID: String, now: Date
    ) async throws -> [RegistrationResult]

    /// One installation of an app.
    func installation(appID: String, id: String) async throws -> Installation?

    /// The installation of an app holding `token` for `service`, if any (found by the token's keyed
    /// hash, ``TokenCipher/index(_:service:)``): how the dialects that address a device by its push
    /// token find it.
    func installation(appID: String, service: PushService, token: String) async throws -> Installation?

    /// An app's installations with this client device id (at most one per service), whichever
    /// user they belong to, oldest first.
    func installations(appID: String, deviceID: String) async throws -> [Installation]

    /// A page of an app's installations in id order, starting after `cursor.after`.
    func installations(
        appID: String, filter: InstallationFilter, page: PageRequest
    ) async throws
        -> [Installation]

    /// An app's installations, valid or not, that a query selects, compiled to the store's own
    /// query: sorted by `order` (see ``QueryOrder``), then by id; the first `skip` left out, at
    /// most `limit` returned. A dialect's listing (`GET /1.1/installations`) reads them so.
    /// - Throws: What the store throws.
    func installations(
        appID: String, matching query: InstallationQuery, order: [QueryOrder<QueryField>], skip: Int, limit: Int
    ) async throws -> [Installation]

    /// How many of an app's installations, valid or not, a query selects.
    /// - Throws: What the store throws.
    func countInstallations(appID: String, matching query: InstallationQuery) async throws -> Int

    // MARK: Preferences

    /// The preferences of an installation, nil when it has none stored.
    func preferences(appID: String, installationID: String) async throws -> Preferences?

    /// Replaces an installation's preferences; false when the installation does not exist.
    func setPreferences(appID: String, installationID: String, preferences: Preferences, now: Date) async throws -> Bool

    /// Stores preferences for an installation that has none (atomically: a concurrent write is
    /// never replaced); false when it has some already or does not exist.
    func insertPreferences(
        appID: String, installationID: String, preferences: Preferences, now: Date
    ) async throws -> Bool

    // MARK: Moving between stores

    /// A page of every app's installations as stored — tokens still sealed — with their
    /// preferences, in `(app, id)` order after `after`: what `herald export` writes.
    func exportInstallations(after: ExportCursor?, limit: Int) async throws -> [ExportedInstallation]

    /// Stores installations exported by a store with the same master key, keeping their ids,
    /// sealed tokens, state and preferences; an installation with the same id is replaced, and one
    /// holding the same token or device identity under another id is replaced by it.
    /// - Returns: How many were stored.
    func importInstallations(_ records: [ExportedInstallation]) async throws -> Int
}

/// What deleting several installations removed.
public struct InstallationRemoval: Sendable, Equatable {
    /// How many installations went.
    public var count: Int
    /// The ones with provider-side state (an SNS endpoint), for the engine to remove it.
    public var withEndpoints: [Installation]

    /// Creates a removal record.
    public init(count: Int, withEndpoints: [Installation]) {
        self.count = count
        self.withEndpoints = withEndpoints
    }
}

/// The outcome of a registration.
public struct RegistrationResult: Sendable, Equatable {
    /// The stored installation.
    public var installation: Installation
    /// Whether a new installation was created (false: an existing one was updated).
    public var created: Bool

    /// Creates a result.
    public init(installation: Installation, created: Bool) {
        self.installation = installation
        self.created = created
    }
}

/// The server and client keys of an app.
public struct AppKeys: Sendable, Equatable {
    public var appID: String
    /// Full access to the app.
    public var serverKey: String
    /// Registration only: create, update and delete installations.
    public var clientKey: String
    /// Publishing only (ntfy's and Gotify's publish APIs): to any channel of the app; nil in keys
    /// stored before publish keys existed (one is generated then).
    public var publishKey: String?

    /// Creates a key record.
    public init(appID: String, serverKey: String, clientKey: String, publishKey: String? = nil) {
        self.appID = appID
        self.serverKey = serverKey
        self.clientKey = clientKey
        self.publishKey = publishKey
    }

    /// Generates fresh keys: `hsk_` / `hck_` / `hpk_` followed by 32 random bytes, base64url.
    public static func generate(appID: String) -> AppKeys {
        AppKeys(
            appID: appID, serverKey: generateKey(prefix: "hsk_"), clientKey: generateKey(prefix: "hck_"),
            publishKey: generateKey(prefix: "hpk_"))
    }

    /// A new key: `prefix` and 32 random bytes, base64url.
    public static func generateKey(prefix: String) -> String {
        prefix + Base64URL.encode(TokenCipher.generateMasterKey())
    }

    /// Reads the JSON the stores seal (``sealedPlaintext``).
    /// - Throws: `HeraldError` when it is not keys.
    public init(appID: String, sealed plaintext: [UInt8]) throws(HeraldError) {
        let object = try JSONObjectReader(JSONValue.parse(plaintext))
        self.init(
            appID: appID, serverKey: try object.requiredString("server_key"),
            clientKey: try object.requiredString("client_key"), publishKey: try object.string("publish_key"))
    }
}

/// Filters for listing installations; nil means any.
public struct InstallationFilter: Sendable, Equatable {
    public var userID: String?
    public var channel: String?
    public var platform: Platform?
    public var service: PushService?
    public var valid: Bool?

    /// Creates a filter.
    public init(
        userID: String? = nil, channel: String? = nil, platform: Platform? = nil, service: PushService? = nil,
        valid: Bool? = nil
    ) {
        self.userID = userID
        self.channel = channel
        self.platform = platform
        self.service = service
        self.valid = valid
    }
}

/// Keyset pagination: at most `limit` records whose id sorts after `after`.
public struct PageRequest: Sendable, Equatable {
    /// The largest page size any list accepts.
    public static let maxLimit = 1000
    public var after: String?
    public var limit: Int

    /// Creates a page request.
    public init(after: String? = nil, limit: Int = 100) {
        self.after = after
        self.limit = limit
    }
}

/// Where an export page ends: the last installation's app and id.
public struct ExportCursor: Sendable, Equatable {
    public var appID: String
    public var id: String

    /// Creates a cursor.
    public init(appID: String, id: String) {
        self.appID = appID
        self.id = id
    }
}

/// One installation as a store keeps it: every field, the token sealed under the master key (so it
/// moves between stores without being opened), and its preferences.
public struct ExportedInstallation: Sendable, Equatable {
    /// The installation; its `token` is `.device("")` (the sealed form is authoritative).
    public var installation: Installation
    public var sealedToken: SealedToken
    public var preferences: Preferences?
    /// Its Live Activity push-to-start tokens, sealed, by attributes type (activity tokens live for
    /// hours and are not carried: the app reports them again).
    public var pushToStartTokens: [String: [UInt8]]

    /// Creates an export record.
    public init(
        installation: Installation, sealedToken: SealedToken, preferences: Preferences?,
        pushToStartTokens: [String: [UInt8]] = [:]
    ) {
        self.installation = installation
        self.sealedToken = sealedToken
        self.preferences = preferences
        self.pushToStartTokens = pushToStartTokens
    }
}
