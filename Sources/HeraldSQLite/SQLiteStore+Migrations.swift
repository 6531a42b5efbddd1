import GRDB

extension SQLiteStore {
    /// The versioned schema. Migrations are append-only: a released migration never changes, a
    /// new version is a new `registerMigration` below the others.
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1_registry") { db in
            try db.execute(
                sql: """
                    CREATE TABLE app_keys (
                        app_id TEXT PRIMARY KEY NOT NULL,
                        keys_sealed BLOB NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE installations (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL,
                        user_id TEXT,
                        device_id TEXT,
                        platform TEXT NOT NULL,
                        service TEXT NOT NULL,
                        environment TEXT NOT NULL,
                        token_index BLOB NOT NULL,
                        token_sealed BLOB NOT NULL,
                        channels TEXT NOT NULL DEFAULT '[]',
                        locale TEXT,
                        timezone TEXT,
                        badge INTEGER NOT NULL DEFAULT 0,
                        app_version TEXT,
                        os_version TEXT,
                        device_model TEXT,
                        bundle_id TEXT,
                        attributes TEXT NOT NULL DEFAULT '{}',
                        sns_endpoint_arn TEXT,
                        valid INTEGER NOT NULL DEFAULT 1,
                        failure_count INTEGER NOT NULL DEFAULT 0,
                        last_failure_at REAL,
                        last_failure_reason TEXT,
                        last_delivered_at REAL,
                        last_seen_at REAL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        invalidated_at REAL
                    );
                    CREATE UNIQUE INDEX installations_token ON installations (app_id, service, token_index);
                    CREATE UNIQUE INDEX installations_device ON installations (app_id, device_id, service)
                        WHERE device_id IS NOT NULL;
                    CREATE INDEX installations_user ON installations (app_id, user_id, id);
                    CREATE TABLE installation_channels (
                        app_id TEXT NOT NULL,
                        channel TEXT NOT NULL,
                        installation_id TEXT NOT NULL REFERENCES installations (id) ON DELETE CASCADE,
                        PRIMARY KEY (app_id, channel, installation_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX installation_channels_installation ON installation_channels (installation_id);
                    """)
        }
        return migrator
    }
}
