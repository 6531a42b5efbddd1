import Crypto

extension MockAPNsServer {
    /// A provider credential the mock accepts.
    ///
    /// Token-based authentication is the one APNs mode the mock speaks: certificate-based (mutual TLS) providers
    /// are not modelled.
    public struct Credential: Sendable {
        /// The Apple Developer team ID: the provider token's `iss`.
        public var teamID: String
        /// The ID of the APNs auth key: the provider token's `kid`.
        public var keyID: String
        /// The public half of the auth key, which verifies the token's ES256 signature.
        public var publicKey: P256.Signing.PublicKey
        /// The bundle IDs the key may push to. Topics with a push-type suffix (`.voip`, `.complication`, …) are
        /// allowed when their bundle ID is.
        public var topics: Set<String>

        /// A token-based (`.p8` key) credential.
        public static func token(
            teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, topics: Set<String>
        ) -> Credential {
            Credential(teamID: teamID, keyID: keyID, publicKey: publicKey, topics: topics)
        }
    }
}
