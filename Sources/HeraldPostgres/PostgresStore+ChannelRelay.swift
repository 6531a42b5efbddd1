import Crypto
import Foundation
import HeraldCore
import Logging
import PostgresNIO
import Synchronization

// The direct channels of several nodes: holds in a table, messages by NOTIFY on a channel per node.
extension PostgresStore: ChannelRelay {
    public func attachChannel(installationID: String, node: String, until: Date) async throws {
        try await read { connection in
            try await connection.run(
                """
                INSERT INTO channel_holders (installation_id, node, until) VALUES ($1, $2, $3)
                ON CONFLICT (installation_id) DO UPDATE SET node = excluded.node, until = excluded.until
                """, [installationID, node, until.timeIntervalSince1970])
        }
    }

    public func detachChannel(installationID: String, node: String) async throws {
        try await read { connection in
            try await connection.run(
                "DELETE FROM channel_holders WHERE installation_id = $1 AND node = $2", [installationID, node])
        }
    }

    public func renewChannels(node: String, until: Date) async throws {
        try await read { connection in
            try await connection.run(
                "UPDATE channel_holders SET until = $2 WHERE node = $1", [node, until.timeIntervalSince1970])
        }
    }

    public func channelHolders(of installationIDs: [String], now: Date) async throws -> [String: String] {
        guard !installationIDs.isEmpty else { return [:] }
        let rows = try await read { connection in
            try await connection.rows(
                "SELECT installation_id, node FROM channel_holders WHERE installation_id = ANY($1) AND until > $2",
                [installationIDs, now.timeIntervalSince1970])
        }
        var holders: [String: String] = [:]
        for row in rows { holders[try row.get("installation_id")] = try row.get("node") }
        return holders
    }

    public func anyChannelHeld(now: Date) async throws -> Bool {
        try await read { connection in
            try await connection.rows(
                "SELECT 1 FROM channel_holders WHERE until > $1 LIMIT 1", [now.timeIntervalSince1970])
        }.isEmpty == false
    }

    public func post(_ message: String, to node: String) async throws {
        try await read { connection in
            try await connection.run("SELECT pg_notify($1, $2)", [Self.relayChannel(node), message])
        }
    }

    public func listen(for node: String, into messages: AsyncStream<String>.Continuation) async {
        // One LISTEN connection for as long as the caller listens.
        await Self.listen(
            on: Self.relayChannel(node), client: client, poolStarted: poolStarted, logger: logger, clock: clock,
            name: "Channel relay listener",
            received: { messages.yield($0) })
        messages.finish()
    }

    /// A node's NOTIFY channel: a fixed-length name (identifiers stop at 63 bytes) from its name's hash.
    static func relayChannel(_ node: String) -> String {
        "herald_node_" + SHA256.hash(data: Data(node.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
