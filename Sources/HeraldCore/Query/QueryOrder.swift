/// One key of the order a store lists query matches in: a field, ascending or descending.
///
/// The order is the same in every store. Values order by type first — missing or null, then
/// numbers, strings, booleans, and last arrays and objects — and within a type by value: numbers
/// numerically, strings by their UTF-8 bytes, `false` before `true`, dates by instant; arrays
/// and objects tie. `descending` reverses all of it (missing last). Records that tie on every
/// key follow in ascending id order.
public struct QueryOrder<Field: Sendable & Hashable>: Sendable, Hashable {
    /// The field sorted on.
    public var field: Field
    /// Whether larger values come first.
    public var descending: Bool

    /// Creates an order key.
    public init(_ field: Field, descending: Bool = false) {
        self.field = field
        self.descending = descending
    }
}
