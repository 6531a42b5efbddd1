import Foundation

/// A point on the Earth, as the LeanCloud/Parse query language and data store it:
/// `{"__type": "GeoPoint", "latitude": …, "longitude": …}` in degrees.
public struct GeoPoint: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double

    /// The Earth's mean radius, for distances given in kilometres or miles.
    public static let earthRadiusKilometers = 6371.0
    public static let earthRadiusMiles = 3958.8

    /// Creates a point; nil when the latitude is outside −90…90 or the longitude outside −180…180.
    public init?(latitude: Double, longitude: Double) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The point of a `GeoPoint` object; nil for anything else.
    public init?(json: JSONValue) {
        guard case .object(let members) = json, members["__type"] == .string("GeoPoint"),
            case .number(let latitude)? = members["latitude"], case .number(let longitude)? = members["longitude"]
        else { return nil }
        self.init(latitude: latitude.doubleValue, longitude: longitude.doubleValue)
    }

    /// The point as a `GeoPoint` object.
    public var json: JSONValue {
        .object([
            "__type": .string("GeoPoint"), "latitude": .number(JSONNumber(latitude)),
            "longitude": .number(JSONNumber(longitude)),
        ])
    }

    /// The great-circle distance to another point, in radians (the haversine formula).
    public func distance(to other: GeoPoint) -> Double {
        Self.distance(latitude, longitude, other.latitude, other.longitude)
    }

    /// The great-circle distance between two points given in degrees, in radians.
    public static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let (phi1, phi2) = (lat1 * .pi / 180, lat2 * .pi / 180)
        let deltaPhi = (lat2 - lat1) * .pi / 180
        let deltaLambda = (lon2 - lon1) * .pi / 180
        let a =
            sin(deltaPhi / 2) * sin(deltaPhi / 2) + cos(phi1) * cos(phi2) * sin(deltaLambda / 2) * sin(deltaLambda / 2)
        return 2 * atan2(sqrt(a), sqrt(max(0, 1 - a)))
    }

    /// Whether the point lies in the box from `southwest` to `northeast`; a box whose western edge
    /// is east of its eastern one crosses the antimeridian.
    public func isWithin(southwest: GeoPoint, northeast: GeoPoint) -> Bool {
        guard latitude >= southwest.latitude, latitude <= northeast.latitude else { return false }
        if southwest.longitude <= northeast.longitude {
            return longitude >= southwest.longitude && longitude <= northeast.longitude
        }
        return longitude >= southwest.longitude || longitude <= northeast.longitude
    }
}

/// The geo operators of the query language, read beside each other in one field's operator object:
/// `$nearSphere` with at most one of `$maxDistanceInRadians` / `…InKilometers` / `…InMiles`
/// (`$maxDistance` is radians too), and `$within: {"$box": [southwest, northeast]}`.
enum GeoQuery {
    /// The distance keys that go beside `$nearSphere`, and how many radians one unit of each is.
    static let distanceKeys: [String: Double] = [
        "$maxDistance": 1, "$maxDistanceInRadians": 1,
        "$maxDistanceInKilometers": 1 / GeoPoint.earthRadiusKilometers,
        "$maxDistanceInMiles": 1 / GeoPoint.earthRadiusMiles,
    ]

    /// The operator of `$nearSphere` or `$within` on `field`, with the distance keys among `operators`.
    /// - Throws: `HeraldError` `invalid_query` naming the part at fault.
    static func parse(
        _ key: String, _ operand: JSONValue, operators: [String: JSONValue], field: QueryField, path: String
    ) throws(HeraldError) -> QueryOperator {
        let operatorPath = "\(path).\(key)"
        guard case .attribute = field else {
            throw invalid(operatorPath, "'\(key)' applies to GeoPoint fields; '\(path)' is not one.")
        }
        switch key {
        case "$nearSphere":
            let center = try point(operand, path: operatorPath)
            let given = operators.keys.filter { distanceKeys[$0] != nil }.sorted()
            guard given.count <= 1 else {
                throw invalid("\(path).\(given[1])", "Give one maximum distance beside '$nearSphere'.")
            }
            guard let distanceKey = given.first, let unit = distanceKeys[distanceKey] else {
                return .nearSphere(center, maxDistance: nil)
            }
            guard case .number(let number)? = operators[distanceKey], number.doubleValue >= 0 else {
                throw invalid("\(path).\(distanceKey)", "Field '\(path).\(distanceKey)' must be a number ≥ 0.")
            }
            return .nearSphere(center, maxDistance: number.doubleValue * unit)
        default:
            guard case .object(let members) = operand, members.count == 1, case .array(let corners)? = members["$box"],
                corners.count == 2
            else {
                throw invalid(operatorPath, "'$within' takes {\"$box\": [southwest GeoPoint, northeast GeoPoint]}.")
            }
            let southwest = try point(corners[0], path: "\(operatorPath).$box[0]")
            let northeast = try point(corners[1], path: "\(operatorPath).$box[1]")
            guard southwest.latitude <= northeast.latitude else {
                throw invalid("\(operatorPath).$box", "The southwest corner must be south of the northeast one.")
            }
            return .withinBox(southwest: southwest, northeast: northeast)
        }
    }

    private static func point(_ value: JSONValue, path: String) throws(HeraldError) -> GeoPoint {
        guard let point = GeoPoint(json: value) else {
            throw invalid(
                path,
                "Field '\(path)' must be a GeoPoint: {\"__type\": \"GeoPoint\", \"latitude\": −90…90, \"longitude\": −180…180}."
            )
        }
        return point
    }

    private static func invalid(_ path: String, _ message: String) -> HeraldError {
        .invalidValue(path, code: "invalid_query", message)
    }
}
