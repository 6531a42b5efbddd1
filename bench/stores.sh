#!/usr/bin/env bash
# SQLite against PostgreSQL, and one node against two, in one run against one sink:
#   1. installs nginx-light, nghttp2-client (the sink and h2load) and PostgreSQL when missing; starts
#      the sink (bench/sink.sh) and a throwaway PostgreSQL cluster (scripts/postgres);
#   2. builds the release `herald` (or takes BENCH_HERALD);
#   3. for each setup — sqlite (1 node), postgres (1 node), postgres (2 nodes) — makes a fresh database,
#      bulk-imports N installations (`herald import`), starts the nodes, and sends one broadcast to all
#      of them, which every node works (cut into ranges of engine.range_size, each claimed by any
#      node's worker), waiting until it is `done` — twice: the first broadcast after the import, and a
#      repeat (devices served within the hour: no installation row is rewritten);
#   4. measures the ceiling with h2load before the first setup and after the last.
# Prints, per setup: notifications/s, the ratio to the mean ceiling, Herald's and its PostgreSQL cluster's CPU
# seconds per 1,000 notifications, the import rate, and each node's share (its /metrics).
# Usage: bench/stores.sh [installations=200000] [connections=2]
# Environment: BENCH_SETUPS (default "sqlite postgres postgres2"), BENCH_PAGE_SIZE (engine.page_size, 2000),
# BENCH_RANGE_SIZE (engine.range_size, 10000),
# BENCH_HERALD=<binary> (a release build made elsewhere), BENCH_KEEP=1 (keeps the PostgreSQL databases, to plan
# statements on them: bench/pg-plans.sh's EXPLAINs),
# BENCH_PG_STATS=<directory>: after each PostgreSQL round, what the database did in it — its statements by time
# (pg_stat_statements, when the cluster preloads it), its tables' live and dead rows, vacuums and analyzes (since the import), and
# the cluster's WAL and checkpoints — in <directory>/<setup>-<round>.txt.
set -euo pipefail
# Files made here hold keys: owner-only, as herald serve requires of a config file with secrets.
umask 077
cd "$(dirname "$0")/.."
count=${1:-200000}
connections=${2:-2}
port=${BENCH_PORT:-18443}
http_base=${BENCH_HTTP_PORT:-18080}

need=()
command -v nginx >/dev/null 2>&1 || need+=(nginx-light)
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v curl >/dev/null 2>&1 || need+=(curl)
if ((${#need[@]})); then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
# A cluster of its own, durable as SQLite is (every commit on disk before the answer) and set up as
# docs/postgresql.md recommends (shared_buffers, wal_compression, max_wal_size): not the test cluster.
pg_url=$(HERALD_PG_PROFILE=production scripts/postgres)

. bench/lib.sh
bench_herald

work=$(mktemp -d)
pids=()
databases=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for db in "${databases[@]}"; do
        if [ -n "${BENCH_KEEP:-}" ]; then
            echo "kept: ${pg_url%/*}/$db" >&2
        else
            psql "$pg_url" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
        fi
    done
    bench/sink.sh stop "$work"
    rm -rf "$work"
}
trap cleanup EXIT
bench/sink.sh start "$work" "$port"
sleep 0.5
openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
head -c 32 /dev/urandom | base64 > "$work/master.key"
chmod 600 "$work/master.key"

python3 - "$count" > "$work/devices.jsonl" <<'PY'
import os, sys
n = int(sys.argv[1])
out = sys.stdout
for i in range(n):
    out.write('{"platform":"ios","token":"%s","user_id":"u%d"}\n' % (os.urandom(32).hex(), i))
PY
cat > "$work/body.json" <<'JSON'
{"aps":{"alert":{"body":"A silver sedan pulled into the driveway and parked near the garage door.","title":"Vehicle detected at Front Door"},"mutable-content":1,"sound":"default"},"deep_link":"aovis://event/018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","cloudEventId":"018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","deviceId":"aovis-n4k-7f3a9c","eventType":"vehicle"}
JSON
token=$(printf 'ab%.0s' $(seq 32))
ceiling_count=$((count < 200000 ? count : 200000))
measure_ceiling() {
    echo "== ceiling ($1): h2load, $ceiling_count requests, $connections connections x 100 streams" >&2
    local out
    out=$(h2load -n "$ceiling_count" -c "$connections" -m 100 -d "$work/body.json" \
        -H 'apns-topic: com.example.herald' -H 'apns-push-type: alert' -H 'apns-priority: 10' \
        "https://127.0.0.1:$port/3/device/$token")
    echo "$out" | grep -E 'finished in|status codes' >&2
    echo "$out" | sed -n 's/.*finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p'
}
ticks=$(getconf CLK_TCK)
# CPU ticks of a list of processes, and of this run's PostgreSQL cluster: its postmaster and every process it
# started (backends, WAL writer, checkpointer, autovacuum), not another cluster's (the test suites' own).
cpu_of() { local total=0 pid; for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo $total; }
postmaster=$(head -n 1 "$(psql "$pg_url" -Atc 'SHOW data_directory')/postmaster.pid")
pg_cpu() {
    local total=0 stat line
    for stat in /proc/[0-9]*/stat; do
        read -r line < "$stat" 2>/dev/null || continue
        # After the command "(postgres)": state, parent pid, ...; utime and stime are fields 14 and 15, and the
        # postmaster's 16 and 17 hold the processes that ended (an autovacuum worker, a closed connection).
        case "$line" in
        "$postmaster (postgres) "*) total=$((total + $(echo "$line" | awk '{print $14 + $15 + $16 + $17}'))) ;;
        *"(postgres) "?" $postmaster "*) total=$((total + $(echo "$line" | awk '{print $14 + $15}'))) ;;
        esac
    done
    echo $total
}

# BENCH_PG_STATS: counters zeroed before a round, reported after it (a SQLite round has none).
pg_stats_reset() {
    [ -n "${BENCH_PG_STATS:-}" ] && mkdir -p "$BENCH_PG_STATS"
    [ -n "${BENCH_PG_STATS:-}" ] && [[ $1 == postgres://* ]] || return 0
    psql "$1" -qAt -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()" \
        -c "SELECT pg_stat_reset_shared('wal')" -c "SELECT pg_stat_reset_shared('bgwriter')" \
        >/dev/null 2>&1 || true
}
pg_stats_report() {
    [ -n "${BENCH_PG_STATS:-}" ] && [[ $1 == postgres://* ]] || return 0
    mkdir -p "$BENCH_PG_STATS"
    psql "$1" -P pager=off > "$BENCH_PG_STATS/$2.txt" 2>&1 <<'SQL' || true
SELECT calls, round(total_exec_time::numeric, 1) AS ms, round((total_exec_time / calls)::numeric, 3) AS ms_per_call,
    rows, shared_blks_hit AS hit, shared_blks_read AS read, shared_blks_dirtied AS dirtied, wal_records, wal_fpi,
    pg_size_pretty(wal_bytes) AS wal, left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY total_exec_time DESC LIMIT 25;
SELECT relname, n_live_tup, n_dead_tup, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, seq_scan, idx_scan,
    vacuum_count, autovacuum_count, autoanalyze_count, pg_size_pretty(pg_total_relation_size(relid)) AS size
FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del + coalesce(idx_scan, 0) + seq_scan > 0
ORDER BY relname;
SELECT wal_records, wal_fpi, pg_size_pretty(wal_bytes) AS wal, wal_sync, round(wal_sync_time::numeric) AS sync_ms
FROM pg_stat_wal;
SELECT checkpoints_timed, checkpoints_req, buffers_checkpoint, buffers_backend FROM pg_stat_bgwriter;
SQL
}

ceiling_before=$(measure_ceiling before)
results=()
run_setup() {
    local name=$1 database=$2 nodes=$3
    echo "== $name: $nodes node(s)"
    local dir="$work/$name"
    mkdir -p "$dir"
    cat > "$dir/herald.yaml" <<YAML
database: $database
secret_key_file: $work/master.key
log: {level: warning}
metrics: {token: bench-metrics-token}
app:
  default:
    apns:
      key_file: $work/AuthKey.p8
      key_id: BENCHKEY01
      team_id: BENCHTEAM1
      topic: com.example.herald
      url: https://127.0.0.1:$port
      ca_file: $work/ca.pem
      connections: $connections
engine:
  page_size: ${BENCH_PAGE_SIZE:-2000}
  range_size: ${BENCH_RANGE_SIZE:-10000}
YAML
    local i0 i1
    i0=$(date +%s.%N)
    "$herald" import "$work/devices.jsonl" --config "$dir/herald.yaml" > "$dir/import.log"
    i1=$(date +%s.%N)
    local node_pids=() key="" n
    for n in $(seq "$nodes"); do
        "$herald" serve --config "$dir/herald.yaml" --host 127.0.0.1 --port $((http_base + n)) > "$dir/serve$n.log" 2>&1 &
        node_pids+=($!)
        pids+=($!)
        for _ in $(seq 200); do grep -q "Herald is listening" "$dir/serve$n.log" 2>/dev/null && break; sleep 0.1; done
        [ -n "$key" ] || key=$(sed -n 's/^server key: //p' "$dir/serve$n.log")
    done
    [ -n "$key" ] || key=$("$herald" keys show --config "$dir/herald.yaml" | sed -n 's/^server key: //p')
    # Pushes each node delivered so far, from its /metrics.
    delivered() {
        local n
        for n in $(seq "$nodes"); do
            curl -sf -H 'Authorization: Bearer bench-metrics-token' "http://127.0.0.1:$((http_base + n))/metrics" |
                awk '/^herald_deliveries_total\{/ && /outcome="delivered"/ {sum += $NF} END {printf "%d ", sum}'
        done
    }
    local c0 p0 start end c1 p1 round d0 d1
    for round in first repeat; do
    pg_stats_reset "$database"
    c0=$(cpu_of "${node_pids[@]}")
    p0=$(pg_cpu)
    d0=$(delivered)
    start=$(date +%s.%N)
    local ids=()
    ids+=("$(curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
        -d '{"target":{"all":true},"payload":{"title":"Vehicle detected at Front Door","body":"A silver sedan pulled into the driveway and parked near the garage door.","sound":"default","mutable_content":true,"deep_link":"aovis://event/018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","data":{"cloudEventId":"018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","deviceId":"aovis-n4k-7f3a9c","eventType":"vehicle"}}}' \
        "http://127.0.0.1:$((http_base + 1))/v1/notifications" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')")
    BENCH_TIMELINE=${BENCH_PG_STATS:+$BENCH_PG_STATS/$name-$round.timeline} \
        python3 - "http://127.0.0.1:$((http_base + 1))" "$key" "${ids[@]}" <<'PY'
import json, os, sys, time, urllib.request
base, key, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
# BENCH_PG_STATS: the notification's sent count as the poller sees it (seconds since the send, sent).
timeline = open(os.environ["BENCH_TIMELINE"], "w") if os.environ.get("BENCH_TIMELINE") else None
began = time.time()
while ids:
    request = urllib.request.Request(f"{base}/v1/notifications/{ids[0]}", headers={"Authorization": "Bearer " + key})
    with urllib.request.urlopen(request) as response:
        record = json.loads(response.read().decode())
    if timeline:
        print(f"{time.time() - began:.2f} {record['counts']['sent']} {record['status']}", file=timeline)
    if record["status"] in ("done", "failed", "expired", "canceled"):
        if record["counts"]["sent"] != record["counts"]["targeted"]:
            print("incomplete:", record["counts"], file=sys.stderr)
        ids.pop(0)
    else:
        time.sleep(0.1)
PY
    end=$(date +%s.%N)
    c1=$(cpu_of "${node_pids[@]}")
    p1=$(pg_cpu)
    d1=$(delivered)
    local shares
    shares=$(python3 -c 'import sys; a, b = sys.argv[1].split(), sys.argv[2].split(); print("/".join(str(int(y) - int(x)) for x, y in zip(a, b)))' "$d0" "$d1")
    results+=("$name $nodes $round $start $end $c0 $c1 $p0 $p1 $i0 $i1 $shares")
    pg_stats_report "$database" "$name-$round"
    done
    for pid in "${node_pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
}

setups=${BENCH_SETUPS:-sqlite postgres postgres2}
[[ " $setups " == *" sqlite "* ]] && run_setup sqlite "$work/sqlite/herald.sqlite" 1
for setup in "postgres 1" "postgres2 2"; do
    set -- $setup
    [[ " $setups " == *" $1 "* ]] || continue
    db="herald_bench_$$_$1"
    databases+=("$db")
    psql "$pg_url" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
    run_setup "$1" "${pg_url%/*}/$db" "$2"
done
ceiling_after=$(measure_ceiling after)

python3 - "$count" "$ceiling_before" "$ceiling_after" "$ticks" "${results[@]}" <<'PY'
import sys
count, before, after, ticks = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
ceiling = (before + after) / 2
print(f"ceiling (h2load): {ceiling:,.0f} req/s (before {before:,.0f}, after {after:,.0f})")
print(f"{'setup':<12}{'nodes':>6}{'round':>8}{'notif/s':>10}{'ratio':>7}{'herald CPU/1k':>15}{'pg CPU/1k':>11}{'import/s':>10}  shares")
rates = {}
for line in sys.argv[5:]:
    name, nodes, round, start, end, c0, c1, p0, p1, i0, i1, shares = line.split()
    nodes = int(nodes)
    sent = count
    seconds = float(end) - float(start)
    rate = sent / seconds
    rates[(name, round)] = rate
    herald = (float(c1) - float(c0)) / ticks / sent * 1000
    pg = (float(p1) - float(p0)) / ticks / sent * 1000
    print(f"{name:<12}{nodes:>6}{round:>8}{rate:>10,.0f}{rate / ceiling:>7.2f}{herald:>15.3f}{pg:>11.3f}{count / (float(i1) - float(i0)):>10,.0f}  {shares}")
for round in ("first", "repeat"):
    if ("sqlite", round) in rates and ("postgres", round) in rates:
        print(f"postgres (1 node) / sqlite, {round} broadcast: {rates[('postgres', round)] / rates[('sqlite', round)]:.2f}")
PY
