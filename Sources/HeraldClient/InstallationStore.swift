import Foundation

/// Keeps this device's ``RegisteredInstallation`` between launches, so a token refresh updates
/// the same installation and an open names it.
public protocol InstallationStore: Sendable {
    /// The saved installation, nil when there is none.
    /// - Throws: When the saved record cannot be read.
    func load() async throws -> RegisteredInstallation?

    /// Saves the installation, or removes it with nil.
    /// - Throws: When it cannot be written.
    func save(_ installation: RegisteredInstallation?) async throws
}

/// An ``InstallationStore`` in one JSON file, readable by the user only (mode 0600: it holds the
/// push token).
public struct FileInstallationStore: InstallationStore {
    /// The file.
    public let url: URL

    /// A store in `url`; its folder is created when needed.
    public init(url: URL) {
        self.url = url
    }

    /// `herald-installation.json` in the user's application support folder
    /// (`~/.local/share` on Linux).
    public static var defaultURL: URL {
        let folder =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return folder.appendingPathComponent("herald-installation.json")
    }

    public func load() async throws -> RegisteredInstallation? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(RegisteredInstallation.self, from: Data(contentsOf: url))
    }

    public func save(_ installation: RegisteredInstallation?) async throws {
        guard let installation else {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            return
        }
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONEncoder().encode(installation).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }
}

#if canImport(Darwin)
    /// An ``InstallationStore`` in `UserDefaults`, under one key (the default on Apple platforms).
    public struct UserDefaultsInstallationStore: InstallationStore {
        /// The defaults suite; nil is the app's standard defaults.
        public let suiteName: String?
        /// The key the record is kept under.
        public let key: String

        /// A store in the suite (nil: `UserDefaults.standard`) under `key`.
        public init(suiteName: String? = nil, key: String = "herald.installation") {
            self.suiteName = suiteName
            self.key = key
        }

        private var defaults: UserDefaults { suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard }

        public func load() async throws -> RegisteredInstallation? {
            guard let data = defaults.data(forKey: key) else { return nil }
            return try JSONDecoder().decode(RegisteredInstallation.self, from: data)
        }

        public func save(_ installation: RegisteredInstallation?) async throws {
            if let installation {
                defaults.set(try JSONEncoder().encode(installation), forKey: key)
            } else {
                defaults.removeObject(forKey: key)
            }
        }
    }
#endif

/// The store a client uses when none is given: `UserDefaults` on Apple platforms, a file elsewhere.
func defaultInstallationStore() -> any InstallationStore {
    #if canImport(Darwin)
        UserDefaultsInstallationStore()
    #else
        FileInstallationStore(url: FileInstallationStore.defaultURL)
    #endif
}
