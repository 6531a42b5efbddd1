import Foundation
import HeraldCore
import NIOCore
import PostgresNIO

extension PostgresStore {
    /// The columns an installation is read from, optionally qualified by a table alias.
    static func installationColumns(_ alias: String? = nil) -> String {
        let prefix = alias.map { "\($0)." } ?? ""
        return Self.columnNames.map {
            switch $0 {
            case "channels", "attributes": "\(prefix)\($0)::text AS \($0)"
            case "last_delivered_at": "\(lastDelivered(alias)) AS last_delivered_at"
            default: prefix + $0
            }
        }
        .joined(separator: ", ")
    }

    /// An installation's `last_delivered_at`: the later of its column (what its writes and an import
    /// carry) and its row of `installation_deliveries` (what deliveries write), optionally over a
    /// table alias.
    static func lastDelivered(_ alias: String? = nil) -> String {
        let prefix = alias.map { "\($0)." } ?? "installations."
        return """
            greatest(\(prefix)last_delivered_at, (SELECT delivered.delivered_at FROM installation_deliveries delivered \
            WHERE delivered.installation_id = \(prefix)id))
            """
    }

    private static let columnNames = [
        "id", "app_id", "user_id", "device_id", "platform", "service", "environment", "token_index", "token_sealed",
        "channels", "locale", "timezone", "badge", "app_version", "os_version", "device_model", "bundle_id",
        "attributes", "sns_endpoint_arn", "valid", "failure_count", "last_failure_at", "last_failure_reason",
        "last_delivered_at", "last_seen_at", "created_at", "updated_at", "invalidated_at", "delete_when_invalid",
    ]

    /// Installations matching a condition (which may end with ORDER BY / LIMIT / FOR UPDATE).
    func fetchInstallations(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind]
    ) async throws -> [Installation] {
        try await connection.rows(
            "SELECT \(Self.installationColumns()) FROM installations WHERE \(condition)", values
        ).map { try self.decodeInstallation($0) }
    }

    func fetchOne(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind]
    ) async throws -> Installation? {
        try await fetchInstallations(connection, where: condition, values).first
    }

    func delete(_ connection: PostgresConnection, id: String) async throws {
        try await connection.run("DELETE FROM installations WHERE id = $1", [id])
    }

    /// The columns `write` sets, in order (the id comes last).
    static let writtenColumns = columnValues(
        Installation(
            id: "", appID: "", userID: nil, deviceID: nil, platform: .ios, service: .apns, environment: .production,
            token: .device(""), channels: [], locale: nil, timezone: nil, badge: 0, appVersion: nil, osVersion: nil,
            deviceModel: nil, bundleID: nil, attributes: [:], createdAt: Date(), updatedAt: Date()),
        tokenIndex: [], sealed: []
    ).map(\.0)

    /// `$n`, cast to jsonb for the JSON columns.
    static func placeholder(_ index: Int, _ column: String) -> String {
        column == "channels" || column == "attributes" ? "$\(index)::jsonb" : "$\(index)"
    }

    /// Every written column of an installation with its value.
    static func columnValues(
        _ installation: Installation, tokenIndex: [UInt8], sealed sealedToken: [UInt8]
    ) -> [(String, SQLBind)] {
        let channels = String(
            decoding: JSONValue.array(installation.channels.map(JSONValue.string)).serialized(), as: UTF8.self)
        let attributes = String(decoding: JSONValue.object(installation.attributes).serialized(), as: UTF8.self)
        return [
            ("app_id", installation.appID),
            ("user_id", installation.userID),
            ("device_id", installation.deviceID),
            ("platform", installation.platform.rawValue),
            ("service", installation.service.rawValue),
            ("environment", installation.environment.rawValue),
            ("token_index", Data(tokenIndex)),
            ("token_sealed", Data(sealedToken)),
            ("channels", channels),
            ("locale", installation.locale),
            ("timezone", installation.timezone),
            ("badge", installation.badge),
            ("app_version", installation.appVersion),
            ("os_version", installation.osVersion),
            ("device_model", installation.deviceModel),
            ("bundle_id", installation.bundleID),
            ("attributes", attributes),
            ("sns_endpoint_arn", installation.snsEndpointARN),
            ("valid", installation.valid),
            ("failure_count", installation.failureCount),
            ("last_failure_at", installation.lastFailureAt?.timeIntervalSince1970),
            ("last_failure_reason", installation.lastFailureReason),
            ("last_delivered_at", installation.lastDeliveredAt?.timeIntervalSince1970),
            ("last_seen_at", installation.lastSeenAt?.timeIntervalSince1970),
            ("created_at", installation.createdAt.timeIntervalSince1970),
            ("updated_at", installation.updatedAt.timeIntervalSince1970),
            ("invalidated_at", installation.invalidatedAt?.timeIntervalSince1970),
            ("delete_when_invalid", installation.deleteWhenInvalid),
        ]
    }

    func write(
        _ connection: PostgresConnection, _ installation: Installation, tokenIndex: [UInt8], sealedToken: [UInt8],
        insert: Bool
    ) async throws {
        let columns = Self.columnValues(installation, tokenIndex: tokenIndex, sealed: sealedToken)
        let values = columns.map(\.1) + [installation.id]
        if insert {
            let names = columns.map(\.0).joined(separator: ", ")
            let marks = columns.enumerated().map { Self.placeholder($0.offset + 1, $0.element.0) }
                .joined(separator: ", ")
            try await connection.run(
                "INSERT INTO installations (\(names), id) VALUES (\(marks), $\(columns.count + 1))", values)
        } else {
            let assignments = columns.enumerated().map {
                "\($0.element.0) = \(Self.placeholder($0.offset + 1, $0.element.0))"
            }
            .joined(separator: ", ")
            try await connection.run("UPDATE installations SET \(assignments) WHERE id = $\(columns.count + 1)", values)
            try await connection.run("DELETE FROM installation_channels WHERE installation_id = $1", [installation.id])
        }
        if !installation.channels.isEmpty {
            try await connection.run(
                """
                INSERT INTO installation_channels (app_id, channel, installation_id)
                SELECT $1, channel, $2 FROM unnest($3::text[]) AS channel ON CONFLICT DO NOTHING
                """, [installation.appID, installation.id, installation.channels])
        }
    }

    /// Inserts new installations (and their channel rows) in multi-row statements.
    func insert(_ rows: [(Installation, SealedToken)], _ connection: PostgresConnection) async throws {
        // PostgreSQL binds at most 65,535 values in one statement.
        let perStatement = 60_000 / (Self.writtenColumns.count + 1)
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            var values: [SQLBind] = []
            var tuples: [String] = []
            for (installation, token) in rows[start..<min(rows.count, start + perStatement)] {
                let columns = Self.columnValues(installation, tokenIndex: token.index, sealed: token.sealed)
                let first = values.count + 1
                let marks = columns.enumerated().map { Self.placeholder(first + $0.offset, $0.element.0) }
                tuples.append("(\(marks.joined(separator: ", ")), $\(first + columns.count))")
                values += columns.map(\.1) + [installation.id]
            }
            let names = Self.writtenColumns.joined(separator: ", ")
            try await connection.run(
                "INSERT INTO installations (\(names), id) VALUES \(tuples.joined(separator: ", "))", values)
        }
        let channels = rows.flatMap { installation, _ in installation.channels.map { (installation, $0) } }
        if !channels.isEmpty {
            try await connection.run(
                """
                INSERT INTO installation_channels (app_id, channel, installation_id)
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING
                """, [channels.map(\.0.appID), channels.map(\.1), channels.map(\.0.id)])
        }
    }

    /// Installations with their stored token index and sealed token.
    func fetchInstallationsWithIndex(
        _ connection: PostgresConnection, where condition: String, _ values: [SQLBind]
    ) async throws -> [(Installation, SealedToken)] {
        try await connection.rows(
            "SELECT \(Self.installationColumns()) FROM installations WHERE \(condition)", values
        ).map { row in
            (
                try self.decodeInstallation(row),
                SealedToken(index: try row.bytes("token_index"), sealed: try row.bytes("token_sealed"))
            )
        }
    }

    func decodeInstallation(_ row: PostgresRandomAccessRow, openToken: Bool = true) throws -> Installation {
        func enumeration<Value: RawRepresentable>(_ column: String) throws -> Value where Value.RawValue == String {
            guard let value = Value(rawValue: try row.get(column, as: String.self)) else {
                throw HeraldError.internal("Stored installation has an unknown \(column).")
            }
            return value
        }
        let service: PushService = try enumeration("service")
        let token =
            openToken ? try cipher.openToken(try row.bytes("token_sealed"), service: service) : PushToken.device("")
        let channelsText = try row.get("channels", as: String.self)
        let attributesText = try row.get("attributes", as: String.self)
        let channels = channelsText == "[]" ? JSONValue.array([]) : try JSONValue.parse(Array(channelsText.utf8))
        let attributes =
            attributesText == "{}" ? JSONValue.object([:]) : try JSONValue.parse(Array(attributesText.utf8))
        guard case .array(let channelValues) = channels, case .object(let attributeMembers) = attributes else {
            throw HeraldError.internal("Stored installation has unreadable channels or attributes.")
        }
        return Installation(
            id: try row.get("id"), appID: try row.get("app_id"), userID: try row.get("user_id"),
            deviceID: try row.get("device_id"), platform: try enumeration("platform"), service: service,
            environment: try enumeration("environment"), token: token,
            channels: channelValues.compactMap { if case .string(let name) = $0 { name } else { nil } },
            locale: try row.get("locale"), timezone: try row.get("timezone"), badge: try row.get("badge"),
            appVersion: try row.get("app_version"), osVersion: try row.get("os_version"),
            deviceModel: try row.get("device_model"), bundleID: try row.get("bundle_id"), attributes: attributeMembers,
            snsEndpointARN: try row.get("sns_endpoint_arn"), valid: try row.get("valid"),
            failureCount: try row.get("failure_count"), lastFailureAt: try row.date("last_failure_at"),
            lastFailureReason: try row.get("last_failure_reason"), lastDeliveredAt: try row.date("last_delivered_at"),
            lastSeenAt: try row.date("last_seen_at"),
            createdAt: try row.date("created_at") ?? Date(timeIntervalSince1970: 0),
            updatedAt: try row.date("updated_at") ?? Date(timeIntervalSince1970: 0),
            invalidatedAt: try row.date("invalidated_at"), deleteWhenInvalid: try row.get("delete_when_invalid"))
    }
}
