import Crypto
import Foundation

/// The validation rules for installation fields, shared by every API surface that registers devices.
public enum InstallationRules {
    /// At most this many channels per installation.
    public static let maxChannels = 100
    /// The serialized `attributes` object may be at most this many bytes.
    public static let maxAttributesBytes = 8 * 1024
    /// Free-text fields (versions, model, bundle id, user and device ids) are at most this long.
    public static let maxShortText = 256

    /// Checks that a token is well formed for the service (and, for SNS, the platform behind it).
    /// - Throws: `HeraldError` with code `invalid_token`, naming `field`.
    public static func validateDeviceToken(
        _ token: String, service: PushService, platform: Platform, field: String = "token"
    ) throws(HeraldError) {
        switch service {
        case .apns: try validateAPNsToken(token, field: field)
        case .fcm: try validateFCMToken(token, field: field)
        case .sns: try platform.isApple ? validateAPNsToken(token, field: field) : validateFCMToken(token, field: field)
        case .webpush:
            throw .invalidValue(field, code: "invalid_token", "Web Push installations take a 'subscription' object.")
        case .direct: try validateDirectToken(token, field: field)
        }
    }

    /// A direct-only installation's token is the client's own opaque device id: 16 to 256
    /// printable ASCII characters without spaces (enough to be unguessable, as it identifies the device).
    public static func validateDirectToken(_ token: String, field: String = "token") throws(HeraldError) {
        let utf8 = token.utf8
        guard (16...256).contains(utf8.count), utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidValue(
                field, code: "invalid_token",
                "A direct installation's token must be 16 to 256 printable ASCII characters, no spaces.")
        }
    }

    /// APNs device tokens are variable-length hex (Apple: "don't hard-code the size"); today's are
    /// 64 characters. AOVIS's guide promises tokens up to 2048 characters are accepted, never cut.
    public static let apnsTokenLengths = 64...2048

    /// APNs device tokens are hex, of even length, 64 to 2048 characters.
    public static func validateAPNsToken(_ token: String, field: String = "token") throws(HeraldError) {
        let utf8 = token.utf8
        // Every send checks its token: walk the contiguous bytes, not the view.
        guard apnsTokenLengths.contains(utf8.count), utf8.count.isMultiple(of: 2),
            utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(\.isHexDigit) }) ?? utf8.allSatisfy(\.isHexDigit)
        else {
            throw .invalidValue(
                field, code: "invalid_token", "An APNs token must be 64 to 2048 hex characters, of even length.")
        }
    }

    /// FCM registration tokens are 1 to 4096 printable ASCII characters without spaces.
    public static func validateFCMToken(_ token: String, field: String = "token") throws(HeraldError) {
        let utf8 = token.utf8
        guard !utf8.isEmpty, utf8.count <= 4096, utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidValue(
                field, code: "invalid_token", "An FCM token must be 1 to 4096 printable ASCII characters, no spaces.")
        }
    }

    /// Checks a Web Push subscription: an `https` endpoint, a `p256dh` that is an uncompressed P-256
    /// point on the curve (RFC 8291 §3.1), and a 16-byte `auth` secret (RFC 8291 §3.2).
    /// - Throws: `HeraldError` naming the part at fault under `field`.
    public static func validateWebPush(
        _ subscription: WebPushSubscription, field: String = "subscription"
    )
        throws(HeraldError)
    {
        guard let url = URL(string: subscription.endpoint), url.scheme?.lowercased() == "https",
            let host = url.host, !host.isEmpty, subscription.endpoint.utf8.count <= 2048
        else {
            throw .invalidValue(
                "\(field).endpoint", code: "invalid_endpoint",
                "The endpoint must be an https URL of at most 2048 bytes.")
        }
        guard let key = Base64URL.decode(subscription.p256dh), key.count == 65, key.first == 0x04,
            (try? P256.KeyAgreement.PublicKey(x963Representation: key)) != nil
        else {
            throw .invalidValue(
                "\(field).keys.p256dh", code: "invalid_key",
                "p256dh must be a base64url uncompressed P-256 public key (65 bytes) on the curve.")
        }
        guard let auth = Base64URL.decode(subscription.auth), auth.count == 16 else {
            throw .invalidValue(
                "\(field).keys.auth", code: "invalid_key", "auth must be a base64url 16-byte secret.")
        }
    }

    /// Checks that the service can deliver to the platform.
    public static func validate(platform: Platform, service: PushService) throws(HeraldError) {
        guard service.platforms.contains(platform) else {
            throw .invalidValue(
                "platform", code: "platform_service_mismatch",
                "Service '\(service.rawValue)' cannot deliver to platform '\(platform.rawValue)'.")
        }
    }

    /// The service a platform uses when the request does not name one.
    public static func defaultService(for platform: Platform) -> PushService {
        switch platform {
        case .android: .fcm
        case .web: .webpush
        case .ios, .ipados, .watchos, .tvos, .macos: .apns
        case .desktop: .direct
        }
    }

    /// Checks a time-zone name: one of the IANA database's zone or link names (``TimeZoneNames``),
    /// kept as given. Abbreviations (`PST`), offsets (`GMT+5`) and `Factory` are refused.
    public static func validateTimeZone(_ name: String, field: String = "timezone") throws(HeraldError) {
        guard TimeZoneNames.accepted.contains(name) else {
            throw .invalidValue(
                field, code: "invalid_timezone", "'\(name)' is not an IANA time zone name (like Europe/Paris).")
        }
    }

    /// Checks a locale as phones report it and returns its BCP 47 tag: language (2–3 letters), then
    /// script, region and variants (`en`, `pt-BR`, `zh-Hans-CN`, `es-419`, `ca-ES-valencia`), with
    /// underscores taken as hyphens. What iOS and Android add around a locale is dropped: `@` keywords
    /// (`en_US@rg=gbzzzz`), Java's `_#Script` form (`zh_CN_#Hans` is `zh-Hans-CN`), extensions and
    /// private use (`-u-ca-gregory`, `-x-…`), and ICU variants too long for BCP 47. Only what is not a
    /// locale at all is refused.
    /// - Returns: The tag, cased as BCP 47 recommends (`zh-Hans-CN`, `en-US-posix`).
    /// - Throws: `HeraldError` `invalid_locale` naming `field`.
    public static func normalizeLocale(_ locale: String, field: String = "locale") throws(HeraldError) -> String {
        func refuse() -> HeraldError {
            .invalidValue(field, code: "invalid_locale", "'\(locale)' is not a locale like en, pt-BR or zh-Hans-CN.")
        }
        guard locale.utf8.count <= 128, locale.allSatisfy({ $0.isASCII }) else { throw refuse() }
        // ICU keywords (`@rg=gbzzzz`, `@calendar=…`) say how to format, not which locale.
        var text = Substring(locale.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)[0])
        // Java's Locale.toString: `lang_REGION_VARIANT_#Script-extensions` (`zh_CN_#Hans`).
        var javaScript: Substring?
        let javaForm = text.contains("#")
        if let hash = text.firstIndex(of: "#") {
            let tail = text[text.index(after: hash)...].split(separator: "-", omittingEmptySubsequences: false)
            if let first = tail.first, first.count == 4 { javaScript = first }
            text = text[..<hash]
            while text.hasSuffix("_") { text = text.dropLast() }
        }
        // Java writes an absent region as an empty field (`en__POSIX`).
        let parts = text.replacingOccurrences(of: "__", with: "_").replacingOccurrences(of: "_", with: "-")
            .split(separator: "-", omittingEmptySubsequences: false)
        func isLetters(_ part: Substring, _ counts: ClosedRange<Int>) -> Bool {
            counts.contains(part.count) && part.allSatisfy { $0.isLetter }
        }
        func isAlphanumeric(_ part: Substring) -> Bool { part.allSatisfy { $0.isLetter || $0.isNumber } }
        guard let language = parts.first, isLetters(language, 2...3) else { throw refuse() }
        var tag = [language.lowercased()]
        var index = 1
        var script = javaScript.flatMap { isLetters($0, 4...4) ? $0 : nil }
        if index < parts.count, isLetters(parts[index], 4...4) {
            script = parts[index]
            index += 1
        }
        if let script { tag.append(script.prefix(1).uppercased() + script.dropFirst().lowercased()) }
        if index < parts.count,
            isLetters(parts[index], 2...2) || (parts[index].count == 3 && parts[index].allSatisfy(\.isNumber))
        {
            tag.append(parts[index].uppercased())
            index += 1
        }
        while index < parts.count {
            let part = parts[index]
            guard !part.isEmpty, isAlphanumeric(part) else { throw refuse() }
            if part.count == 1 {
                // An extension or private use (`u-ca-gregory`, `x-private`): each subtag 1–8 characters.
                guard index + 1 < parts.count, parts[(index + 1)...].allSatisfy({ (1...8).contains($0.count) })
                else { throw refuse() }
                break
            }
            if (5...8).contains(part.count) || (part.count == 4 && part.first?.isNumber == true) {
                tag.append(part.lowercased())
            } else if !part.allSatisfy(\.isLetter) || (part.count <= 4 && !javaForm) {
                throw refuse()
            }  // else an ICU or Java variant BCP 47 has no form for (`ja_JP_TRADITIONAL`, `th_TH_TH_#…`): dropped
            index += 1
        }
        return tag.joined(separator: "-")
    }

    /// Checks a channel list: at most 100 names of `[A-Za-z0-9_-]{1,128}`; duplicates are dropped.
    /// - Returns: The channels in first-seen order, without duplicates.
    public static func normalizeChannels(
        _ channels: [String], field: String = "channels"
    ) throws(HeraldError)
        -> [String]
    {
        var seen = Set<String>()
        var result: [String] = []
        for (index, channel) in channels.enumerated() {
            guard isValidChannel(channel) else {
                throw .invalidValue(
                    "\(field)[\(index)]", code: "invalid_channel",
                    "Channel names are 1 to 128 characters of A-Z, a-z, 0-9, '_' and '-'.")
            }
            if seen.insert(channel).inserted { result.append(channel) }
        }
        guard result.count <= maxChannels else {
            throw .invalidValue(field, code: "too_many_channels", "At most \(maxChannels) channels are allowed.")
        }
        return result
    }

    /// Whether a channel name is `[A-Za-z0-9_-]{1,128}`.
    public static func isValidChannel(_ channel: String) -> Bool {
        let utf8 = channel.utf8
        return !utf8.isEmpty && utf8.count <= 128
            && utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// Checks the attributes object's serialized size.
    public static func validateAttributes(
        _ attributes: [String: JSONValue], field: String = "attributes"
    )
        throws(HeraldError)
    {
        guard JSONValue.object(attributes).serialized().count <= maxAttributesBytes else {
            throw .invalidValue(
                field, code: "attributes_too_large", "attributes must serialize to at most \(maxAttributesBytes) bytes."
            )
        }
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    /// A digit or an ASCII letter (a push endpoint's secret is made of these, `-` and `_`).
    package var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
