import Foundation
import GRDB
import HeraldCore

extension SQLiteStore {
    /// Installations decoded while the cursor stands on each row (no intermediate row copies).
    func fetchInstallations(_ db: Database, sql: String, arguments: StatementArguments) throws -> [Installation] {
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        var installations: [Installation] = []
        while let row = try cursor.next() { installations.append(try decode(row)) }
        return installations
    }

    func fetchOne(
        _ db: Database, where condition: String, _ arguments: StatementArguments
    ) throws
        -> Installation?
    {
        // Cached statements: registration and import run these once per device. The id comes
        // first, from a one-column statement: a registration usually finds no row, and a cursor
        // over `SELECT *` costs a name table of every column even then.
        guard
            let id = try String.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM installations WHERE \(condition)"), arguments: arguments)
        else { return nil }
        return try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM installations WHERE id = ?"), arguments: [id]
        )
        .map(decode)
    }

    func delete(_ db: Database, id: String) throws {
        try db.execute(sql: "DELETE FROM installations WHERE id = ?", arguments: [id])
    }

    /// The columns ``write(_:_:tokenIndex:sealedToken:insert:)`` sets, in the order of its values.
    private static let writtenColumns = [
        "app_id", "user_id", "device_id", "platform", "service", "environment", "token_index", "token_sealed",
        "channels", "locale", "timezone", "badge", "app_version", "os_version", "device_model", "bundle_id",
        "attributes", "sns_endpoint_arn", "valid", "failure_count", "last_failure_at", "last_failure_reason",
        "last_delivered_at", "last_seen_at", "created_at", "updated_at", "invalidated_at", "delete_when_invalid",
    ]
    private static let insertSQL =
        "INSERT INTO installations (\(writtenColumns.joined(separator: ", ")), id) VALUES (\(placeholders(writtenColumns.count + 1)))"
    private static let updateSQL =
        "UPDATE installations SET \(writtenColumns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?"

    func write(
        _ db: Database, _ installation: Installation, tokenIndex: [UInt8], sealedToken: [UInt8], insert: Bool
    ) throws {
        let values: [(any DatabaseValueConvertible)?] = [
            installation.appID, installation.userID, installation.deviceID, installation.platform.rawValue,
            installation.service.rawValue, installation.environment.rawValue, Data(tokenIndex), Data(sealedToken),
            String(decoding: JSONValue.array(installation.channels.map(JSONValue.string)).serialized(), as: UTF8.self),
            installation.locale, installation.timezone, installation.badge, installation.appVersion,
            installation.osVersion, installation.deviceModel, installation.bundleID,
            String(decoding: JSONValue.object(installation.attributes).serialized(), as: UTF8.self),
            installation.snsEndpointARN, installation.valid, installation.failureCount,
            installation.lastFailureAt?.timeIntervalSince1970, installation.lastFailureReason,
            installation.lastDeliveredAt?.timeIntervalSince1970, installation.lastSeenAt?.timeIntervalSince1970,
            installation.createdAt.timeIntervalSince1970, installation.updatedAt.timeIntervalSince1970,
            installation.invalidatedAt?.timeIntervalSince1970, installation.deleteWhenInvalid, installation.id,
        ]
        let arguments = StatementArguments(values)
        if insert {
            try db.cachedStatement(sql: Self.insertSQL).execute(arguments: arguments)
        } else {
            try db.cachedStatement(sql: Self.updateSQL).execute(arguments: arguments)
            try db.cachedStatement(sql: "DELETE FROM installation_channels WHERE installation_id = ?")
                .execute(arguments: [installation.id])
        }
        for channel in installation.channels {
            try db.cachedStatement(
                sql: "INSERT INTO installation_channels (app_id, channel, installation_id) VALUES (?, ?, ?)"
            ).execute(arguments: [installation.appID, channel, installation.id])
        }
    }

    /// The columns of `installations` in table order (`SELECT *` returns them so): fan-out decodes
    /// thousands of rows per page, and reading by position skips a name search per column.
    private enum Column: Int {
        case id, appID, userID, deviceID, platform, service, environment, tokenIndex, tokenSealed, channels, locale
        case timezone, badge, appVersion, osVersion, deviceModel, bundleID, attributes, snsEndpointARN, valid
        case failureCount, lastFailureAt, lastFailureReason, lastDeliveredAt, lastSeenAt, createdAt, updatedAt
        case invalidatedAt, deleteWhenInvalid
    }

    /// `?, ?, …`: the bound parameters of an `IN (…)` list or a `VALUES (…)` row.
    static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    func decode(_ row: Row) throws -> Installation {
        guard row.count > Column.deleteWhenInvalid.rawValue else {
            throw HeraldError.internal("Installation rows must be read with SELECT *.")
        }
        // `StatementColumnConvertible` selects GRDB's fast path: straight from the SQLite
        // statement while a cursor is on the row, without boxing a `DatabaseValue` per column.
        func value<Value: DatabaseValueConvertible & StatementColumnConvertible>(_ column: Column) -> Value {
            row[column.rawValue]
        }
        func optional<Value: DatabaseValueConvertible & StatementColumnConvertible>(_ column: Column) -> Value? {
            row[column.rawValue]
        }
        func date(_ column: Column) -> Date? { (optional(column) as Double?).map(Date.init(timeIntervalSince1970:)) }
        func enumeration<Value: RawRepresentable>(_ column: Column) throws -> Value where Value.RawValue == String {
            guard let value = Value(rawValue: value(column)) else {
                throw HeraldError.internal("Stored installation has an unknown \(column).")
            }
            return value
        }
        /// Empty collections are most rows': no parser needed for them.
        func json(_ column: Column, empty: JSONValue) throws -> JSONValue {
            let text: String = value(column)
            if text == "[]" || text == "{}" { return empty }
            return try JSONValue.parse(Array(text.utf8))
        }
        let service: PushService = try enumeration(.service)
        let token = try cipher.openToken(Array(value(.tokenSealed) as Data), service: service)
        guard case .array(let channelValues) = try json(.channels, empty: .array([])),
            case .object(let attributeMembers) = try json(.attributes, empty: .object([:]))
        else {
            throw HeraldError.internal("Stored installation has unreadable channels or attributes.")
        }
        return Installation(
            id: value(.id), appID: value(.appID), userID: optional(.userID), deviceID: optional(.deviceID),
            platform: try enumeration(.platform), service: service, environment: try enumeration(.environment),
            token: token,
            channels: channelValues.compactMap { if case .string(let name) = $0 { name } else { nil } },
            locale: optional(.locale), timezone: optional(.timezone), badge: value(.badge),
            appVersion: optional(.appVersion), osVersion: optional(.osVersion), deviceModel: optional(.deviceModel),
            bundleID: optional(.bundleID), attributes: attributeMembers, snsEndpointARN: optional(.snsEndpointARN),
            valid: value(.valid), failureCount: value(.failureCount), lastFailureAt: date(.lastFailureAt),
            lastFailureReason: optional(.lastFailureReason), lastDeliveredAt: date(.lastDeliveredAt),
            lastSeenAt: date(.lastSeenAt), createdAt: date(.createdAt) ?? Date(timeIntervalSince1970: 0),
            updatedAt: date(.updatedAt) ?? Date(timeIntervalSince1970: 0), invalidatedAt: date(.invalidatedAt),
            deleteWhenInvalid: value(.deleteWhenInvalid))
    }
}
