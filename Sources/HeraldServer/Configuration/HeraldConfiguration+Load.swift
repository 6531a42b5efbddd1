import Configuration
import Foundation
import HeraldAPI
import HeraldCore
import Synchronization
import SystemPackage

extension HeraldConfiguration {
    /// Reads the configuration from, highest priority first: `overrides` (command-line flags),
    /// `HERALD_*` environment variables, and the JSON or YAML file at `file` (by its extension).
    /// A file that holds a secret (a key, a password, a token secret) must not be readable by its
    /// group or others: it is refused until `chmod 600` (or `640` to a group of its own is not
    /// enough either; keep secrets owner-only or pass them in the environment).
    /// - Throws: `HeraldError` `invalid_configuration` for an unreadable file, a file holding
    ///   secrets that others may read, or a bad value.
    public static func load(
        file: String?, overrides: [AbsoluteConfigKey: ConfigValue] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> HeraldConfiguration {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(values: overrides),
            EnvironmentVariablesProvider(
                environmentVariables: environment,
                secretsSpecifier: .dynamic { key, _ in key.hasSuffix("_KEY") || key.hasSuffix("_SECRET") }
            ).prefixKeys(with: "herald"),
        ]
        var fileProvider: (any ConfigProvider)?
        if let file {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw HeraldError.invalidConfiguration("config", "names '\(file)', which cannot be read")
            }
            do {
                let path = FilePath(file)
                if file.hasSuffix(".yaml") || file.hasSuffix(".yml") {
                    fileProvider = try await FileProvider<YAMLSnapshot>(filePath: path)
                } else {
                    fileProvider = try await FileProvider<JSONSnapshot>(filePath: path)
                }
            } catch {
                throw HeraldError.invalidConfiguration(
                    "config", "names '\(file)', which is not valid JSON or YAML: \(error)")
            }
        }
        guard let file, let fileProvider else {
            return try HeraldConfiguration(reader: ConfigReader(providers: providers))
        }
        providers.append(fileProvider)
        let secrets = SecretsInFile(providerName: fileProvider.providerName)
        let configuration = try HeraldConfiguration(
            reader: ConfigReader(providers: providers, accessReporter: secrets))
        if let key = secrets.first,
            let mode = try? FileManager.default.attributesOfItem(atPath: file)[.posixPermissions]
                as? Int, mode & 0o077 != 0
        {
            throw HeraldError.invalidConfiguration(
                "config",
                "names '\(file)', which holds a secret ('\(key)') but is readable by group or others (mode "
                    + "\(String(mode & 0o777, radix: 8))): chmod 600 '\(file)'")
        }
        return configuration
    }
}

/// Notes the first secret setting (a key read with `isSecret`) that one provider, the config
/// file, supplies.
private final class SecretsInFile: AccessReporter, Sendable {
    private let providerName: String
    private let found = Mutex<String?>(nil)

    init(providerName: String) {
        self.providerName = providerName
    }

    /// The first secret key found in the file.
    var first: String? { found.withLock { $0 } }

    func report(_ event: AccessEvent) {
        guard case .success(let value?) = event.result, value.isSecret else { return }
        let fromFile = event.providerResults.contains { result in
            guard result.providerName == providerName, case .success(let lookup) = result.result else { return false }
            return lookup.value != nil
        }
        guard fromFile else { return }
        let key = event.metadata.key.components.joined(separator: ".")
        found.withLock { found in if found == nil { found = key } }
    }
}
