#!/usr/bin/env bash
# The PostgreSQL store's hot statements planned and run against a large database: EXPLAIN (ANALYZE,
# BUFFERS) of the fan-out's page (`resolve`: everyone, a channel, a user), a range's boundary, a dry
# run's count, the job claim, the pending deliveries' reads and a page's delivery marks, on
#   - N installations of one app (default 10,000,000; Herald's schema, made with `herald migrate`, rows
#     generated in SQL: 32-byte token index and a 60-byte sealed token, a user each, one in ten in the
#     channel `news`), VACUUM (ANALYZE)d as `herald import` leaves them;
#   - a backlog of 100,000 due jobs and 1,000,000 pending deliveries of one notification.
# Each plan is printed with its timing; the database is dropped at the end (BENCH_KEEP=1 keeps it).
# Usage: bench/pg-plans.sh [installations=10000000]   Environment: BENCH_HERALD=<binary> (else a debug build).
set -euo pipefail
umask 077
cd "$(dirname "$0")/.."
count=${1:-10000000}
pg_url=$(scripts/postgres)
herald=${BENCH_HERALD:-}
if [ -z "$herald" ]; then
    swift build --product herald >&2
    herald=.build/debug/herald
fi
db=herald_plans_$$
psql "$pg_url" -qc "CREATE DATABASE $db" >/dev/null
url="${pg_url%/*}/$db"
work=$(mktemp -d)
cleanup() {
    rm -rf "$work"
    [ -n "${BENCH_KEEP:-}" ] || psql "$pg_url" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
}
trap cleanup EXIT
printf 'database: %s\nsecret_key: %s\n' "$url" "$(head -c 32 /dev/urandom | base64)" > "$work/herald.yaml"
"$herald" migrate --config "$work/herald.yaml" >&2

echo "== generating $count installations, 100,000 due jobs and 1,000,000 pending deliveries" >&2
start=$(date +%s)
psql "$url" -v ON_ERROR_STOP=1 -q <<SQL
-- Ids as Herald makes them: UUID version 7 text, in creation order.
INSERT INTO installations (id, app_id, user_id, platform, service, environment, token_index, token_sealed,
    channels, timezone, created_at, updated_at)
SELECT lpad(to_hex(1800000000000 + g), 12, '0') || '-7' || lpad(to_hex(g % 4096), 3, '0') || '-8'
        || lpad(to_hex(g % 4096), 3, '0') || '-' || lpad(to_hex(g), 12, '0'),
    'default', 'user-' || g, 'ios', 'apns', 'production', sha256(int8send(g)),
    sha256(int8send(g)) || sha256(int8send(-g)) || substr(sha256(int8send(g + 1)), 1, 28),
    CASE WHEN g % 10 = 0 THEN '["news"]'::jsonb ELSE '[]'::jsonb END, 'Europe/Berlin', 1.8e9, 1.8e9
FROM generate_series(1, $count) AS g;
INSERT INTO installation_channels (app_id, channel, installation_id)
SELECT app_id, 'news', id FROM installations WHERE channels @> '["news"]';
INSERT INTO notifications (id, app_id, status, spec, created_at)
VALUES ('01900000-0000-7000-8000-000000000001', 'default', 'sending', '\x7b7d', 1.8e9);
INSERT INTO jobs (kind, reference, run_at)
SELECT 'notification', 'backlog-' || g, 1.8e9 + g FROM generate_series(1, 100000) AS g;
INSERT INTO pending_deliveries (notification_id, recipient, run_at, attempts, reason)
SELECT '01900000-0000-7000-8000-000000000001', id, 1.8e9 + (row_number() OVER ()) % 3600, 1, 'retry'
FROM installations LIMIT 1000000;
VACUUM (ANALYZE);
SQL
echo "== generated in $(($(date +%s) - start)) s; installations: $(psql "$url" -Atc "SELECT pg_size_pretty(pg_total_relation_size('installations'))")" >&2

middle=$(psql "$url" -Atc "SELECT id FROM installations ORDER BY id OFFSET $((count / 2)) LIMIT 1")
user=$(psql "$url" -Atc "SELECT user_id FROM installations WHERE id = '$middle'")
# A page of 500 ids from the middle, for the delivery marks and failure resets.
page=$(psql "$url" -Atc "SELECT array_agg(id)::text FROM (SELECT id FROM installations WHERE id > '$middle' ORDER BY id LIMIT 500) page")
columns="id, platform, service, environment, token_sealed, timezone, bundle_id"
plan() {
    echo
    echo "### $1"
    echo
    echo '```'
    # PREPARE + EXECUTE: the generic plan Herald's connections use (plan_cache_mode = force_generic_plan).
    psql "$url" -q -v ON_ERROR_STOP=1 <<SQL | sed -e 's/ *$//'
BEGIN;
SET LOCAL plan_cache_mode = force_generic_plan;
PREPARE statement AS $2;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON) EXECUTE statement$3;
ROLLBACK;
SQL
    echo '```'
}
echo "PostgreSQL $(psql "$url" -Atc 'SHOW server_version'), $count installations, $(date -u '+%Y-%m-%d %H:%M UTC')"
plan "resolve, everyone: the first page of 500" \
    "SELECT $columns FROM installations WHERE app_id = \$1 AND valid ORDER BY id LIMIT \$2" \
    "('default', 500)"
plan "resolve, everyone: a page from the middle, within a range" \
    "SELECT $columns FROM installations WHERE app_id = \$1 AND valid AND id > \$2 AND id <= \$3 ORDER BY id LIMIT \$4" \
    "('default', '$middle', 'ffffffff', 500)"
plan "resolve, a channel (one in ten): a page from the middle" \
    "SELECT $columns FROM installations WHERE app_id = \$1 AND id > \$3 AND valid AND id IN (SELECT installation_id FROM installation_channels WHERE app_id = \$1 AND channel = ANY(\$2) AND installation_id > \$3) ORDER BY id LIMIT \$4" \
    "('default', '{news}', '$middle', 500)"
plan "resolve, one user" \
    "SELECT $columns FROM installations WHERE app_id = \$1 AND valid AND user_id = ANY(\$2) ORDER BY id LIMIT \$3" \
    "('default', '{$user}', 500)"
plan "a range's boundary (everyone): the app's 10,000th id after a key" \
    "SELECT id FROM installations WHERE app_id = \$1 AND id > \$2 ORDER BY id LIMIT 1 OFFSET \$3" \
    "('default', '$middle', 9999)"
plan "count (a dry run), a channel" \
    "SELECT service, count(*) AS n FROM installations WHERE app_id = \$1 AND valid AND id IN (SELECT installation_id FROM installation_channels WHERE app_id = \$1 AND channel = ANY(\$2)) GROUP BY service" \
    "('default', '{news}')"
plan "count (a dry run), everyone" \
    "SELECT service, count(*) AS n FROM installations WHERE app_id = \$1 AND valid GROUP BY service" \
    "('default')"
plan "claim: the next due job of 100,000 (rolled back)" \
    "UPDATE jobs SET locked_by = \$1, locked_until = \$2, attempts = attempts + 1 WHERE id = (SELECT id FROM jobs WHERE kind = ANY(\$3) AND run_at <= \$4 AND (locked_until IS NULL OR locked_until < \$4) ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, kind, reference, attempts" \
    "('w', 1.9e9, '{notification,range,cleanup}', 1.9e9)"
plan "pending deliveries: the due ones of 1,000,000" \
    "SELECT * FROM pending_deliveries WHERE notification_id = \$1 AND run_at <= \$2 ORDER BY run_at, attempts LIMIT \$3" \
    "('01900000-0000-7000-8000-000000000001', 1.8e9 + 1800, 2000)"
plan "pending deliveries: the next one's time" \
    "SELECT min(run_at) AS next FROM pending_deliveries WHERE notification_id = \$1" \
    "('01900000-0000-7000-8000-000000000001')"
plan "a page's deliveries: 500 rows of installation_deliveries (rolled back)" \
    "INSERT INTO installation_deliveries AS known (installation_id, delivered_at) SELECT DISTINCT ON (page.id) page.id, page.at FROM unnest(\$1::text[], \$2::float8[]) AS page (id, at) ORDER BY page.id, page.at DESC ON CONFLICT (installation_id) DO UPDATE SET delivered_at = excluded.delivered_at WHERE known.delivered_at < excluded.delivered_at - 3600" \
    "('$page'::text[], array_fill(1.9e9::float8, ARRAY[500]))"
plan "a page's failure resets: the failing ones of 500 (rolled back)" \
    "UPDATE installations SET failure_count = 0 WHERE id = ANY(\$1) AND failure_count <> 0" \
    "('$page'::text[])"
