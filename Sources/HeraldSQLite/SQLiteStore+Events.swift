import Foundation
import GRDB
import HeraldCore

extension SQLiteStore: EventStore {
    // MARK: Source devices

    public func insertSourceDevice(_ device: SourceDevice) async throws -> SourceDevice {
        try await durableWrite { db in
            // An id and an alias share one namespace: a reference must name one device only.
            var taken = [device.id]
            if let alias = device.alias { taken.append(alias) }
            let marks = Self.placeholders(taken.count)
            let clash = try Bool.fetchOne(
                db,
                sql: "SELECT 1 FROM source_devices WHERE app_id = ? AND (id IN (\(marks)) OR alias IN (\(marks)))",
                arguments: StatementArguments([device.appID] + taken + taken))
            guard clash != true else {
                throw HeraldError(
                    kind: .conflict, code: "device_exists",
                    message: "A device of this app already has this id or alias.", field: "id")
            }
            try db.cachedExecute(
                sql: """
                    INSERT INTO source_devices (app_id, id, alias, name, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    device.appID, device.id, device.alias, device.name, device.createdAt.timeIntervalSince1970,
                    device.updatedAt.timeIntervalSince1970,
                ])
            return device
        }
    }

    public func sourceDevice(appID: String, reference: String) async throws -> SourceDevice? {
        // Every camera event reads its device first: on the calling thread, like the device by token.
        try await smallRead(oneStatement: true) { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT * FROM source_devices WHERE app_id = ? AND (id = ? OR alias = ?)
                        ORDER BY id = ? DESC LIMIT 1
                        """),
                arguments: [appID, reference, reference, reference]
            ).map(Self.decodeSourceDevice)
        }
    }

    // MARK: Ownership

    public func setOwnership(_ ownership: Ownership) async throws -> Ownership? {
        try await durableWrite { db in
            guard
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM source_devices WHERE app_id = ? AND id = ?"),
                    arguments: [ownership.appID, ownership.deviceID]) == true
            else { return nil }
            return try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        INSERT INTO source_device_owners (app_id, device_id, user_id, status, created_at, updated_at)
                        VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT (app_id, device_id, user_id) DO UPDATE SET
                            status = excluded.status, updated_at = excluded.updated_at
                        RETURNING *
                        """),
                arguments: [
                    ownership.appID, ownership.deviceID, ownership.userID, ownership.status.rawValue,
                    ownership.createdAt.timeIntervalSince1970, ownership.updatedAt.timeIntervalSince1970,
                ]
            ).map(Self.decodeOwnership)
        }
    }

    public func ownership(appID: String, deviceID: String, userID: String) async throws -> Ownership? {
        try await database.read { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT * FROM source_device_owners WHERE app_id = ? AND device_id = ? AND user_id = ?"),
                arguments: [appID, deviceID, userID]
            ).map(Self.decodeOwnership)
        }
    }

    public func ownerships(appID: String, deviceID: String) async throws -> [Ownership] {
        try await database.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT * FROM source_device_owners WHERE app_id = ? AND device_id = ? ORDER BY user_id"),
                arguments: [appID, deviceID]
            ).map(Self.decodeOwnership)
        }
    }

    // MARK: Events

    public func insertEvent(
        _ event: SourceEvent, notifying: @escaping @Sendable (SourceEvent) throws -> EventNotification?
    ) async throws -> (event: SourceEvent, created: Bool) {
        try await groupCommit.write(durable: true) { db in
            if let earlier = try self.fetchEvent(
                db, where: "e.app_id = ? AND e.producer = ? AND e.external_id = ?",
                [event.appID, event.producer, event.externalID])
            {
                return (earlier, false)
            }
            if let record = event.recordID,
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM events WHERE app_id = ? AND producer = ? AND record_id = ?"),
                    arguments: [event.appID, event.producer, record])
                    == true
            {
                throw HeraldError(
                    kind: .conflict, code: "event_exists",
                    message: "Another event of this app has this record id.", field: "id")
            }
            var stored = event
            stored.owners = try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT user_id FROM source_device_owners WHERE app_id = ? AND device_id = ? AND status = ?
                        ORDER BY user_id
                        """),
                arguments: [event.appID, event.sourceDeviceID, Ownership.Status.active.rawValue])
            stored.notificationID = nil
            stored.pushSentAt = nil
            try db.cachedExecute(
                sql: """
                    INSERT INTO events (id, app_id, producer, external_id, record_id, source_device_id, owners, type,
                        summary, thumbnail, status, occurred_at, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    stored.id, stored.appID, stored.producer, stored.externalID, stored.recordID, stored.sourceDeviceID,
                    String(decoding: JSONValue.array(stored.owners.map(JSONValue.string)).serialized(), as: UTF8.self),
                    stored.type, stored.summary, stored.thumbnail, stored.status,
                    stored.occurredAt?.timeIntervalSince1970, stored.createdAt.timeIntervalSince1970,
                ])
            if let caused = try notifying(stored),
                try !caused.onlyWithAudience || caused.notification.target.holdsTokens
                    || self.reachesAnyone(caused.notification.target, appID: stored.appID, db)
            {
                try self.insertNotification(
                    caused.notification, spec: try self.sealSpec(caused.notification), runAt: caused.runAt,
                    lease: caused.lease, db)
                try db.cachedExecute(
                    sql: "UPDATE events SET notification_id = ? WHERE app_id = ? AND id = ?",
                    arguments: [caused.notification.id, stored.appID, stored.id])
                stored.notificationID = caused.notification.id
            }
            return (stored, true)
        }
    }

    public func event(appID: String, producer: String, id: String) async throws -> SourceEvent? {
        try await database.read { db in
            try self.fetchEvent(
                db, where: "e.app_id = ? AND e.producer = ? AND e.record_id = ?", [appID, producer, id])
                ?? self.fetchEvent(db, where: "e.app_id = ? AND e.producer = ? AND e.id = ?", [appID, producer, id])
        }
    }

    // MARK: Rows

    private func fetchEvent(
        _ db: Database, where condition: String, _ arguments: StatementArguments
    ) throws -> SourceEvent? {
        // Whether a push went out is the notification's to say; an event whose notification was
        // cleaned up keeps the copy clean-up left in push_sent_at.
        // Cached: the conditions are the few fixed ones of this file's callers.
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT e.*, coalesce(e.push_sent_at, n.first_sent_at) AS sent_at FROM events e
                    LEFT JOIN notifications n ON n.id = e.notification_id
                    WHERE \(condition)
                    """),
            arguments: arguments)
        guard let row else { return nil }
        func date(_ column: String) -> Date? { (row[column] as Double?).map(Date.init(timeIntervalSince1970:)) }
        guard case .array(let owners) = try JSONValue.parse(Array((row["owners"] as String).utf8)) else {
            throw HeraldError.internal("Stored event has unreadable owners.")
        }
        return SourceEvent(
            id: row["id"], appID: row["app_id"], producer: row["producer"], externalID: row["external_id"],
            recordID: row["record_id"],
            sourceDeviceID: row["source_device_id"],
            owners: owners.compactMap { if case .string(let user) = $0 { user } else { nil } },
            type: row["type"], summary: row["summary"], thumbnail: row["thumbnail"], status: row["status"],
            occurredAt: date("occurred_at"), notificationID: row["notification_id"], pushSentAt: date("sent_at"),
            createdAt: date("created_at") ?? Date(timeIntervalSince1970: 0))
    }

    private static func decodeSourceDevice(_ row: Row) -> SourceDevice {
        SourceDevice(
            id: row["id"], appID: row["app_id"], alias: row["alias"], name: row["name"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    private static func decodeOwnership(_ row: Row) throws -> Ownership {
        guard let status = Ownership.Status(rawValue: row["status"]) else {
            throw HeraldError.internal("Stored ownership has an unknown status.")
        }
        return Ownership(
            appID: row["app_id"], deviceID: row["device_id"], userID: row["user_id"], status: status,
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }
}
