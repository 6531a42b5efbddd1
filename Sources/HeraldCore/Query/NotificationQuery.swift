/// A selection of an app's notifications by their stored fields — status, counts, times, source —
/// that the stores compile to their own query (a dialect's listing of its pushes).
///
/// The operators are the installation query's (``QueryOperator``) with its semantics: a null
/// field is missing (`$eq: null` matches it, `$ne` and `$nin` do too), types compare strictly
/// (a count is a number, a time a date, the others strings), strings by their UTF-8 bytes. The
/// array and GeoPoint operators (`$all` with several values, `$regex` on a non-string field,
/// `$nearSphere`, `$within`) match nothing they cannot apply to.
public indirect enum NotificationQuery: Sendable, Equatable {
    /// Every sub-query matches; `.and([])` matches every notification.
    case and([NotificationQuery])
    /// At least one sub-query matches; `.or([])` matches none.
    case or([NotificationQuery])
    /// One operator applied to one field.
    case condition(field: Field, op: QueryOperator)

    /// The fields of a notification a query reads.
    public enum Field: String, Sendable, CaseIterable {
        case id
        /// The status's raw value (`scheduled`, `queued`, `sending`, `done`…).
        case status
        /// The surface that created it (a dialect's name); missing for the native API.
        case source
        case targeted, sent, failed, invalid
        /// `failed` plus `invalid`: the targeted devices that did not get it.
        case failedOrInvalid = "failed_or_invalid"
        case createdAt = "created_at"
        case startedAt = "started_at"
        case completedAt = "completed_at"
        /// When the last change of status happened: `completed_at`, else `started_at`, else `created_at`.
        case changedAt = "changed_at"
        /// Not sent before this time (a push time), missing when sent at once.
        case notBefore = "not_before"
        case expiresAt = "expires_at"

        /// The type of value the field holds.
        public var kind: QueryField.Column.Kind {
            switch self {
            case .id, .status, .source: .string
            case .targeted, .sent, .failed, .invalid, .failedOrInvalid: .integer
            case .createdAt, .startedAt, .completedAt, .changedAt, .notBefore, .expiresAt: .date
            }
        }

        /// Whether the field can be missing.
        public var isNullable: Bool {
            switch self {
            case .source, .startedAt, .completedAt, .notBefore, .expiresAt: true
            case .id, .status, .targeted, .sent, .failed, .invalid, .failedOrInvalid, .createdAt, .changedAt: false
            }
        }
    }
}
