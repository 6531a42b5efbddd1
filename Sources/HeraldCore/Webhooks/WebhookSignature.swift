import Crypto
import Foundation

/// Standard Webhooks' signature (standardwebhooks.com, "Signature scheme"): HMAC-SHA256, keyed with
/// the secret's bytes, over `<webhook-id>.<webhook-timestamp>.<body>`, written `v1,<base64>`; with
/// several secrets (a rotation's overlap) one signature each, separated by spaces, so a receiver
/// that knows either verifies. The receivers' libraries (`standardwebhooks`, `svix`, and theirs
/// for other languages) check exactly this.
public enum WebhookSignature {
    /// The headers of one signed request: `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`.
    public static func headers(
        id: String, timestamp: Date, body: [UInt8], secrets: [WebhookSecret]
    ) -> [(String, String)] {
        let seconds = String(Int64(timestamp.timeIntervalSince1970.rounded(.down)))
        return [
            ("webhook-id", id), ("webhook-timestamp", seconds),
            (
                "webhook-signature",
                secrets.map { sign(id: id, timestamp: seconds, body: body, secret: $0) }.joined(separator: " ")
            ),
        ]
    }

    /// One `v1,` signature.
    public static func sign(id: String, timestamp: String, body: [UInt8], secret: WebhookSecret) -> String {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret.key))
        hmac.update(data: Array("\(id).\(timestamp).".utf8))
        hmac.update(data: body)
        return "v1," + Data(hmac.finalize()).base64EncodedString()
    }
}
