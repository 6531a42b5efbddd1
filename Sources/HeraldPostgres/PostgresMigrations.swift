import Foundation
import HeraldCore
import PostgresNIO

/// The PostgreSQL schema, versioned. Append-only: a released migration never changes; a new version
/// is a new entry at the end of ``all``. Each runs in its own transaction under an advisory lock, so
/// nodes that start together migrate once.
///
/// Types: times are `double precision` seconds since 1970 (a `Date`'s full precision, as SQLite
/// keeps them), sealed values and token indexes `bytea`, free JSON `jsonb`.
enum PostgresMigrations {
    /// The lock every migrating node takes (an arbitrary constant: "herald" in ASCII).
    static let lockKey: Int64 = 0x6865_7261_6c64

    /// The migrations in order: an identifier and its SQL.
    static let all: [(id: String, sql: String)] = [
        ("v1_schema", v1Schema), ("v2_channel_relay", v2ChannelRelay), ("v3_installations_fillfactor", v3Fillfactor),
        ("v4_opens", v4Opens),
        ("v5_ledger_by_installation", v5LedgerByInstallation), ("v6_console_revocations", v6ConsoleRevocations),
        ("v7_notification_source", v7NotificationSource), ("v8_push_endpoints", v8PushEndpoints),
        ("v9_push_endpoint_topics", v9PushEndpointTopics), ("v10_provider_pause_scope", v10ProviderPauseScope),
        ("v11_fanout_ranges", v11FanoutRanges), ("v12_installation_deliveries", v12InstallationDeliveries),
        ("v13_ha_relay_outcomes", v13HomeAssistantRelayOutcomes), ("v14_webhooks", v14Webhooks),
        ("v15_live_activities", v15LiveActivities), ("v16_locale_counts", v16LocaleCounts),
        ("v17_templates", v17Templates),
    ]

    /// Each app's named templates at their latest revision, as SQLite's v23_templates keeps them.
    static let v17Templates = """
        CREATE TABLE templates (
            app_id TEXT NOT NULL COLLATE "C",
            name TEXT NOT NULL COLLATE "C",
            revision BIGINT NOT NULL,
            content TEXT NOT NULL,
            configured BOOLEAN NOT NULL DEFAULT FALSE,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, name)
        );
        """

    /// Of a localized notification's sent deliveries, how many went in each language.
    static let v16LocaleCounts = "ALTER TABLE notifications ADD COLUMN locale_counts JSONB"

    /// Live Activities, as SQLite's v21_live_activities keeps them: each activity with its revision
    /// counter and high-priority budget; each installation's part in it (its activity token sealed like
    /// a push token, the last revision claimed and until when the claim holds), going with the
    /// installation and with the activity; push-to-start tokens per attributes type, going with the
    /// installation; broadcast channels.
    static let v15LiveActivities = """
        CREATE TABLE live_activities (
            app_id TEXT NOT NULL COLLATE "C",
            id TEXT NOT NULL COLLATE "C",
            attributes_type TEXT NOT NULL,
            revision BIGINT NOT NULL DEFAULT 1,
            ended_at DOUBLE PRECISION,
            dismissal_at DOUBLE PRECISION,
            high_window_start DOUBLE PRECISION,
            high_count BIGINT NOT NULL DEFAULT 0,
            last_timestamp BIGINT NOT NULL DEFAULT 0,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, id)
        );
        CREATE INDEX live_activities_dismissal ON live_activities (dismissal_at) WHERE ended_at IS NOT NULL;
        CREATE TABLE live_activity_members (
            app_id TEXT NOT NULL COLLATE "C",
            activity_id TEXT NOT NULL COLLATE "C",
            installation_id TEXT NOT NULL COLLATE "C" REFERENCES installations (id) ON DELETE CASCADE,
            token_sealed BYTEA,
            token_suffix TEXT,
            sent_revision BIGINT NOT NULL DEFAULT 0,
            sending_until DOUBLE PRECISION,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, activity_id, installation_id),
            FOREIGN KEY (app_id, activity_id) REFERENCES live_activities (app_id, id) ON DELETE CASCADE
        );
        CREATE INDEX live_activity_members_installation ON live_activity_members (installation_id);
        CREATE TABLE push_to_start_tokens (
            installation_id TEXT NOT NULL COLLATE "C" REFERENCES installations (id) ON DELETE CASCADE,
            attributes_type TEXT NOT NULL COLLATE "C",
            token_sealed BYTEA NOT NULL,
            token_suffix TEXT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (installation_id, attributes_type)
        );
        CREATE TABLE live_activity_channels (
            app_id TEXT NOT NULL COLLATE "C",
            id TEXT NOT NULL COLLATE "C",
            apns_channel_id TEXT NOT NULL,
            storage_policy TEXT NOT NULL,
            environment TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, id)
        );
        """

    /// Webhook endpoints (their secrets sealed with the master key: the JSON of their `[WebhookSecret]`;
    /// their event types the JSON array of names SQLite keeps) and the outbox: one row per event and
    /// subscribed endpoint, written by the transaction that commits the event's fact, going with its
    /// endpoint. Due rows are claimed in `next_attempt_at, id` order through a partial index of the pending.
    static let v14Webhooks = """
        CREATE TABLE webhook_endpoints (
            app_id TEXT NOT NULL COLLATE "C",
            id TEXT NOT NULL COLLATE "C",
            url TEXT NOT NULL,
            events TEXT NOT NULL,
            description TEXT,
            secrets_sealed BYTEA NOT NULL,
            configured BOOLEAN NOT NULL DEFAULT FALSE,
            disabled_reason TEXT,
            failing_since DOUBLE PRECISION,
            last_success_at DOUBLE PRECISION,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, id)
        );
        CREATE TABLE webhook_deliveries (
            id BIGSERIAL PRIMARY KEY,
            app_id TEXT NOT NULL COLLATE "C",
            endpoint_id TEXT NOT NULL COLLATE "C",
            event_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            body BYTEA NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending',
            attempts BIGINT NOT NULL DEFAULT 0,
            next_attempt_at DOUBLE PRECISION,
            locked_by TEXT,
            locked_until DOUBLE PRECISION,
            last_attempt_at DOUBLE PRECISION,
            last_status BIGINT,
            last_error TEXT,
            FOREIGN KEY (app_id, endpoint_id) REFERENCES webhook_endpoints (app_id, id) ON DELETE CASCADE
        );
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE state = 'pending';
        CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (app_id, endpoint_id, id);
        """

    /// The Home Assistant relay: what the relay accepted (the daily maximum) and refused apart from
    /// what the provider then took or refused; the claims that pace retries of invalidated tokens;
    /// the installations the relay registered (they follow its APNs environment), which go with their
    /// installation (a statement trigger, as `installation_deliveries`).
    static let v13HomeAssistantRelayOutcomes = """
        ALTER TABLE relay_usage RENAME COLUMN successful TO accepted;
        ALTER TABLE relay_usage RENAME COLUMN errors TO refused;
        ALTER TABLE relay_usage ADD COLUMN delivered BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE relay_usage ADD COLUMN failed BIGINT NOT NULL DEFAULT 0;
        CREATE TABLE relay_retries (
            app_id TEXT NOT NULL,
            service TEXT NOT NULL,
            token_index BYTEA NOT NULL,
            next_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, service, token_index)
        );
        CREATE TABLE relay_adoptions (
            installation_id TEXT PRIMARY KEY COLLATE "C",
            app_id TEXT NOT NULL COLLATE "C"
        );
        CREATE INDEX relay_adoptions_app ON relay_adoptions (app_id);
        CREATE FUNCTION herald_forget_relay_adoptions() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM relay_adoptions WHERE installation_id IN (SELECT id FROM gone);
            RETURN NULL;
        END $$;
        CREATE TRIGGER installations_forget_relay_adoptions AFTER DELETE ON installations
            REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION herald_forget_relay_adoptions();
        """

    /// What a delivery writes leaves the installation row: a new row version of the wide
    /// `installations` row per device (the first broadcast after an import) cost about three times
    /// a row of this narrow table. An installation's `last_delivered_at` is the later of its column
    /// (what a write or an import carries) and this table's; a delivery resets `failure_count` only
    /// where it is not 0, found through a partial index of the few failing installations. Deleted
    /// installations take their row here with them (a statement trigger).
    static let v12InstallationDeliveries = """
        CREATE TABLE installation_deliveries (
            installation_id TEXT PRIMARY KEY COLLATE "C",
            delivered_at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX installations_failing ON installations (id) WHERE failure_count <> 0;
        CREATE FUNCTION herald_forget_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM installation_deliveries WHERE installation_id IN (SELECT id FROM gone);
            RETURN NULL;
        END $$;
        CREATE TRIGGER installations_forget_deliveries AFTER DELETE ON installations
            REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION herald_forget_deliveries();
        """

    /// The ranges a large notification's target is cut into, each worked as a job of its own (kind
    /// `range`, reference `<notification id>#<idx>`) by any node.
    static let v11FanoutRanges = """
        CREATE TABLE fanout_ranges (
            notification_id TEXT NOT NULL COLLATE "C" REFERENCES notifications (id) ON DELETE CASCADE,
            idx BIGINT NOT NULL,
            after_key TEXT COLLATE "C",
            through_key TEXT COLLATE "C",
            cursor TEXT COLLATE "C",
            PRIMARY KEY (notification_id, idx)
        );
        """

    /// A pause may hold back one push service of a provider (a Web Push origin); pauses last seconds,
    /// so the running ones are dropped rather than carried over.
    static let v10ProviderPauseScope = """
        DROP TABLE provider_pauses;
        CREATE TABLE provider_pauses (
            app_id TEXT NOT NULL,
            service TEXT NOT NULL,
            scope TEXT NOT NULL,
            until DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, service, scope)
        );
        """

    /// Each endpoint's latest message per RFC 8030 `Topic`: a new one cancels it if undelivered.
    static let v9PushEndpointTopics = """
        CREATE TABLE push_endpoint_topics (
            endpoint_id TEXT NOT NULL COLLATE "C",
            topic TEXT NOT NULL COLLATE "C",
            notification_id TEXT NOT NULL COLLATE "C",
            PRIMARY KEY (endpoint_id, topic)
        );
        """

    /// UnifiedPush / RFC 8030 endpoints, keyed by the SHA-256 of their URL's secret (the secret itself
    /// is never stored); kept once revoked, so their URL answers 410.
    static let v8PushEndpoints = """
        CREATE TABLE push_endpoints (
            digest TEXT PRIMARY KEY COLLATE "C",
            id TEXT NOT NULL UNIQUE COLLATE "C",
            app_id TEXT NOT NULL COLLATE "C",
            installation_id TEXT NOT NULL COLLATE "C",
            created_at DOUBLE PRECISION NOT NULL,
            revoked_at DOUBLE PRECISION
        );
        CREATE INDEX push_endpoints_installation ON push_endpoints (app_id, installation_id, created_at);
        """

    /// Console sessions signed out before they expire (a digest of the cookie), until they would
    /// have expired.
    static let v6ConsoleRevocations = """
        CREATE TABLE console_revocations (
            digest TEXT PRIMARY KEY COLLATE "C",
            expires_at DOUBLE PRECISION NOT NULL
        );
        """

    /// The surface that created a notification, where a dialect's listing of its pushes (LeanCloud's
    /// `_Notification`) can select on it; read back from the unsealed specs (a sealed one targets
    /// raw tokens, which no dialect listing shows).
    static let v7NotificationSource = """
        ALTER TABLE notifications ADD COLUMN source TEXT COLLATE "C";
        UPDATE notifications SET source = convert_from(spec, 'UTF8')::jsonb ->> 'source' WHERE NOT spec_sealed;
        CREATE INDEX notifications_app_source ON notifications (app_id, source, id) WHERE source IS NOT NULL;
        """

    /// Which installation opened which notification (`POST /v1/opens`), once each; the count sits on
    /// the notification. Opens go with their notification.
    static let v4Opens = """
        ALTER TABLE notifications ADD COLUMN opened BIGINT NOT NULL DEFAULT 0;
        CREATE TABLE opens (
            notification_id TEXT NOT NULL COLLATE "C" REFERENCES notifications (id) ON DELETE CASCADE,
            installation_id TEXT NOT NULL COLLATE "C",
            opened_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (notification_id, installation_id)
        );
        """

    /// One device's delivery history (the console), newest first.
    static let v5LedgerByInstallation = """
        CREATE INDEX deliveries_installation ON deliveries (installation_id, sequence)
            WHERE installation_id IS NOT NULL;
        """

    /// Every delivery updates its installation (`last_delivered_at`, `failure_count`), columns no
    /// index holds: with room left on each page the update stays on the page (a HOT update) and no
    /// index is written. Pages filled to the brim by an import leave none.
    static let v3Fillfactor = """
        ALTER TABLE installations SET (fillfactor = 80);
        """

    /// Which node holds each installation's direct channel, until its lease ends.
    static let v2ChannelRelay = """
        CREATE TABLE channel_holders (
            installation_id TEXT PRIMARY KEY,
            node TEXT NOT NULL,
            until DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX channel_holders_node ON channel_holders (node);
        CREATE INDEX channel_holders_until ON channel_holders (until);
        """

    /// Applies every migration the database lacks.
    static func apply(to store: PostgresStore) async throws {
        for migration in all {
            // An index built on a large table may rightly take longer than one call's deadline.
            try await store.transaction(unbounded: true) { connection in
                try await connection.run("SELECT pg_advisory_xact_lock($1)", [lockKey])
                // Under the lock: two nodes creating it at once would clash in the catalog.
                try await connection.run(
                    """
                    CREATE TABLE IF NOT EXISTS herald_migrations (
                        version TEXT PRIMARY KEY,
                        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                    )
                    """)
                let applied = try await connection.rows(
                    "SELECT 1 FROM herald_migrations WHERE version = $1", [migration.id])
                guard applied.isEmpty else { return }
                // The extended protocol takes one statement at a time.
                for statement in statements(migration.sql) { try await connection.run(statement) }
                try await connection.run("INSERT INTO herald_migrations (version) VALUES ($1)", [migration.id])
            }
        }
    }

    /// A script's statements: split at semicolons outside `$$` function bodies, comments dropped.
    static func statements(_ script: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var inBody = false
        for line in script.split(separator: "\n", omittingEmptySubsequences: false) {
            if !inBody, line.trimmingCharacters(in: .whitespaces).hasPrefix("--") { continue }
            for (index, part) in line.components(separatedBy: "$$").enumerated() {
                if index > 0 {
                    current += "$$"
                    inBody.toggle()
                }
                if inBody {
                    current += part
                    continue
                }
                var pieces = part.split(separator: ";", omittingEmptySubsequences: false)
                let last = pieces.removeLast()
                for piece in pieces {
                    current += piece
                    let statement = current.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !statement.isEmpty { statements.append(statement) }
                    current = ""
                }
                current += last
            }
            current += "\n"
        }
        let rest = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { statements.append(rest) }
        return statements
    }

    /// The versions applied, in order.
    static func applied(_ store: PostgresStore) async throws -> [String] {
        let versions = try await store.read { connection in
            try await connection.rows("SELECT version FROM herald_migrations").map {
                try $0.get("version", as: String.self)
            }
        }
        // In the order of ``all`` (`v10_…` sorts before `v2_…` as text), unknown ones last.
        let position = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.id, $0) })
        return versions.sorted { (position[$0] ?? .max, $0) < (position[$1] ?? .max, $1) }
    }

    /// Today's whole schema: the tables of SQLite's v1_registry … v10_cluster_state.
    static let v1Schema = """
        CREATE TABLE app_keys (
            app_id TEXT PRIMARY KEY,
            keys_sealed BYTEA NOT NULL,
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE installations (
            id TEXT PRIMARY KEY COLLATE "C",
            app_id TEXT NOT NULL COLLATE "C",
            user_id TEXT COLLATE "C",
            device_id TEXT,
            platform TEXT NOT NULL,
            service TEXT NOT NULL,
            environment TEXT NOT NULL,
            token_index BYTEA NOT NULL,
            token_sealed BYTEA NOT NULL,
            channels JSONB NOT NULL DEFAULT '[]',
            locale TEXT,
            timezone TEXT,
            badge BIGINT NOT NULL DEFAULT 0,
            app_version TEXT,
            os_version TEXT,
            device_model TEXT,
            bundle_id TEXT,
            attributes JSONB NOT NULL DEFAULT '{}',
            sns_endpoint_arn TEXT,
            valid BOOLEAN NOT NULL DEFAULT TRUE,
            failure_count BIGINT NOT NULL DEFAULT 0,
            last_failure_at DOUBLE PRECISION,
            last_failure_reason TEXT,
            last_delivered_at DOUBLE PRECISION,
            last_seen_at DOUBLE PRECISION,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            invalidated_at DOUBLE PRECISION,
            delete_when_invalid BOOLEAN NOT NULL DEFAULT FALSE
        );
        CREATE UNIQUE INDEX installations_token ON installations (app_id, service, token_index);
        CREATE UNIQUE INDEX installations_device ON installations (app_id, device_id, service)
            WHERE device_id IS NOT NULL;
        CREATE INDEX installations_user ON installations (app_id, user_id, id);
        CREATE INDEX installations_app ON installations (app_id, id);
        CREATE INDEX installations_attributes ON installations USING GIN (attributes jsonb_path_ops);
        CREATE INDEX installations_sns_application
            ON installations (app_id, (attributes->>'sns_platform_application'))
            WHERE attributes ? 'sns_platform_application';
        CREATE TABLE installation_channels (
            app_id TEXT NOT NULL COLLATE "C",
            channel TEXT NOT NULL,
            installation_id TEXT NOT NULL COLLATE "C" REFERENCES installations (id) ON DELETE CASCADE,
            PRIMARY KEY (app_id, channel, installation_id)
        );
        CREATE INDEX installation_channels_installation ON installation_channels (installation_id);

        CREATE TABLE notifications (
            id TEXT PRIMARY KEY COLLATE "C",
            app_id TEXT NOT NULL COLLATE "C",
            status TEXT NOT NULL,
            spec BYTEA NOT NULL,
            spec_sealed BOOLEAN NOT NULL DEFAULT FALSE,
            idempotency_key TEXT,
            not_before DOUBLE PRECISION,
            expires_at DOUBLE PRECISION,
            targeted BIGINT NOT NULL DEFAULT 0,
            sent BIGINT NOT NULL DEFAULT 0,
            failed BIGINT NOT NULL DEFAULT 0,
            invalid BIGINT NOT NULL DEFAULT 0,
            skipped_preferences BIGINT NOT NULL DEFAULT 0,
            skipped_expired BIGINT NOT NULL DEFAULT 0,
            rate_limited BIGINT NOT NULL DEFAULT 0,
            cursor TEXT COLLATE "C",
            created_at DOUBLE PRECISION NOT NULL,
            started_at DOUBLE PRECISION,
            completed_at DOUBLE PRECISION,
            first_sent_at DOUBLE PRECISION
        );
        CREATE INDEX notifications_app ON notifications (app_id, id);
        CREATE INDEX notifications_app_status ON notifications (app_id, status, id);
        CREATE UNIQUE INDEX notifications_idempotency ON notifications (app_id, idempotency_key)
            WHERE idempotency_key IS NOT NULL;
        CREATE TABLE jobs (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            kind TEXT NOT NULL,
            reference TEXT NOT NULL,
            run_at DOUBLE PRECISION NOT NULL,
            attempts BIGINT NOT NULL DEFAULT 0,
            locked_by TEXT,
            locked_until DOUBLE PRECISION,
            last_error TEXT,
            UNIQUE (kind, reference)
        );
        CREATE INDEX jobs_due ON jobs (run_at);
        CREATE TABLE pending_deliveries (
            notification_id TEXT NOT NULL COLLATE "C" REFERENCES notifications (id) ON DELETE CASCADE,
            recipient TEXT NOT NULL COLLATE "C",
            run_at DOUBLE PRECISION NOT NULL,
            attempts BIGINT NOT NULL,
            reason TEXT NOT NULL,
            PRIMARY KEY (notification_id, recipient)
        );
        CREATE INDEX pending_deliveries_due ON pending_deliveries (notification_id, run_at);
        CREATE INDEX pending_deliveries_recipient ON pending_deliveries (recipient) WHERE reason = 'offline';
        CREATE TABLE deliveries (
            sequence BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            notification_id TEXT NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
            installation_id TEXT,
            token_suffix TEXT NOT NULL,
            service TEXT NOT NULL,
            outcome TEXT NOT NULL,
            provider_id TEXT,
            reason TEXT,
            attempts BIGINT NOT NULL,
            at DOUBLE PRECISION NOT NULL
        );
        CREATE INDEX deliveries_notification ON deliveries (notification_id, outcome, sequence);
        CREATE TABLE preferences (
            installation_id TEXT PRIMARY KEY REFERENCES installations (id) ON DELETE CASCADE,
            body TEXT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL
        );

        CREATE TABLE source_devices (
            app_id TEXT NOT NULL,
            id TEXT NOT NULL,
            alias TEXT,
            name TEXT,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, id)
        );
        CREATE UNIQUE INDEX source_devices_alias ON source_devices (app_id, alias) WHERE alias IS NOT NULL;
        CREATE TABLE source_device_owners (
            app_id TEXT NOT NULL,
            device_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, device_id, user_id),
            FOREIGN KEY (app_id, device_id) REFERENCES source_devices (app_id, id) ON DELETE CASCADE
        );
        -- No foreign key to notifications: clean-up deletes old notifications but keeps the event.
        CREATE TABLE events (
            id TEXT PRIMARY KEY,
            app_id TEXT NOT NULL,
            producer TEXT NOT NULL DEFAULT '',
            external_id TEXT NOT NULL,
            record_id TEXT,
            source_device_id TEXT NOT NULL,
            owners JSONB NOT NULL DEFAULT '[]',
            type TEXT NOT NULL,
            summary TEXT NOT NULL,
            thumbnail TEXT,
            status TEXT NOT NULL,
            occurred_at DOUBLE PRECISION,
            notification_id TEXT,
            push_sent_at DOUBLE PRECISION,
            created_at DOUBLE PRECISION NOT NULL
        );
        CREATE UNIQUE INDEX events_external ON events (app_id, producer, external_id);
        CREATE UNIQUE INDEX events_record ON events (app_id, producer, record_id) WHERE record_id IS NOT NULL;
        CREATE INDEX events_notification ON events (notification_id) WHERE notification_id IS NOT NULL;

        CREATE TABLE sns_platform_applications (
            app_id TEXT NOT NULL,
            name TEXT NOT NULL COLLATE "C",
            platform TEXT NOT NULL,
            attributes JSONB NOT NULL DEFAULT '{}',
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, name)
        );
        CREATE TABLE sns_topics (
            app_id TEXT NOT NULL,
            name TEXT NOT NULL COLLATE "C",
            created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, name)
        );
        CREATE TABLE sns_subscriptions (
            id TEXT PRIMARY KEY COLLATE "C",
            app_id TEXT NOT NULL,
            topic TEXT NOT NULL COLLATE "C",
            installation_id TEXT NOT NULL COLLATE "C" REFERENCES installations (id) ON DELETE CASCADE,
            created_at DOUBLE PRECISION NOT NULL,
            FOREIGN KEY (app_id, topic) REFERENCES sns_topics (app_id, name) ON DELETE CASCADE
        );
        CREATE UNIQUE INDEX sns_subscriptions_member ON sns_subscriptions (app_id, topic, installation_id);
        CREATE INDEX sns_subscriptions_installation ON sns_subscriptions (installation_id);

        -- The Home Assistant relay's per-token, per-UTC-day counters, keyed by the token's keyed hash.
        CREATE TABLE relay_usage (
            app_id TEXT NOT NULL,
            service TEXT NOT NULL,
            token_index BYTEA NOT NULL,
            day TEXT NOT NULL,
            successful BIGINT NOT NULL DEFAULT 0,
            errors BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (app_id, service, token_index, day)
        );

        CREATE TABLE lc_users (
            app_id TEXT NOT NULL,
            id TEXT NOT NULL COLLATE "C",
            fields JSONB NOT NULL DEFAULT '{}',
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, id)
        );

        -- Shared rate-limit buckets (GCRA: when each bucket is full again) and provider-wide pauses.
        CREATE TABLE rate_buckets (
            bucket TEXT PRIMARY KEY,
            full_at DOUBLE PRECISION NOT NULL
        );
        CREATE TABLE provider_pauses (
            app_id TEXT NOT NULL,
            service TEXT NOT NULL,
            until DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (app_id, service)
        );

        -- The values a query field holds: an array's elements, a scalar itself, nothing for an
        -- object, JSON null or a missing key (InstallationQuery.matches reads fields so).
        CREATE FUNCTION herald_query_elements(value jsonb) RETURNS SETOF jsonb
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT e FROM jsonb_array_elements(CASE
                WHEN value IS NULL OR jsonb_typeof(value) IN ('object', 'null') THEN '[]'::jsonb
                WHEN jsonb_typeof(value) = 'array' THEN value
                ELSE jsonb_build_array(value) END) AS e
        $$;

        -- The query language's GeoPoint tests, as HeraldCore's GeoPoint computes them: a stored
        -- {"__type": "GeoPoint", "latitude": n, "longitude": n} object in range, else NULL.
        CREATE FUNCTION herald_geo_point(value jsonb, OUT latitude double precision, OUT longitude double precision)
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
            SELECT (value->>'latitude')::double precision, (value->>'longitude')::double precision
            WHERE jsonb_typeof(value) = 'object' AND value->'__type' = '"GeoPoint"'
                AND jsonb_typeof(value->'latitude') = 'number' AND jsonb_typeof(value->'longitude') = 'number'
                AND (value->>'latitude')::double precision BETWEEN -90 AND 90
                AND (value->>'longitude')::double precision BETWEEN -180 AND 180
        $$;
        -- The great-circle distance in radians (haversine, GeoPoint.distance), NULL when not a GeoPoint.
        CREATE FUNCTION herald_geo_distance(value jsonb, lat double precision, lon double precision)
        RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT 2 * atan2(sqrt(a), sqrt(greatest(0, 1 - a))) FROM (
                SELECT sin(radians(lat - p.latitude) / 2) ^ 2
                    + cos(radians(p.latitude)) * cos(radians(lat)) * sin(radians(lon - p.longitude) / 2) ^ 2 AS a
                FROM herald_geo_point(value) p WHERE p.latitude IS NOT NULL
            ) h
        $$;
        -- Whether a stored GeoPoint lies in the box (GeoPoint.isWithin: a box may cross the antimeridian).
        CREATE FUNCTION herald_geo_within(
            value jsonb, south double precision, west double precision, north double precision, east double precision
        ) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT COALESCE((
                SELECT p.latitude >= south AND p.latitude <= north AND CASE WHEN west <= east
                    THEN p.longitude >= west AND p.longitude <= east
                    ELSE p.longitude >= west OR p.longitude <= east END
                FROM herald_geo_point(value) p WHERE p.latitude IS NOT NULL
            ), false)
        $$;
        """
}
