import Configuration
import Foundation
import HeraldCore
import SystemPackage

extension HeraldConfiguration {
    /// Reads the configuration from, highest priority first: `overrides` (command-line flags),
    /// `HERALD_*` environment variables, and the JSON or YAML file at `file` (by its extension).
    /// - Throws: `HeraldError` `invalid_configuration` for an unreadable file or a bad value.
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
        if let file {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw HeraldConfiguration.invalid("config", "names '\(file)', which cannot be read")
            }
            do {
                let path = FilePath(file)
                if file.hasSuffix(".yaml") || file.hasSuffix(".yml") {
                    providers.append(try await FileProvider<YAMLSnapshot>(filePath: path))
                } else {
                    providers.append(try await FileProvider<JSONSnapshot>(filePath: path))
                }
            } catch {
                throw HeraldConfiguration.invalid(
                    "config", "names '\(file)', which is not valid JSON or YAML: \(error)")
            }
        }
        return try HeraldConfiguration(reader: ConfigReader(providers: providers))
    }
}
