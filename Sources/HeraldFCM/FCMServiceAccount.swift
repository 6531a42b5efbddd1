import Foundation
import HeraldCore

/// A Google service account key (the JSON file Firebase hands out), the fields FCM needs.
public struct FCMServiceAccount: Sendable {
    public var projectID: String
    public var clientEmail: String
    /// The RSA private key, PEM.
    public var privateKey: String
    public var privateKeyID: String
    /// Where assertions are exchanged for access tokens (`https://oauth2.googleapis.com/token`).
    public var tokenURI: String

    /// Creates an account from its fields.
    public init(projectID: String, clientEmail: String, privateKey: String, privateKeyID: String, tokenURI: String) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKey = privateKey
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI
    }

    /// Reads the service account JSON.
    /// - Throws: `FCMError` `invalidServiceAccount` naming the missing field.
    public init(json bytes: some Collection<UInt8>) throws(FCMError) {
        guard let object = try? JSONValue.parse(bytes).objectValue else { throw .invalidServiceAccount(field: nil) }
        func field(_ name: String) throws(FCMError) -> String {
            guard case .string(let value)? = object[name], !value.isEmpty else {
                throw .invalidServiceAccount(field: name)
            }
            return value
        }
        self.init(
            projectID: try field("project_id"), clientEmail: try field("client_email"),
            privateKey: try field("private_key"), privateKeyID: try field("private_key_id"),
            tokenURI: try field("token_uri"))
    }
}
