import Foundation
import GRDB
import HeraldCore

// Rate-limit buckets and provider pauses, durable: one node, but they survive a restart.
extension SQLiteStore: ClusterState {
    public func acquireToken(
        bucket key: String, capacity: Int, per interval: TimeInterval, now: Date
    ) async throws -> TokenBucketLimiter.Decision {
        try await write { db in
            let stored = try Double.fetchOne(
                db, sql: "SELECT full_at FROM rate_buckets WHERE bucket = ?", arguments: [key])
            let (decision, full) = TokenBucketLimiter.acquire(
                fullAt: stored.map(Date.init(timeIntervalSince1970:)), capacity: capacity, per: interval, now: now)
            if let full {
                try db.execute(
                    sql: """
                        INSERT INTO rate_buckets (bucket, full_at) VALUES (?, ?)
                        ON CONFLICT (bucket) DO UPDATE SET full_at = excluded.full_at
                        """,
                    arguments: [key, full.timeIntervalSince1970])
            }
            return decision
        }
    }

    public func pauseProvider(appID: String, service: PushService, scope: String, until: Date) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO provider_pauses (app_id, service, scope, until) VALUES (?, ?, ?, ?)
                    ON CONFLICT (app_id, service, scope) DO UPDATE SET until = max(until, excluded.until)
                    """,
                arguments: [appID, service.rawValue, scope, until.timeIntervalSince1970])
        }
    }

    public func providerPauses(now: Date) async throws -> [ProviderPause] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT app_id, service, scope, until FROM provider_pauses WHERE until > ?",
                arguments: [now.timeIntervalSince1970]
            ).compactMap { row in
                guard let service = PushService(rawValue: row["service"]) else { return nil }
                return ProviderPause(
                    appID: row["app_id"], service: service, scope: row["scope"],
                    until: Date(timeIntervalSince1970: row["until"]))
            }
        }
    }
}
