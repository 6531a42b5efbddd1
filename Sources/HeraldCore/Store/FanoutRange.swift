import Foundation

/// A part of a large notification's target, in installation id order, worked as a job of its own
/// (kind `range`) by whichever node's worker claims it: one broadcast is worked by every node.
///
/// The notification's own job cuts the target into ranges of about ``EngineConfiguration``'s
/// range size, one after another (the notification's cursor reads `ranging`, then `ranged` once
/// the last range, open-ended, is stored). The ranges cover every key once: a range holds the keys
/// after ``after`` up to and including ``through``. Each range's pages commit under its own job's
/// lease and move its own cursor, as a whole notification's pages do; the commit that finishes the
/// last range makes the notification's job due, which works what the ranges left pending and
/// closes the notification.
public struct FanoutRange: Sendable, Equatable {
    public var notificationID: String
    /// The range's place in the target, from 0.
    public var index: Int
    /// The key the range starts after; nil: from the start of the target.
    public var after: String?
    /// The range's last key; nil: to the end of the target (the last range).
    public var through: String?
    /// The last key handled, `done` when the range is exhausted, nil before its first page.
    public var cursor: String?

    /// The notification's cursor while it is being cut into ranges.
    public static let ranging = "ranging"
    /// The notification's cursor once every range is stored.
    public static let ranged = "ranged"

    /// Creates a range.
    public init(notificationID: String, index: Int, after: String?, through: String?, cursor: String? = nil) {
        self.notificationID = notificationID
        self.index = index
        self.after = after
        self.through = through
        self.cursor = cursor
    }

    /// The reference of the range's job: `<notification id>#<index>`.
    public var jobReference: String { "\(notificationID)#\(index)" }

    /// The notification id and index a range job's reference names; nil for another reference.
    public static func parse(jobReference reference: String) -> (notificationID: String, index: Int)? {
        guard let mark = reference.lastIndex(of: "#"), let index = Int(reference[reference.index(after: mark)...]),
            index >= 0
        else { return nil }
        return (String(reference[..<mark]), index)
    }

    /// Whether a notification cursor says the notification is worked in ranges.
    public static func isRanged(cursor: String?) -> Bool { cursor == ranging || cursor == ranged }
}
