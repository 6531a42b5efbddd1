import Foundation

/// An AWS access key: what signs requests with ``SigV4``. The secret never appears in
/// `description`, so credentials can be logged or interpolated without leaking it.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The access key id (`AKIA…` for an IAM user, `ASIA…` for temporary credentials).
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token that comes with temporary credentials (STS); sent as `X-Amz-Security-Token`.
    public var sessionToken: String?

    /// Creates credentials from their parts.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// Reads the standard variables `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and (optional)
    /// `AWS_SESSION_TOKEN`; nil when either of the first two is missing or empty.
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty,
            let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else { return nil }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        self.init(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
    }

    /// The access key id only; the secret and session token are never printed.
    public var description: String {
        "AWSCredentials(\(accessKeyID)\(sessionToken == nil ? "" : ", with session token"))"
    }
}
