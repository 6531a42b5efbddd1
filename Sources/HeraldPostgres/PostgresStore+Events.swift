import Foundation
import HeraldCore
import PostgresNIO

extension PostgresStore: EventStore {
    // MARK: Source devices

    public func insertSourceDevice(_ device: SourceDevice) async throws -> SourceDevice {
        try await transaction { connection in
            // An id and an alias share one namespace per app: nodes adding devices to one app take turns.
            try await connection.run(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 1))", ["source_devices\u{1F}\(device.appID)"])
            var taken = [device.id]
            if let alias = device.alias { taken.append(alias) }
            let clash = try await connection.rows(
                "SELECT 1 FROM source_devices WHERE app_id = $1 AND (id = ANY($2) OR alias = ANY($2))",
                [device.appID, taken])
            guard clash.isEmpty else {
                throw HeraldError(
                    kind: .conflict, code: "device_exists",
                    message: "A device of this app already has this id or alias.", field: "id")
            }
            try await connection.run(
                """
                INSERT INTO source_devices (app_id, id, alias, name, created_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6)
                """,
                [
                    device.appID, device.id, device.alias, device.name, device.createdAt.timeIntervalSince1970,
                    device.updatedAt.timeIntervalSince1970,
                ])
            return device
        }
    }

    public func sourceDevice(appID: String, reference: String) async throws -> SourceDevice? {
        try await read { connection in
            try await connection.rows(
                """
                SELECT * FROM source_devices WHERE app_id = $1 AND (id = $2 OR alias = $2)
                ORDER BY id = $2 DESC LIMIT 1
                """, [appID, reference])
        }.first.map(Self.decodeSourceDevice)
    }

    // MARK: Ownership

    public func setOwnership(_ ownership: Ownership) async throws -> Ownership? {
        try await transaction { connection in
            guard
                !(try await connection.rows(
                    "SELECT 1 FROM source_devices WHERE app_id = $1 AND id = $2 FOR SHARE",
                    [ownership.appID, ownership.deviceID]
                ).isEmpty)
            else { return nil }
            return try await connection.rows(
                """
                INSERT INTO source_device_owners (app_id, device_id, user_id, status, created_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (app_id, device_id, user_id) DO UPDATE SET
                    status = excluded.status, updated_at = excluded.updated_at
                RETURNING *
                """,
                [
                    ownership.appID, ownership.deviceID, ownership.userID, ownership.status.rawValue,
                    ownership.createdAt.timeIntervalSince1970, ownership.updatedAt.timeIntervalSince1970,
                ]
            ).first.map(Self.decodeOwnership)
        }
    }

    public func ownership(appID: String, deviceID: String, userID: String) async throws -> Ownership? {
        try await read { connection in
            try await connection.rows(
                "SELECT * FROM source_device_owners WHERE app_id = $1 AND device_id = $2 AND user_id = $3",
                [appID, deviceID, userID])
        }.first.map(Self.decodeOwnership)
    }

    public func ownerships(appID: String, deviceID: String) async throws -> [Ownership] {
        try await read { connection in
            try await connection.rows(
                "SELECT * FROM source_device_owners WHERE app_id = $1 AND device_id = $2 ORDER BY user_id",
                [appID, deviceID])
        }.map(Self.decodeOwnership)
    }

    // MARK: Events

    public func insertEvent(
        _ event: SourceEvent, notifying: @escaping @Sendable (SourceEvent) throws -> EventNotification?
    ) async throws -> (event: SourceEvent, created: Bool) {
        try await transaction { connection in
            // The same event delivered to two nodes at once is stored once: events with the same id (or
            // record id) take turns, others do not wait for each other. Every event takes its id's lock
            // before its record id's (a NULL key takes none), so two cannot wait for each other's.
            let key = "\(event.appID)\u{1F}\(event.producer)\u{1F}"
            try await connection.run(
                """
                SELECT pg_advisory_xact_lock(hashtextextended($1, 2)), pg_advisory_xact_lock(hashtextextended($2, 2))
                """, ["events\u{1F}\(key)\(event.externalID)", event.recordID.map { "records\u{1F}\(key)\($0)" }])
            if let earlier = try await self.fetchEvent(
                connection, where: "e.app_id = $1 AND e.producer = $2 AND e.external_id = $3",
                [event.appID, event.producer, event.externalID])
            {
                return (earlier, false)
            }
            // Whether the record id is another event's, and the device's owners, in one trip.
            let found = try await connection.rows(
                """
                SELECT EXISTS (SELECT 1 FROM events WHERE app_id = $1 AND producer = $2 AND record_id = $3)
                        AS record_taken,
                    ARRAY(SELECT user_id FROM source_device_owners WHERE app_id = $1 AND device_id = $4
                        AND status = $5 ORDER BY user_id) AS owners
                """,
                [
                    event.appID, event.producer, event.recordID, event.sourceDeviceID,
                    Ownership.Status.active.rawValue,
                ])
            guard let row = found.first else { throw HeraldError.internal("The event's lookup returned no row.") }
            if event.recordID != nil, try row.get("record_taken", as: Bool.self) {
                throw HeraldError(
                    kind: .conflict, code: "event_exists",
                    message: "Another event of this app has this record id.", field: "id")
            }
            var stored = event
            stored.owners = try row.get("owners", as: [String].self)
            stored.notificationID = nil
            stored.pushSentAt = nil
            if let caused = try notifying(stored) {
                var hasAudience = !caused.onlyWithAudience || caused.notification.target.holdsTokens
                if !hasAudience {
                    hasAudience = try await self.reachesAnyone(
                        caused.notification.target, appID: stored.appID, connection)
                }
                if hasAudience {
                    // The event, its notification and the notification's job in one statement.
                    stored.notificationID = caused.notification.id
                    let event = stored
                    try await self.insertNotification(
                        caused.notification, spec: try self.sealSpec(caused.notification), runAt: caused.runAt,
                        lease: caused.lease, connection, alongside: { Self.insertEvent(event, &$0) })
                    return (stored, true)
                }
            }
            var values: [SQLBind] = []
            try await connection.run(Self.insertEvent(stored, &values), values)
            return (stored, true)
        }
    }

    public func event(appID: String, producer: String, id: String) async throws -> SourceEvent? {
        try await read { connection in
            if let event = try await self.fetchEvent(
                connection, where: "e.app_id = $1 AND e.producer = $2 AND e.record_id = $3", [appID, producer, id])
            {
                return event
            }
            return try await self.fetchEvent(
                connection, where: "e.app_id = $1 AND e.producer = $2 AND e.id = $3", [appID, producer, id])
        }
    }

    /// The statement storing an event (its notification id included), its values appended to
    /// `values` and numbered after those before them.
    private static func insertEvent(_ event: SourceEvent, _ values: inout [SQLBind]) -> String {
        let first = values.count + 1
        values += [
            event.id, event.appID, event.producer, event.externalID, event.recordID, event.sourceDeviceID,
            String(decoding: JSONValue.array(event.owners.map(JSONValue.string)).serialized(), as: UTF8.self),
            event.type, event.summary, event.thumbnail, event.status, event.occurredAt?.timeIntervalSince1970,
            event.createdAt.timeIntervalSince1970, event.notificationID,
        ]
        return """
            INSERT INTO events (id, app_id, producer, external_id, record_id, source_device_id, owners, type,
                summary, thumbnail, status, occurred_at, created_at, notification_id)
            VALUES (\(placeholders(from: first, count: 6)), $\(first + 6)::jsonb, \(placeholders(from: first + 7, count: 7)))
            """
    }

    // MARK: Rows

    private func fetchEvent(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind]
    ) async throws -> SourceEvent? {
        // Whether a push went out is the notification's to say; an event whose notification was
        // cleaned up keeps the copy clean-up left in push_sent_at.
        let rows = try await connection.rows(
            """
            SELECT e.id, e.app_id, e.producer, e.external_id, e.record_id, e.source_device_id, e.owners::text AS owners,
                e.type, e.summary, e.thumbnail, e.status, e.occurred_at, e.notification_id, e.created_at,
                coalesce(e.push_sent_at, n.first_sent_at) AS sent_at
            FROM events e LEFT JOIN notifications n ON n.id = e.notification_id
            WHERE \(condition)
            """, values)
        guard let row = rows.first else { return nil }
        guard case .array(let owners) = try JSONValue.parse(Array(try row.get("owners", as: String.self).utf8)) else {
            throw HeraldError.internal("Stored event has unreadable owners.")
        }
        return SourceEvent(
            id: try row.get("id"), appID: try row.get("app_id"), producer: try row.get("producer"),
            externalID: try row.get("external_id"), recordID: try row.get("record_id"),
            sourceDeviceID: try row.get("source_device_id"),
            owners: owners.compactMap { if case .string(let user) = $0 { user } else { nil } },
            type: try row.get("type"), summary: try row.get("summary"), thumbnail: try row.get("thumbnail"),
            status: try row.get("status"), occurredAt: try row.date("occurred_at"),
            notificationID: try row.get("notification_id"), pushSentAt: try row.date("sent_at"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0))
    }

    private static func decodeSourceDevice(_ row: PostgresRandomAccessRow) throws -> SourceDevice {
        SourceDevice(
            id: try row.get("id"), appID: try row.get("app_id"), alias: try row.get("alias"),
            name: try row.get("name"), createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            updatedAt: try row.date("updated_at") ?? Date(timeIntervalSince1970: 0))
    }

    private static func decodeOwnership(_ row: PostgresRandomAccessRow) throws -> Ownership {
        guard let status = Ownership.Status(rawValue: try row.get("status")) else {
            throw HeraldError.internal("Stored ownership has an unknown status.")
        }
        return Ownership(
            appID: try row.get("app_id"), deviceID: try row.get("device_id"), userID: try row.get("user_id"),
            status: status, createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            updatedAt: try row.date("updated_at") ?? Date(timeIntervalSince1970: 0))
    }
}
