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
        migrator.registerMigration("v2_dispatch") { db in
            try db.execute(
                sql: """
                    -- Fan-out pages walk an app's installations in id order (keyset): without this
                    -- index SQLite picks installations_user for app_id and sorts every page.
                    CREATE INDEX installations_app ON installations (app_id, id);
                    CREATE TABLE notifications (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL,
                        status TEXT NOT NULL,
                        spec BLOB NOT NULL,
                        spec_sealed INTEGER NOT NULL DEFAULT 0,
                        idempotency_key TEXT,
                        not_before REAL,
                        expires_at REAL,
                        targeted INTEGER NOT NULL DEFAULT 0,
                        sent INTEGER NOT NULL DEFAULT 0,
                        failed INTEGER NOT NULL DEFAULT 0,
                        invalid INTEGER NOT NULL DEFAULT 0,
                        skipped_preferences INTEGER NOT NULL DEFAULT 0,
                        skipped_expired INTEGER NOT NULL DEFAULT 0,
                        rate_limited INTEGER NOT NULL DEFAULT 0,
                        cursor TEXT,
                        created_at REAL NOT NULL,
                        started_at REAL,
                        completed_at REAL
                    );
                    CREATE INDEX notifications_app ON notifications (app_id, id);
                    CREATE INDEX notifications_app_status ON notifications (app_id, status, id);
                    CREATE UNIQUE INDEX notifications_idempotency ON notifications (app_id, idempotency_key)
                        WHERE idempotency_key IS NOT NULL;
                    CREATE TABLE jobs (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        kind TEXT NOT NULL,
                        reference TEXT NOT NULL,
                        run_at REAL NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        locked_by TEXT,
                        locked_until REAL,
                        last_error TEXT,
                        UNIQUE (kind, reference)
                    );
                    CREATE INDEX jobs_due ON jobs (run_at);
                    CREATE TABLE pending_deliveries (
                        notification_id TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
                        recipient TEXT NOT NULL,
                        run_at REAL NOT NULL,
                        attempts INTEGER NOT NULL,
                        reason TEXT NOT NULL,
                        PRIMARY KEY (notification_id, recipient)
                    ) WITHOUT ROWID;
                    CREATE INDEX pending_deliveries_due ON pending_deliveries (notification_id, run_at);
                    CREATE TABLE deliveries (
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        notification_id TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
                        installation_id TEXT,
                        token_suffix TEXT NOT NULL,
                        service TEXT NOT NULL,
                        outcome TEXT NOT NULL,
                        provider_id TEXT,
                        reason TEXT,
                        attempts INTEGER NOT NULL,
                        at REAL NOT NULL
                    );
                    CREATE INDEX deliveries_notification ON deliveries (notification_id, outcome, sequence);
                    CREATE TABLE preferences (
                        installation_id TEXT PRIMARY KEY NOT NULL REFERENCES installations (id) ON DELETE CASCADE,
                        body TEXT NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v3_events") { db in
            try db.execute(
                sql: """
                    CREATE TABLE source_devices (
                        app_id TEXT NOT NULL,
                        id TEXT NOT NULL,
                        alias TEXT,
                        name TEXT,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (app_id, id)
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX source_devices_alias ON source_devices (app_id, alias) WHERE alias IS NOT NULL;
                    CREATE TABLE source_device_owners (
                        app_id TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        status TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (app_id, device_id, user_id),
                        FOREIGN KEY (app_id, device_id) REFERENCES source_devices (app_id, id) ON DELETE CASCADE
                    ) WITHOUT ROWID;
                    -- No foreign key to notifications: clean-up deletes old notifications but keeps the
                    -- event, copying the notification's first_sent_at into push_sent_at first.
                    CREATE TABLE events (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL,
                        external_id TEXT NOT NULL,
                        source_device_id TEXT NOT NULL,
                        owners TEXT NOT NULL DEFAULT '[]',
                        type TEXT NOT NULL,
                        summary TEXT NOT NULL,
                        thumbnail TEXT,
                        status TEXT NOT NULL,
                        occurred_at REAL,
                        notification_id TEXT,
                        push_sent_at REAL,
                        created_at REAL NOT NULL
                    );
                    CREATE UNIQUE INDEX events_external ON events (app_id, external_id);
                    CREATE INDEX events_notification ON events (notification_id) WHERE notification_id IS NOT NULL;
                    -- When a device first accepted the notification (set by the page commit).
                    ALTER TABLE notifications ADD COLUMN first_sent_at REAL;
                    """)
        }
        migrator.registerMigration("v4_lifecycle") { db in
            try db.execute(
                sql: """
                    -- The producer's own id of its event record (AOVIS: CloudEvent.id), beside the
                    -- event id it deduplicates on; the deep link carries it.
                    ALTER TABLE events ADD COLUMN record_id TEXT;
                    CREATE UNIQUE INDEX events_record ON events (app_id, record_id) WHERE record_id IS NOT NULL;
                    -- Installations that go as soon as a provider says their token is dead (ArgusAI's
                    -- rule) instead of staying with valid = 0.
                    ALTER TABLE installations ADD COLUMN delete_when_invalid INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        migrator.registerMigration("v5_event_producers") { db in
            try db.execute(
                sql: """
                    -- Producers' ids are unique per producer (dialect), not per app: an AOVIS eventId
                    -- must not find an ArgusAI event_id. Events before this came from AOVIS
                    -- (status classified) or ArgusAI (status detected).
                    ALTER TABLE events ADD COLUMN producer TEXT NOT NULL DEFAULT '';
                    UPDATE events SET producer = CASE status WHEN 'detected' THEN 'argusai' ELSE 'aovis' END;
                    DROP INDEX events_external;
                    DROP INDEX events_record;
                    CREATE UNIQUE INDEX events_external ON events (app_id, producer, external_id);
                    CREATE UNIQUE INDEX events_record ON events (app_id, producer, record_id)
                        WHERE record_id IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v6_sns_api") { db in
            try db.execute(
                sql: """
                    -- The SNS-compatible API's own records; its endpoints are installations.
                    CREATE TABLE sns_platform_applications (
                        app_id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        platform TEXT NOT NULL,
                        attributes TEXT NOT NULL DEFAULT '{}',
                        created_at REAL NOT NULL,
                        PRIMARY KEY (app_id, name)
                    ) WITHOUT ROWID;
                    CREATE TABLE sns_topics (
                        app_id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        PRIMARY KEY (app_id, name)
                    ) WITHOUT ROWID;
                    CREATE TABLE sns_subscriptions (
                        id TEXT PRIMARY KEY NOT NULL,
                        app_id TEXT NOT NULL,
                        topic TEXT NOT NULL,
                        installation_id TEXT NOT NULL REFERENCES installations (id) ON DELETE CASCADE,
                        created_at REAL NOT NULL,
                        FOREIGN KEY (app_id, topic) REFERENCES sns_topics (app_id, name) ON DELETE CASCADE
                    );
                    CREATE UNIQUE INDEX sns_subscriptions_member ON sns_subscriptions (app_id, topic, installation_id);
                    CREATE INDEX sns_subscriptions_installation ON sns_subscriptions (installation_id);
                    CREATE INDEX installations_sns_application
                        ON installations (app_id, json_extract(attributes, '$.sns_platform_application'))
                        WHERE json_extract(attributes, '$.sns_platform_application') IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v7_ha_relay") { db in
            try db.execute(
                sql: """
                    -- The Home Assistant push relay's per-token, per-UTC-day counters, keyed by the
                    -- token's keyed hash (never the token); a day is its UTC date (YYYY-MM-DD).
                    CREATE TABLE relay_usage (
                        app_id TEXT NOT NULL,
                        service TEXT NOT NULL,
                        token_index BLOB NOT NULL,
                        day TEXT NOT NULL,
                        successful INTEGER NOT NULL DEFAULT 0,
                        errors INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (app_id, service, token_index, day)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v8_direct_channel") { db in
            try db.execute(
                sql: """
                    -- A device connecting its direct channel wakes what waits for it.
                    CREATE INDEX pending_deliveries_recipient ON pending_deliveries (recipient)
                        WHERE reason = 'offline';
                    """)
        }
        migrator.registerMigration("v9_leancloud_users") { db in
            try db.execute(
                sql: """
                    -- LeanCloud's _User class, as much as installation queries need ($inQuery on owner).
                    CREATE TABLE lc_users (
                        app_id TEXT NOT NULL,
                        id TEXT NOT NULL,
                        fields TEXT NOT NULL DEFAULT '{}',
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (app_id, id)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v10_cluster_state") { db in
            try db.execute(
                sql: """
                    -- Shared rate-limit buckets (GCRA: when each bucket is full again) and
                    -- provider-wide pauses, durable and the same for every worker.
                    CREATE TABLE rate_buckets (
                        bucket TEXT PRIMARY KEY NOT NULL,
                        full_at REAL NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE provider_pauses (
                        app_id TEXT NOT NULL,
                        service TEXT NOT NULL,
                        until REAL NOT NULL,
                        PRIMARY KEY (app_id, service)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v11_opens") { db in
            try db.execute(
                sql: """
                    -- Which installation opened which notification (POST /v1/opens), once each; the
                    -- count sits on the notification. Opens go with their notification.
                    ALTER TABLE notifications ADD COLUMN opened INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE opens (
                        notification_id TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
                        installation_id TEXT NOT NULL,
                        opened_at REAL NOT NULL,
                        PRIMARY KEY (notification_id, installation_id)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v12_ledger_by_installation") { db in
            try db.execute(
                sql: """
                    -- One device's delivery history (the console), newest first.
                    CREATE INDEX deliveries_installation ON deliveries (installation_id, sequence)
                        WHERE installation_id IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v13_console_revocations") { db in
            try db.execute(
                sql: """
                    -- Console sessions signed out before they expire (a digest of the cookie), until
                    -- they would have expired.
                    CREATE TABLE console_revocations (
                        digest TEXT PRIMARY KEY NOT NULL,
                        expires_at REAL NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v14_notification_source") { db in
            try db.execute(
                sql: """
                    -- The surface that created a notification, where a dialect's listing of its pushes
                    -- (LeanCloud's _Notification) can select on it; read back from the unsealed specs
                    -- (a sealed one targets raw tokens, which no dialect listing shows).
                    ALTER TABLE notifications ADD COLUMN source TEXT;
                    UPDATE notifications SET source = json_extract(CAST(spec AS TEXT), '$.source')
                        WHERE spec_sealed = 0 AND json_valid(CAST(spec AS TEXT));
                    CREATE INDEX notifications_app_source ON notifications (app_id, source, id)
                        WHERE source IS NOT NULL;
                    """)
        }
        migrator.registerMigration("v15_push_endpoints") { db in
            try db.execute(
                sql: """
                    -- UnifiedPush / RFC 8030 endpoints, keyed by the SHA-256 of their URL's secret (the
                    -- secret itself is never stored); kept once revoked, so their URL answers 410.
                    CREATE TABLE push_endpoints (
                        digest TEXT PRIMARY KEY NOT NULL,
                        id TEXT NOT NULL UNIQUE,
                        app_id TEXT NOT NULL,
                        installation_id TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        revoked_at REAL
                    ) WITHOUT ROWID;
                    CREATE INDEX push_endpoints_installation ON push_endpoints (app_id, installation_id, created_at);
                    """)
        }
        migrator.registerMigration("v16_push_endpoint_topics") { db in
            try db.execute(
                sql: """
                    -- Each endpoint's latest message per RFC 8030 Topic: a new one cancels it if undelivered.
                    CREATE TABLE push_endpoint_topics (
                        endpoint_id TEXT NOT NULL,
                        topic TEXT NOT NULL,
                        notification_id TEXT NOT NULL,
                        PRIMARY KEY (endpoint_id, topic)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v17_provider_pause_scope") { db in
            // A pause may hold back one push service of a provider (a Web Push origin). Pauses last
            // seconds: the running ones are dropped rather than carried over.
            try db.execute(
                sql: """
                    DROP TABLE provider_pauses;
                    CREATE TABLE provider_pauses (
                        app_id TEXT NOT NULL,
                        service TEXT NOT NULL,
                        scope TEXT NOT NULL,
                        until REAL NOT NULL,
                        PRIMARY KEY (app_id, service, scope)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v18_fanout_ranges") { db in
            // The ranges a large notification's target is cut into, each worked as a job of its
            // own (kind `range`, reference `<notification id>#<idx>`).
            try db.execute(
                sql: """
                    CREATE TABLE fanout_ranges (
                        notification_id TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
                        idx INTEGER NOT NULL,
                        after_key TEXT,
                        through_key TEXT,
                        cursor TEXT,
                        PRIMARY KEY (notification_id, idx)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v19_ha_relay_outcomes") { db in
            // The Home Assistant relay: what the relay accepted (the daily maximum) and refused apart
            // from what the provider then took or refused; the claims that pace retries of invalidated
            // tokens; the installations the relay registered (they follow its APNs environment).
            try db.execute(
                sql: """
                    ALTER TABLE relay_usage RENAME COLUMN successful TO accepted;
                    ALTER TABLE relay_usage RENAME COLUMN errors TO refused;
                    ALTER TABLE relay_usage ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE relay_usage ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE relay_retries (
                        app_id TEXT NOT NULL,
                        service TEXT NOT NULL,
                        token_index BLOB NOT NULL,
                        next_at REAL NOT NULL,
                        PRIMARY KEY (app_id, service, token_index)
                    ) WITHOUT ROWID;
                    CREATE TABLE relay_adoptions (
                        installation_id TEXT PRIMARY KEY NOT NULL REFERENCES installations (id) ON DELETE CASCADE,
                        app_id TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX relay_adoptions_app ON relay_adoptions (app_id);
                    """)
        }
        migrator.registerMigration("v20_webhooks") { db in
            // Webhook endpoints (their secrets sealed with the master key) and the outbox: one row per
            // event and subscribed endpoint, written by the transaction that commits the event's fact.
            try db.execute(
                sql: """
                    CREATE TABLE webhook_endpoints (
                        app_id TEXT NOT NULL,
                        id TEXT NOT NULL,
                        url TEXT NOT NULL,
                        events TEXT NOT NULL,
                        description TEXT,
                        secrets_sealed BLOB NOT NULL,
                        configured INTEGER NOT NULL DEFAULT 0,
                        disabled_reason TEXT,
                        failing_since REAL,
                        last_success_at REAL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (app_id, id)
                    ) WITHOUT ROWID;
                    CREATE TABLE webhook_deliveries (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id TEXT NOT NULL,
                        endpoint_id TEXT NOT NULL,
                        event_id TEXT NOT NULL,
                        event_type TEXT NOT NULL,
                        body BLOB NOT NULL,
                        created_at REAL NOT NULL,
                        state TEXT NOT NULL DEFAULT 'pending',
                        attempts INTEGER NOT NULL DEFAULT 0,
                        next_attempt_at REAL,
                        locked_by TEXT,
                        locked_until REAL,
                        last_attempt_at REAL,
                        last_status INTEGER,
                        last_error TEXT,
                        FOREIGN KEY (app_id, endpoint_id) REFERENCES webhook_endpoints (app_id, id) ON DELETE CASCADE
                    );
                    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
                    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (app_id, endpoint_id, id);
                    """)
        }
        migrator.registerMigration("v21_live_activities") { db in
            // Live Activities (docs/live-activities.md): each activity with its revision counter and
            // high-priority budget; each installation's part in it (its activity token sealed like a
            // push token, the last revision claimed and how long the claim holds); push-to-start
            // tokens per attributes type; broadcast channels.
            try db.execute(
                sql: """
                    CREATE TABLE live_activities (
                        app_id TEXT NOT NULL,
                        id TEXT NOT NULL,
                        attributes_type TEXT NOT NULL,
                        revision INTEGER NOT NULL DEFAULT 1,
                        ended_at REAL,
                        dismissal_at REAL,
                        high_window_start REAL,
                        high_count INTEGER NOT NULL DEFAULT 0,
                        last_timestamp INTEGER NOT NULL DEFAULT 0,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (app_id, id)
                    ) WITHOUT ROWID;
                    CREATE INDEX live_activities_dismissal ON live_activities (dismissal_at) WHERE ended_at IS NOT NULL;
                    CREATE TABLE live_activity_members (
                        app_id TEXT NOT NULL,
                        activity_id TEXT NOT NULL,
                        installation_id TEXT NOT NULL REFERENCES installations (id) ON DELETE CASCADE,
                        token_sealed BLOB,
                        token_suffix TEXT,
                        sent_revision INTEGER NOT NULL DEFAULT 0,
                        sending_until REAL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (app_id, activity_id, installation_id),
                        FOREIGN KEY (app_id, activity_id) REFERENCES live_activities (app_id, id) ON DELETE CASCADE
                    ) WITHOUT ROWID;
                    CREATE INDEX live_activity_members_installation ON live_activity_members (installation_id);
                    CREATE TABLE push_to_start_tokens (
                        installation_id TEXT NOT NULL REFERENCES installations (id) ON DELETE CASCADE,
                        attributes_type TEXT NOT NULL,
                        token_sealed BLOB NOT NULL,
                        token_suffix TEXT NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (installation_id, attributes_type)
                    ) WITHOUT ROWID;
                    CREATE TABLE live_activity_channels (
                        app_id TEXT NOT NULL,
                        id TEXT NOT NULL,
                        apns_channel_id TEXT NOT NULL,
                        storage_policy TEXT NOT NULL,
                        environment TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        PRIMARY KEY (app_id, id)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v22_locale_counts") { db in
            // Of a localized notification's sent deliveries, how many went in each language (a JSON object).
            try db.execute(sql: "ALTER TABLE notifications ADD COLUMN locale_counts TEXT")
        }
        migrator.registerMigration("v23_templates") { db in
            // Each app's named templates at their latest revision (docs/content.md, "Templates").
            try db.execute(
                sql: """
                    CREATE TABLE templates (
                        app_id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        revision INTEGER NOT NULL,
                        content TEXT NOT NULL,
                        configured INTEGER NOT NULL DEFAULT 0,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (app_id, name)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }
}
