import Crypto
import HeraldTestSupport

extension MockAPNsServer {
    /// A token-based provider credential (an APNs auth key) the mock accepts.
    ///
    /// Certificate-based (mutual TLS) providers need no credential here: as with APNs, the certificate is the
    /// credential. The mock accepts any client certificate its certificate authority issued
    /// (``TestCertificateAuthority/apnsCertificate(bundleID:)``) for the bundle ID in the certificate's subject UID
    /// and that app's push-type topics, on requests without an `authorization` header.
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
