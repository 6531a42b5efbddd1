/// The `where` query of a send target: as sent, and parsed (once, when the request is read or a
/// stored notification loaded), so each page of the fan-out compiles the parsed form.
public struct TargetQuery: Sendable, Equatable {
    /// The parsed query.
    public let query: InstallationQuery
    /// The query as sent: what is stored and shown.
    public let json: JSONValue

    /// Parses a `where` object.
    /// - Throws: `HeraldError` naming the part of `field` at fault.
    public init(parsing json: JSONValue, field: String = "where") throws(HeraldError) {
        self.query = try InstallationQuery(parsing: json, field: field)
        self.json = json
    }
}
