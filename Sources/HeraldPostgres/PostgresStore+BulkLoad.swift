import HeraldCore

extension PostgresStore: BulkLoading {
    /// Vacuums and analyzes what an import wrote: the visibility map and hint bits are set now (not
    /// by the first broadcast's reads, which would write every page again), and the planner knows
    /// the tables' new sizes.
    public func finishBulkLoad() async throws {
        try await read(unbounded: true) { connection in
            try await connection.run("VACUUM (ANALYZE) installations, installation_channels, preferences")
        }
    }
}
