/// The field a query condition reads: one of the installation's own columns, or a path into its
/// free-form `attributes` object.
public enum QueryField: Sendable, Hashable {
    /// A column of the installation, named in queries by its JSON name (`user_id`, `badge`…).
    case column(Column)
    /// A path of keys into `attributes`; each key has only ASCII letters, digits, `_` and `-`.
    case attribute([String])

    /// The installation columns a query can name. The raw value is the JSON name, which is also
    /// the SQL column name.
    public enum Column: String, Sendable, CaseIterable {
        case id
        case userID = "user_id"
        case deviceID = "device_id"
        case platform, service, environment, channels, locale, timezone, badge
        case appVersion = "app_version"
        case osVersion = "os_version"
        case deviceModel = "device_model"
        case bundleID = "bundle_id"
        case valid
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case lastSeenAt = "last_seen_at"
        case lastDeliveredAt = "last_delivered_at"

        /// The type of value a column holds.
        public enum Kind: Sendable {
            case string, integer, boolean, date
            /// An array of strings (`channels`).
            case strings
        }

        /// The type of value the column holds.
        public var kind: Kind {
            switch self {
            case .channels: .strings
            case .badge: .integer
            case .valid: .boolean
            case .createdAt, .updatedAt, .lastSeenAt, .lastDeliveredAt: .date
            case .id, .userID, .deviceID, .platform, .service, .environment, .locale, .timezone, .appVersion,
                .osVersion, .deviceModel, .bundleID:
                .string
            }
        }

        /// Whether the column can be null (then `$exists` and `$eq: null` read it).
        public var isNullable: Bool {
            switch self {
            case .userID, .deviceID, .locale, .timezone, .appVersion, .osVersion, .deviceModel, .bundleID,
                .lastSeenAt, .lastDeliveredAt:
                true
            case .id, .platform, .service, .environment, .channels, .badge, .valid, .createdAt, .updatedAt:
                false
            }
        }
    }

    /// An attribute key is 1 to this many characters.
    public static let maxKeyLength = 128
    /// An attribute path has at most this many keys.
    public static let maxPathKeys = 8

    /// The field's name as a query writes it (`badge`, `attributes.profile.level`).
    public var name: String {
        switch self {
        case .column(let column): column.rawValue
        case .attribute(let path): (["attributes"] + path).joined(separator: ".")
        }
    }

    /// Reads a field name from a query: a column's JSON name, `attributes.<key>[.<key>…]`, or any
    /// other name, which is taken as an attribute path (LeanCloud keeps custom installation
    /// fields at the top level, so `{"vip": true}` reads `attributes.vip`).
    /// - Throws: `HeraldError` with code `invalid_query`, naming `path`, for a key with other
    ///   characters, an empty key, a bare `attributes`, or a column name followed by a sub-key.
    public init(parsing name: String, path: String) throws(HeraldError) {
        if let column = Column(rawValue: name) {
            self = .column(column)
            return
        }
        var keys = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if keys.first == "attributes" {
            keys.removeFirst()
            guard !keys.isEmpty else {
                throw .invalidValue(
                    path, code: "invalid_query", "Name an attribute key, as in 'attributes.<key>'.")
            }
        } else if let first = keys.first, keys.count > 1, Column(rawValue: first) != nil {
            throw .invalidValue(path, code: "invalid_query", "Field '\(first)' has no sub-fields.")
        }
        guard keys.count <= Self.maxPathKeys else {
            throw .invalidValue(
                path, code: "invalid_query", "An attribute path has at most \(Self.maxPathKeys) keys.")
        }
        for key in keys where !Self.isValidKey(key) {
            throw .invalidValue(
                path, code: "invalid_query",
                "Attribute keys are 1 to \(Self.maxKeyLength) ASCII letters, digits, '_' or '-'; '\(key)' is not.")
        }
        self = .attribute(keys)
    }

    /// Whether `key` can name an attribute. Keys end up in JSON paths, so they are held to a
    /// character set that needs no escaping.
    public static func isValidKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        return !utf8.isEmpty && utf8.count <= maxKeyLength
            && utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}
