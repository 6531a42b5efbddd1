import Foundation

/// A device's report that its user opened a notification (`POST /v1/opens`): counted in the
/// notification's `opened` count once per installation.
public struct NotificationOpen: Sendable, Equatable {
    /// The members the body may have.
    public static let fields: Set<String> = ["notification_id", "installation_id", "opened_at"]
    /// Ids are Herald's (36 characters); anything longer names nothing.
    public static let maxIDLength = 64
    /// How far ahead of the server's clock `opened_at` may be (a device's clock runs a little off).
    public static let clockSkew: TimeInterval = 300

    public var notificationID: String
    public var installationID: String
    /// When the user opened it; nil means when the report arrived.
    public var openedAt: Date?

    /// Creates a report.
    public init(notificationID: String, installationID: String, openedAt: Date? = nil) {
        self.notificationID = notificationID
        self.installationID = installationID
        self.openedAt = openedAt
    }

    /// Parses the body of `POST /v1/opens`: `notification_id` and `installation_id` (required),
    /// `opened_at` (RFC 3339 with an offset, not ahead of `now` by more than ``clockSkew``).
    /// - Throws: `HeraldError` naming the field at fault: `unknown_field`, `missing_field`,
    ///   `invalid_type`, `invalid_length`, `invalid_timestamp`.
    public init(parsing value: JSONValue, now: Date) throws(HeraldError) {
        let body = try JSONObjectReader(value)
        try body.rejectUnknown(allowed: Self.fields)
        func id(_ key: String) throws(HeraldError) -> String {
            guard try body.string(key) != nil else { throw .missingField(key) }
            return try body.string(key, maxLength: Self.maxIDLength) ?? ""
        }
        notificationID = try id("notification_id")
        installationID = try id("installation_id")
        openedAt = try body.string("opened_at").map { (text) throws(HeraldError) in
            guard case .instant(let date)? = PushTime.parse(text) else {
                throw .invalidValue(
                    "opened_at", code: "invalid_timestamp",
                    "Field 'opened_at' must be an RFC 3339 date-time with an offset, like 2026-12-24T09:00:00Z.")
            }
            guard date.timeIntervalSince(now) <= Self.clockSkew else {
                throw .invalidValue("opened_at", code: "invalid_timestamp", "Field 'opened_at' is in the future.")
            }
            return date
        }
    }
}

/// What recording an open did.
public enum OpenRecording: Sendable, Equatable {
    /// The first open of the notification by the installation: counted.
    case recorded(openedAt: Date)
    /// The installation had opened it already: nothing changed; the first open's time.
    case repeated(openedAt: Date)
    /// No such notification in the app.
    case unknownNotification
    /// No such installation in the app (or not the user's).
    case unknownInstallation
}
