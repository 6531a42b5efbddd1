import Foundation
import HeraldCore
import JWTKit

/// A `.p8` signing key for APNs token authentication.
public struct APNsSigningKey: Sendable {
    public var teamID: String
    public var keyID: String
    let privateKey: ES256PrivateKey

    /// Loads the key from the `.p8` file's PEM text.
    /// - Throws: `APNsError` `invalidSigningKey` when the PEM is not a P-256 private key.
    public init(teamID: String, keyID: String, pem: String) throws(APNsError) {
        guard let key = try? ES256PrivateKey(pem: pem) else { throw .invalidSigningKey() }
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = key
    }
}

/// The provider token (JWT) APNs requires on every request: ES256, header `kid`, claims `iss` (team
/// id) and `iat` (integer seconds). One token per key is shared by all its connections; it is
/// renewed after 50 minutes (APNs refuses tokens older than an hour) and never sooner than 20
/// (APNs answers TooManyProviderTokenUpdates to faster renewal).
public actor APNsProviderToken {
    /// Renew a token this old.
    public static let refreshAge: TimeInterval = 50 * 60
    /// Never renew a token younger than this.
    public static let minimumAge: TimeInterval = 20 * 60

    private struct Claims: JWTPayload {
        var iss: String
        var iat: Int

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let key: APNsSigningKey
    private let keys = JWTKeyCollection()
    private let now: @Sendable () -> Date
    private var current: (token: String, issuedAt: Date)?
    private var isConfigured = false

    /// Creates the token source for a key.
    /// - Parameter now: the clock (tests inject one).
    public init(key: APNsSigningKey, now: @escaping @Sendable () -> Date = Date.init) {
        self.key = key
        self.now = now
    }

    /// The `authorization` header value: `bearer <jwt>`, renewed when due.
    /// - Throws: JWTKit signing errors.
    public func authorization() async throws -> String {
        let time = now()
        if let current, time.timeIntervalSince(current.issuedAt) < Self.refreshAge {
            return "bearer " + current.token
        }
        return "bearer " + (try await mint(at: time))
    }

    /// APNs said the token is expired (`ExpiredProviderToken`): renew it, unless another caller
    /// already did or it is younger than the 20-minute floor.
    /// - Returns: whether a retry with a fresh token is worthwhile.
    public func expired(_ authorization: String) async throws -> Bool {
        guard let current, "bearer " + current.token == authorization else { return true }
        let time = now()
        guard time.timeIntervalSince(current.issuedAt) >= Self.minimumAge else { return false }
        _ = try await mint(at: time)
        return true
    }

    /// How many tokens have been minted (for tests and metrics).
    public private(set) var mintedCount = 0

    private func mint(at time: Date) async throws -> String {
        if !isConfigured {
            await keys.add(ecdsa: key.privateKey, kid: JWKIdentifier(string: key.keyID))
            isConfigured = true
        }
        let token = try await keys.sign(
            Claims(iss: key.teamID, iat: Int(time.timeIntervalSince1970)), kid: JWKIdentifier(string: key.keyID))
        current = (token, time)
        mintedCount += 1
        return token
    }
}
