import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore

/// The page parameters of a class query (`GET /1.1/installations`, `/1.1/classes/_Notification`):
/// `skip`, `limit` (0 to 1000; 100), `keys` (objectId, createdAt and updatedAt always) and
/// `count` (`1` or `true`: the number of matches beside the results). The store sorts, skips and
/// limits; this reads the parameters and shapes the answer.
package struct LeanCloudListing {
    /// The most objects one query returns (LeanCloud's own `limit` maximum).
    package static let maxLimit = 1000
    /// The most objects a query skips.
    package static let maxSkip = 1_000_000

    package var skip: Int
    package var limit: Int
    /// The fields to answer with, nil for all.
    package var keys: Set<String>?
    package var count: Bool

    /// Reads the parameters.
    /// - Throws: `LeanCloudFailure` 102 for a `limit` or `skip` out of range.
    package init(_ query: [String: String]) throws(LeanCloudFailure) {
        func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) throws(LeanCloudFailure) -> Int {
            guard let text = query[name] else { return value }
            guard let number = Int(text), range.contains(number) else {
                throw .invalidQuery("\(name) must be an integer in \(range).")
            }
            return number
        }
        limit = try integer("limit", default: 100, in: 0...Self.maxLimit)
        skip = try integer("skip", default: 0, in: 0...Self.maxSkip)
        keys = LeanCloudRoutes.keys(query).map { $0.union(["objectId", "createdAt", "updatedAt"]) }
        count = query["count"] == "1" || query["count"] == "true"
    }

    /// `{"results": [...], "count"?}` with the page's objects, each cut to `keys`.
    package func answer(_ objects: [JSONValue], count: Int?) -> LeanCloudRoutes.Answer {
        let results = objects.map { object in
            guard let keys, case .object(let members) = object else { return object }
            return JSONValue.object(members.filter { keys.contains($0.key) })
        }
        var json: [String: JSONValue] = ["results": .array(results)]
        if let count { json["count"] = .number(JSONNumber(count)) }
        return LeanCloudRoutes.Answer(status: .ok, json: .object(json))
    }
}
