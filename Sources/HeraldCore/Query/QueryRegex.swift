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

    /// The most unbounded repetitions (`*`, `+`, `{n,}`) a pattern may hold.
    public static let maxUnboundedRepetitions = 4

    /// Why `pattern` could take super-linear time to match, or nil when it cannot.
    ///
    /// ICU matches by backtracking, so a pattern's worst case grows with the length of the text to
    /// the power of its nested or repeated unbounded repetitions: `(a+)+$` on a long run of `a`s
    /// never finishes. Patterns are refused, before they reach any store, when they hold
    /// - a back-reference (`\1`, `\k<name>`), which no automaton can match;
    /// - a repeated group that holds a repetition or an alternation (`(a+)+`, `(a|ab)*`);
    /// - more than ``maxUnboundedRepetitions`` unbounded repetitions, which bounds the polynomial.
    public static func complexityProblem(_ pattern: String) -> String? {
        let scalars = Array(pattern.unicodeScalars)
        /// Per open group: whether it holds a repetition or an alternation.
        var groups: [Bool] = []
        var unbounded = 0
        var index = 0
        /// The atom just ended was a group holding a repetition or an alternation.
        var lastAtomIsComplexGroup = false
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            var atomIsComplexGroup = false
            switch scalar {
            case "\\":
                guard index < scalars.count else { break }
                let escaped = scalars[index]
                index += 1
                if ("1"..."9").contains(escaped) || escaped == "k" {
                    return "A pattern may not hold back-references."
                }
                if escaped == "Q" {  // \Q…\E quotes literally.
                    while index + 1 < scalars.count, !(scalars[index] == "\\" && scalars[index + 1] == "E") {
                        index += 1
                    }
                    index = min(scalars.count, index + 2)
                }
            case "[":
                // A class: skip to its closing bracket (a first `]` or `^]` is literal).
                if index < scalars.count, scalars[index] == "^" { index += 1 }
                if index < scalars.count, scalars[index] == "]" { index += 1 }
                var depth = 1
                while index < scalars.count, depth > 0 {
                    switch scalars[index] {
                    case "\\": index += 1
                    case "[": depth += 1
                    case "]": depth -= 1
                    default: break
                    }
                    index += 1
                }
            case "(":
                groups.append(false)
                // `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`, `(?i)`, `(?i:`: the group's kind.
                if index < scalars.count, scalars[index] == "?" {
                    index += 1
                    while index < scalars.count, scalars[index] != ")" {
                        let kind = scalars[index]
                        index += 1
                        if kind == ":" || kind == "=" || kind == "!" || kind == ">" { break }
                    }
                }
            case ")":
                atomIsComplexGroup = groups.popLast() ?? false
                // What a group holds, the group around it holds too.
                if atomIsComplexGroup, !groups.isEmpty { groups[groups.count - 1] = true }
            case "|":
                if !groups.isEmpty { groups[groups.count - 1] = true }
            case "*", "+", "{", "?":
                var isUnbounded = scalar == "*" || scalar == "+"
                if scalar == "{" {
                    var body = ""
                    while index < scalars.count, scalars[index] != "}" {
                        body.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                    index += 1
                    let bounds = body.split(separator: ",", omittingEmptySubsequences: false)
                    isUnbounded = bounds.count == 2 && bounds[1].isEmpty
                    if !isUnbounded, let upper = bounds.last.flatMap({ Int($0) }), upper > 1 {
                        isUnbounded = lastAtomIsComplexGroup
                    }
                }
                // A possessive or lazy suffix belongs to this repetition.
                if index < scalars.count, scalars[index] == "+" || scalars[index] == "?" { index += 1 }
                if lastAtomIsComplexGroup, scalar != "?" {
                    return "A repeated group may not hold a repetition or an alternation."
                }
                if isUnbounded {
                    unbounded += 1
                    if unbounded > maxUnboundedRepetitions {
                        return "A pattern holds at most \(maxUnboundedRepetitions) unbounded repetitions (*, +, {n,})."
                    }
                }
                if !groups.isEmpty { groups[groups.count - 1] = true }
            default:
                break
            }
            lastAtomIsComplexGroup = atomIsComplexGroup
        }
        return nil
    }

    /// Whether `text` contains a match of `pattern`; false when the pattern does not compile.
    public static func matches(_ pattern: String, caseInsensitive: Bool, in text: String) -> Bool {
        guard let regex = try? compile(pattern, caseInsensitive: caseInsensitive) else { return false }
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
