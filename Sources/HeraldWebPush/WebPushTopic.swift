import Crypto
import HeraldCore

/// The `Topic` header of RFC 8030 §5.4: a push with the same topic replaces one still waiting in
/// the push service for the same subscription. A topic is at most 32 characters of the URL- and
/// filename-safe base64 alphabet (`A-Z a-z 0-9 - _`).
public enum WebPushTopic {
    /// The longest topic, in characters.
    public static let maxLength = 32

    /// Whether `topic` is a valid `Topic` value.
    public static func isValid(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= maxLength
            && topic.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// The topic for a collapse id (Herald's `collapse_id`, APNs' `apns-collapse-id`): the id itself
    /// when it already is a valid topic, otherwise the unpadded base64url of the first 24 bytes of
    /// its UTF-8 SHA-256, which is exactly 32 characters. The same id always gives the same topic,
    /// so pushes that share a collapse id replace each other in every push service.
    public static func derive(fromCollapseID collapseID: String) -> String {
        if isValid(collapseID) { return collapseID }
        return Base64URL.encode(Array(SHA256.hash(data: Array(collapseID.utf8))).prefix(24))
    }
}
