/// The SQL vocabulary both stores share, which ``QueryCompiler`` writes with: the ordering
/// operators, the columns of the installations and of a dialect's table of JSON records, and the
/// SQL expression of each notification field. What a store spells its own way is its
/// ``QueryDialect``.
extension QueryOperator.Comparison {
    /// The comparison's SQL operator.
    public var sqlOperator: String {
        switch self {
        case .lessThan: "<"
        case .lessThanOrEqual: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqual: ">="
        }
    }
}

extension QueryField.Column {
    /// The column of an `installations` row that holds the field.
    public var installationColumn: String { rawValue }

    /// The column of a dialect's table of JSON records (`id`, `fields`, `created_at`,
    /// `updated_at`) that holds the field, as ``InstallationQuery/matches(record:)`` reads a record;
    /// nil for a field such records lack (every record is missing it).
    public var recordColumn: String? {
        switch self {
        case .id, .createdAt, .updatedAt: rawValue
        default: nil
        }
    }
}

extension NotificationQuery.Field {
    /// The column of `notifications`, or the SQL expression over it, holding the field (times as
    /// seconds since 1970); the same in both stores' SQL.
    public var sqlExpression: String {
        switch self {
        case .failedOrInvalid: "(failed + invalid)"
        case .changedAt: "COALESCE(completed_at, started_at, created_at)"
        case .id, .status, .source, .targeted, .sent, .failed, .invalid, .createdAt, .startedAt, .completedAt,
            .notBefore, .expiresAt:
            rawValue
        }
    }
}
