import Configuration
import Foundation
import HeraldCore

/// An app's settings for the ArgusAI dialect (`app.<id>.argus.*`).
public struct ArgusAIConfiguration: Sendable {
    /// The ArgusAI server's public URL (`https://argusai.local`), which event notifications'
    /// `thumbnail_url` is resolved against; without it, events are refused.
    public var publicBaseURL: String?
    /// Registrations a user may make per minute (a burst of this many, refilled over a minute).
    public var registerRateLimit: Int

    /// The default registration limit per user and minute.
    public static let defaultRegisterRateLimit = 20

    /// Creates settings; the defaults have no public URL and 20 registrations per user and minute. A
    /// trailing `/` of the URL is dropped (paths are appended to it).
    public init(publicBaseURL: String? = nil, registerRateLimit: Int = Self.defaultRegisterRateLimit) {
        self.publicBaseURL = publicBaseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.registerRateLimit = registerRateLimit
    }

    /// Reads, under `app.<id>.argus`: `public_base_url` (an absolute `http` or `https` URL, no query;
    /// a trailing `/` is dropped; none by default) and `register_rate_limit` (int, registrations per
    /// user and minute, 1 to 10000; `20`).
    /// - Throws: `HeraldError` with code `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let prefix = "app.\(appID).argus"
        var publicBaseURL: String?
        if let text = reader.string(forKey: "public_base_url") {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                url.host?.isEmpty == false, url.query == nil, url.fragment == nil
            else {
                throw HeraldConfiguration.invalid(
                    "\(prefix).public_base_url",
                    "must be an absolute http(s) URL without query, like https://argusai.local")
            }
            publicBaseURL = text
        }
        let limit = try HeraldConfiguration.integer(
            reader, "register_rate_limit", default: Self.defaultRegisterRateLimit, key: "\(prefix).register_rate_limit")
        guard (1...10_000).contains(limit) else {
            throw HeraldConfiguration.invalid("\(prefix).register_rate_limit", "must be 1 to 10000")
        }
        self.init(publicBaseURL: publicBaseURL, registerRateLimit: limit)
    }
}

extension ArgusAIRoutes {
    static func settings(appID: String, reader: ConfigReader) throws -> ArgusAIConfiguration {
        try ArgusAIConfiguration(appID: appID, reader: reader)
    }
}

extension DialectSettings {
    /// ArgusAI's settings, by app.
    public var argus: [String: ArgusAIConfiguration] {
        get { settings(of: ArgusAIRoutes.self) }
        set { replace(ArgusAIRoutes.self, with: newValue) }
    }
}
