import HeraldCore

extension Dictionary where Key == String, Value == JSONValue {
    /// Merges `other` over `self`: nested objects merge key by key, anything else replaces; a
    /// `null` removes the key (so an override can drop a rendered field).
    public func merging(deep other: [String: JSONValue]) -> [String: JSONValue] {
        var result = self
        for (key, value) in other {
            switch (result[key], value) {
            case (_, .null): result[key] = nil
            case (.object(let mine)?, .object(let theirs)): result[key] = .object(mine.merging(deep: theirs))
            default: result[key] = value
            }
        }
        return result
    }
}
