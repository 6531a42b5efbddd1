/// Log metadata keys used across modules, named once.
public enum LogKey {
    /// The request a line belongs to (or that created the notification a job works on).
    public static let requestID = "request_id"
    /// A push token's short fingerprint (``SecretFingerprint``), never the token.
    public static let tokenFingerprint = "herald.token"
}
