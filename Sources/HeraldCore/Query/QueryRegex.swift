import Foundation
import Synchronization

/// The regular expressions of `$regex` conditions, shared by the query parser, the in-memory
/// evaluator and the stores' SQL functions so that every one accepts and matches the same way.
///
/// Patterns use ICU syntax (`NSRegularExpression`), which is close to the PCRE of MongoDB and
/// Parse, and match anywhere in the string, as theirs do.
public enum QueryRegex {
    /// Compiled expressions are cached per pattern and options, up to this many.
    static let cacheLimit = 256

    private struct Key: Hashable {
        var pattern: String
        var caseInsensitive: Bool
    }

    private static let cache = Mutex<[Key: NSRegularExpression]>([:])

    /// Compiles a pattern (or takes it from the cache).
    /// - Throws: `NSRegularExpression`'s error when the pattern does not compile.
    public static func compile(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let regex = try NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : [])
        cache.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[key] = regex
        }
        return regex
    }

    /// Whether `text` contains a match of `pattern`; false when the pattern does not compile.
    public static func matches(_ pattern: String, caseInsensitive: Bool, in text: String) -> Bool {
        guard let regex = try? compile(pattern, caseInsensitive: caseInsensitive) else { return false }
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
