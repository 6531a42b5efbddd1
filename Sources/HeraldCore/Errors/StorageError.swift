/// A store's own error that may mean the database cannot be written (a full disk, a read-only
/// file or server): such a failure answers `503 storage_unavailable`, not `500`, and `GET /readyz`
/// reports it.
public protocol StorageError: Error {
    /// Why the database cannot be written, when that is what the error says; nil otherwise.
    var unwritableReason: String? { get }
}

extension HeraldError {
    /// The database cannot be written, for `reason` (`the disk is full`): nothing was changed.
    public static func storageUnavailable(_ reason: String) -> HeraldError {
        HeraldError(
            kind: .unavailable, code: "storage_unavailable",
            message: "The database cannot be written (\(reason)); nothing was changed. Retry later.")
    }

    /// `error` as Herald's own error: itself, or `storage_unavailable` for a store's error that
    /// says the database cannot be written; nil for anything else.
    public static func classify(_ error: any Error) -> HeraldError? {
        if let error = error as? HeraldError { return error }
        if let reason = (error as? any StorageError)?.unwritableReason { return .storageUnavailable(reason) }
        return nil
    }
}
