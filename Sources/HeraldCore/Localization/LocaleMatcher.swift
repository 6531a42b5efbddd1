import Foundation
import Synchronization

/// Picks, for a device's locale, the best of a notification's localizations (docs/content.md):
/// RFC 4647 lookup after adding likely subtags the way CLDR does, then the default (nil).
///
/// Both the device's tag and each localization's are maximized with CLDR's likely subtags (through
/// Foundation's `Locale.Language`, which reads ICU's copy of CLDR): `zh-TW` becomes `zh-Hant-TW`, `zh`
/// `zh-Hans-CN`, `de-AT` `de-Latn-AT`. Lookup then truncates the device's tag — language, script and
/// region; language and script — and takes the first localization with exactly those subtags (the ones
/// it gives, its script filled in when it gives none). So a device in `zh-TW` or `zh-HK` reaches
/// `zh-Hant` and never Simplified `zh`; `de-AT` reaches `de-AT`, else `de`; `pt-BR` never reaches
/// `pt-PT`. A language's likely script is part of every match, so `sr` (Cyrillic) does not serve a
/// device in `sr-Latn`.
public struct LocaleMatcher: Sendable {
    /// A tag's language, script and region, as CLDR maximizes it.
    struct Subtags: Hashable, Sendable {
        var language: String
        var script: String
        /// The region the tag gives (nil: none given; the likely one is not used for matching).
        var region: String?
    }

    /// The localizations by their subtags, in the order they were given.
    private let candidates: [(key: String, subtags: Subtags)]

    /// A matcher over localization keys (BCP 47 tags).
    public init(keys: some Sequence<String>) {
        candidates = keys.sorted().compactMap { key in Self.subtags(key).map { (key, $0) } }
    }

    /// The key of the localization a device in `locale` gets; nil: the default content.
    public func match(_ locale: String?) -> String? {
        guard let locale, let device = Self.subtags(locale), !candidates.isEmpty else { return nil }
        // Language, script and region first; then language and script (a localization without a region).
        if let region = device.region,
            let exact = candidates.first(where: {
                $0.subtags.language == device.language && $0.subtags.script == device.script
                    && $0.subtags.region == region
            })
        {
            return exact.key
        }
        return candidates.first {
            $0.subtags.language == device.language && $0.subtags.script == device.script && $0.subtags.region == nil
        }?.key
    }

    /// Maximized subtags of tags already seen: a broadcast asks for the same few locales again and again.
    private static let cache = Mutex<[String: Subtags?]>([:])

    /// A tag's subtags with CLDR's likely script filled in; nil for a tag that names no language.
    static func subtags(_ tag: String) -> Subtags? {
        if let cached = cache.withLock({ $0[tag] }) { return cached }
        let normalized = tag.replacingOccurrences(of: "_", with: "-")
        let given = Locale.Language(identifier: normalized)
        let maximal = Locale.Language(identifier: given.maximalIdentifier)
        var result: Subtags?
        if let language = given.languageCode?.identifier.lowercased(), language != "und",
            let script = maximal.script?.identifier
        {
            result = Subtags(language: language, script: script, region: given.region?.identifier.uppercased())
        }
        cache.withLock { cache in
            if cache.count < 4096 { cache[tag] = result }
        }
        return result
    }
}
