/// A store's own error that may mean the database cannot be written (a full disk, a read-only
/// file or server): such a failure answers `503 storage_unavailable`, not `500`, and `GET /readyz`
/// reports it.
public protocol StorageError: Error {
    /// Why the database cannot be written, when that is what the error says; nil otherwise.
    var unwritableReason: String? { get }
    /// Whether the failed write may have been kept all the same (a failed sync of a commit, an I/O
    /// error): `.unknown`, not `.unchanged`.
    var unwrittenChange: HeraldError.StorageOutcome { get }
}

extension HeraldError {
    /// What a write the database refused left behind.
    public enum StorageOutcome: Sendable {
        /// Nothing: the database refused the change (a full disk, a read-only file) or was never reached.
        case unchanged
        /// Not known: the change was committed but not synced (a failed `fdatasync`), or the
        /// connection was lost or timed out while the database worked on it.
        case unknown
    }

    /// The database cannot be written, for `reason` (`the disk is full`), and what the request left
    /// behind: nothing, or not known (the answer then says so, and that a retry is safe).
    public static func storageUnavailable(_ reason: String, _ outcome: StorageOutcome = .unchanged) -> HeraldError {
        let change =
            switch outcome {
            case .unchanged: "nothing was changed. Retry later."
            case .unknown:
                "the change may have been kept or not. Retry it: a registration or change repeated is the same, "
                    + "and a send repeated with its idempotency key is sent once."
            }
        return HeraldError(
            kind: .unavailable, code: "storage_unavailable",
            message: "The database cannot be written (\(reason)); \(change)")
    }

    /// `error` as Herald's own error: itself, or `storage_unavailable` for a store's error that
    /// says the database cannot be written; nil for anything else.
    public static func classify(_ error: any Error) -> HeraldError? {
        if let error = error as? HeraldError { return error }
        if let error = error as? any StorageError, let reason = error.unwritableReason {
            return .storageUnavailable(reason, error.unwrittenChange)
        }
        return nil
    }
}
