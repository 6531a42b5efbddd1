/// What a store's SQL spells its own way when ``QueryCompiler`` compiles a query: literals, byte
/// order, binding, regular expressions, and the JSON access behind `channels` and attribute paths.
/// Everything else (the query's structure, null and type handling, membership, negation) is the
/// compiler's, the same for every store.
///
/// A fragment a dialect returns for a predicate may be NULL only where it says so; the compiler
/// guards those, so every expression it builds is true or false, never NULL.
public protocol QueryDialect: Sendable {
    /// The literal true (`1`, `TRUE`).
    var trueLiteral: String { get }
    /// The literal false (`0`, `FALSE`).
    var falseLiteral: String { get }
    /// What follows a text expression so that it compares by its UTF-8 bytes, as Swift compares
    /// strings (empty when that is already the default).
    var byteOrder: String { get }

    /// The NULL a column the table lacks reads as, typed as the column would be.
    func missingColumn(_ kind: QueryField.Column.Kind) -> String
    /// An `ORDER BY` term for a column (or expression) of one type: nulls first ascending, last descending.
    func orderTerm(_ column: String, kind: QueryField.Column.Kind, descending: Bool) -> String
    /// A non-null value bound as the store holds it (booleans, numbers, dates), cast where needed.
    func bound(_ value: QueryValue) -> SQLFragment
    /// Whether the text expression `subject` contains a match of the pattern; may be NULL when
    /// `subject` is.
    func regex(_ subject: String, pattern: String, caseInsensitive: Bool) -> SQLFragment

    // MARK: The channels array

    /// Whether an element of the `channels` array, as text named `value`, satisfies `predicate`.
    func channelElement(where predicate: SQLFragment) -> SQLFragment
    /// Whether the `channels` array holds one of the names (at least one).
    func channelsContain(anyOf names: [String]) -> SQLFragment

    // MARK: Attribute paths

    /// The JSON type name of the value at the path: `'null'` for JSON null, NULL when missing.
    func type(of attribute: QueryAttribute) -> SQLFragment
    /// Whether the value at the path, or one of its elements when it is an array (an object has
    /// none), satisfies `predicate`, which reads one element through ``elementIsText``,
    /// ``elementText``, ``elementIsNumber`` and ``elementNumber``.
    func element(of attribute: QueryAttribute, where predicate: SQLFragment) -> SQLFragment
    /// Whether an element is a string.
    var elementIsText: String { get }
    /// An element's text, when it is a string.
    var elementText: String { get }
    /// Whether an element is a number.
    var elementIsNumber: String { get }
    /// An element's number, comparable with ``bound(_:)`` of a `.number`.
    var elementNumber: String { get }
    /// Whether the value at the path, or one of its elements when it is an array, equals one of
    /// the values (at least one; strings, numbers and booleans only), types compared strictly.
    func attribute(_ attribute: QueryAttribute, equalsAnyOf values: [QueryValue]) -> SQLFragment
    /// The value at the path as `herald_geo_distance` and `herald_geo_within` read a GeoPoint.
    func geoPoint(_ attribute: QueryAttribute) -> SQLFragment
    /// `ORDER BY` terms in ``QueryOrder``'s order: the type's rank (missing or null, numbers,
    /// strings, booleans, arrays and objects), then the value within its type.
    func orderTerms(_ attribute: QueryAttribute, descending: Bool) -> [SQLFragment]
}

/// A path of validated keys into a table's JSON object column.
public struct QueryAttribute: Sendable, Equatable {
    /// The JSON object column (`attributes`).
    public var column: String
    /// The keys, each of the characters ``QueryField/isValidKey(_:)`` allows.
    public var keys: [String]

    public init(column: String, keys: [String]) {
        self.column = column
        self.keys = keys
    }
}

/// Where a query's fields live in a table: the columns it names, and the JSON column its attribute
/// paths read.
public struct QueryTable: Sendable {
    /// The JSON object column attribute paths read.
    public var attributes: String
    /// Whether the table has the `channels` JSON array column.
    public var hasChannels: Bool
    /// The SQL a column reads (a column name or an expression), nil for one the table lacks: a
    /// field every record is missing.
    public var column: @Sendable (QueryField.Column) -> String?

    public init(attributes: String, hasChannels: Bool, column: @escaping @Sendable (QueryField.Column) -> String?) {
        self.attributes = attributes
        self.hasChannels = hasChannels
        self.column = column
    }

    /// A dialect's table of JSON records (`id`, `fields`, `created_at`, `updated_at`), as
    /// ``InstallationQuery/matches(record:)`` reads a record.
    public static let records = QueryTable(attributes: "fields", hasChannels: false) { $0.recordColumn }
}
