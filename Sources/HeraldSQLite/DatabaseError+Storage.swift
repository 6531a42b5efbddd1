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
}

extension WALSyncError: StorageError {
    /// The log could not be synced: the disk cannot be written.
    var unwritableReason: String? { "the disk cannot be written (\(operation) failed)" }
}
