import Foundation
import HeraldCore
import PostgresNIO

// Rate-limit buckets and provider pauses, shared by every node on the database.
extension PostgresStore: ClusterState {
    public func acquireToken(
        bucket key: String, capacity: Int, per interval: TimeInterval, now: Date
    ) async throws -> TokenBucketLimiter.Decision {
        try await transaction { connection in
            // The bucket's row is locked until commit: nodes spending from it take turns.
            try await connection.run(
                "INSERT INTO rate_buckets (bucket, full_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                [key, -Double.greatestFiniteMagnitude])
            let stored = try await connection.rows(
                "SELECT full_at FROM rate_buckets WHERE bucket = $1 FOR UPDATE", [key]
            ).first.map { try $0.get("full_at", as: Double.self) }
            let fullAt = stored.flatMap { $0 == -Double.greatestFiniteMagnitude ? nil : $0 }
            let (decision, full) = TokenBucketLimiter.acquire(
                fullAt: fullAt.map(Date.init(timeIntervalSince1970:)), capacity: capacity, per: interval, now: now)
            if let full {
                try await connection.run(
                    "UPDATE rate_buckets SET full_at = $2 WHERE bucket = $1", [key, full.timeIntervalSince1970])
            } else if fullAt == nil {
                try await connection.run("DELETE FROM rate_buckets WHERE bucket = $1", [key])
            }
            return decision
        }
    }

    public func pauseProvider(appID: String, service: PushService, scope: String, until: Date) async throws {
        try await read { connection in
            try await connection.run(
                """
                INSERT INTO provider_pauses (app_id, service, scope, until) VALUES ($1, $2, $3, $4)
                ON CONFLICT (app_id, service, scope)
                DO UPDATE SET until = greatest(provider_pauses.until, excluded.until)
                """, [appID, service.rawValue, scope, until.timeIntervalSince1970])
        }
    }

    public func providerPauses(now: Date) async throws -> [ProviderPause] {
        try await read { connection in
            try await connection.rows(
                "SELECT app_id, service, scope, until FROM provider_pauses WHERE until > $1",
                [now.timeIntervalSince1970])
        }.compactMap { row in
            guard let service = PushService(rawValue: try row.get("service")) else { return nil }
            return ProviderPause(
                appID: try row.get("app_id"), service: service, scope: try row.get("scope"),
                until: try row.date("until") ?? Date(timeIntervalSince1970: 0))
        }
    }
}
