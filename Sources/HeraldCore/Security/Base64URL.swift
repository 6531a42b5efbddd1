import ExtrasBase64

/// base64url (RFC 4648 §5) as Web Push keys and JWTs use it: padding optional on input, none on output.
public enum Base64URL {
    /// Decodes base64url text, with or without `=` padding; nil when it is not base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        var unpadded = Substring(text)
        while unpadded.last == "=" { unpadded = unpadded.dropLast() }
        guard !unpadded.isEmpty else { return nil }
        return try? Base64.decode(string: String(unpadded), options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Encodes bytes as unpadded base64url.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64.encodeToString(bytes: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }
}
