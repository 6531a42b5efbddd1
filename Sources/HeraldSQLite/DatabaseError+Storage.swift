import GRDB
import HeraldCore

extension DatabaseError: StorageError {
    /// SQLite's result codes for a database that cannot be written.
    public var unwritableReason: String? {
        switch resultCode {
        case .SQLITE_FULL: "the disk is full"
        case .SQLITE_READONLY: "the database is read-only"
        case .SQLITE_IOERR: "the disk cannot be written"
        case .SQLITE_CANTOPEN: "the database file cannot be opened"
        default: nil
        }
    }

    /// An I/O error may come from the commit's own write or sync: the change may have been kept.
    public var unwrittenChange: HeraldError.StorageOutcome {
        resultCode == .SQLITE_IOERR ? .unknown : .unchanged
    }
}

extension WALSyncError: StorageError {
    /// The log could not be synced: the disk cannot be written (and, after a failed `fdatasync`, is not
    /// trusted again until a restart).
    var unwritableReason: String? {
        operation == "open"
            ? "the disk cannot be written (\(operation) failed)"
            : "the disk cannot be written (\(operation) failed; restart Herald once the disk is fixed)"
    }

    /// A failed sync leaves the commit in SQLite's log, unsynced: it may be there after a restart, or not.
    var unwrittenChange: HeraldError.StorageOutcome { operation == "open" ? .unchanged : .unknown }
}
