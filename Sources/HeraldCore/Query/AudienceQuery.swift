/// The `where` query of a send target: as sent, and parsed (once, when the request is read or a
/// stored notification loaded), so each page of the fan-out compiles the parsed form.
public struct AudienceQuery: Sendable, Equatable {
    /// The parsed query.
    public let query: InstallationQuery
    /// The query in the native language: what is stored and shown.
    public let json: JSONValue

    /// Parses a native `where` object.
    /// - Throws: `HeraldError` naming the part of `field` at fault.
    public init(parsing json: JSONValue, field: String = "where") throws(HeraldError) {
        self.query = try InstallationQuery(parsing: json, field: field)
        self.json = json
    }

    /// Parses a `where` object in a dialect's field names (see
    /// ``InstallationQuery/init(parsing:field:resolver:)``); `json` is then the native equivalent.
    /// - Throws: `HeraldError` naming the part of `field` at fault.
    public init(
        parsing json: JSONValue, field: String, resolver: @escaping QueryFieldResolver
    ) throws(HeraldError) {
        let query = try InstallationQuery(parsing: json, field: field, resolver: resolver)
        self.query = query
        self.json = query.json
    }
}
