#!/usr/bin/env bash
# Soak test: a release Herald under steady, mixed, moderate traffic for a long time, sampled every 10 s,
# to show whether memory, file descriptors, connections, the job queue or the tables grow without bound.
# Not run in CI: it takes as long as you give it.
#   1. takes BENCH_HERALD (or builds the release `herald`, as the other bench scripts do);
#   2. starts nginx as the APNs and FCM stand-in on 127.0.0.1 (throwaway CA from `bench/sink.sh certs`):
#      APNs answers 200 with an apns-id, or 400 BadDeviceToken for device tokens ending in "dead" (about
#      2 % of the APNs devices, so invalidation runs too); FCM answers 200 with a message name, and its
#      OAuth token endpoint hands out tokens; every request's kind and status go to an access log;
#   3. starts `herald serve` (port 0) on a fresh SQLite database in a temporary directory, or on
#      `--database postgres://…` (give it a throwaway database: the soak leaves its rows there), with one
#      app that has APNs, FCM, the Home Assistant relay and ArgusAI's events;
#   4. runs bench/soak_traffic.py for SECONDS: open-loop traffic at SOAK_RATE requests/s in all —
#      native registrations (new devices, refreshed tokens, and deletions that hold the table near
#      SOAK_DEVICES), single-user sends and channel broadcasts (`POST /v1/notifications`), AOVIS camera
#      events (`POST /api/internal/events`), ArgusAI events (`POST /api/v1/push/mobile/events`), Home
#      Assistant relay pushes (`POST /ha/push`) and sends to direct-only devices held by SOAK_WS_CLIENTS
#      WebSocket clients on `/v1/channel` (channel credentials, confirmed pushes, each client reconnecting
#      every 20–90 s). Every SOAK_INTERVAL seconds it appends a row to soak.csv: Herald's RSS, open fds,
#      threads and CPU; its TCP connections (all, inbound on its port, to the provider stand-in,
#      CLOSE_WAIT); the gauges and counters of GET /metrics (queue jobs due/running/scheduled, oldest due
#      age, channel connections, active requests, provider pools, accepted/finished notifications and
#      deliveries per interval); table sizes (installations, pending deliveries, jobs, notifications,
#      deliveries; SQLite by a read-only connection, PostgreSQL through psql when it is installed; the two
#      that grow by design, notifications and deliveries, every 30th sample, as counting them costs more as
#      they grow) and
#      the database's size on disk; on PostgreSQL, the server's own figures (its processes' CPU, blocks read
#      and hit, dead row versions, autovacuum runs: a cost that follows the tables shows there first); the
#      stand-in's receipts; and the generator's own figures — requests
#      done, errors (any 5xx or connection error) and 4xx per interval, latency p50/p99, WebSocket
#      pushes/reconnects/errors, its own RSS, CPU, event-loop lag and the requests it had to skip because
#      SOAK_MAX_INFLIGHT were in flight (if that column is not 0, the generator, not Herald, was the limit);
#   5. stops everything and runs bench/soak_plot.py: a PNG with one panel per series, and the verdict.
#
# The verdict (bench/soak_plot.py; the same rule re-runs on any soak.csv): the first 10 % of the samples
# are warm-up and ignored; "early" is the next 20 % of the samples, "late" the last 20 %. For each series
# growth = (mean(late) − mean(early)) / mean(early). A series is GROWING when mean(late) − mean(early) exceeds
# both 10 % of mean(early) and the series' absolute slack (below), SHRINKING for the same fall, else FLAT.
# The run FAILS (exit 1) when
#   - Herald's RSS grows more than 20 % (and more than 8 MB);
#   - fds, threads, TCP connections or queued work grow "without bound": late − early > max(20 % of early,
#     slack). The slack keeps noise at small values from counting: fds 80 (non-socket fds 16), TCP
#     connections 80 (all, inbound), inbound connections no generator socket holds any more 8, connections
#     to the providers 4, CLOSE_WAIT 4, threads 8, jobs due/scheduled 50, the oldest due job's age 5 s,
#     pending deliveries 200, jobs 100, installations 10 % of SOAK_DEVICES, channels 8. (Herald's inbound
#     connections follow the generator's keep-alive pool, up to SOAK_HTTP_CONNECTIONS (64) + the WebSocket
#     clients, which is why fds and connections get 80; a socket Herald keeps after its client let go shows
#     as an orphan or CLOSE_WAIT, checked tightly.) A bounded series settles after warm-up; an unbounded one
#     keeps rising, and at a steady rate 20 % between the two windows is far past noise;
#   - the generator's error rate (5xx + connection errors over requests) exceeds SOAK_MAX_ERROR_RATE
#     (0.001), or Herald exited before the end;
#   - a run of 45 minutes or more breaks the long-haul rules: RSS at the end more than 10 % from RSS at
#     minute 30; latency p50 or CPU per request in the last 30 minutes more than 10 % from minutes 30–60
#     (shorter than 90 minutes: minutes 30 to the middle against the middle to the end); any error.
# Series that must grow (notifications kept for retention_days, the database file, the ledger) are shown and
# marked "expected"; request rates, 4xx, latency and the generator's own figures are informative (the
# generator's RSS is checked like Herald's, so a leak of its own cannot pass for Herald's).
#
# Usage: bench/soak.sh [SECONDS=3600] [--database postgres://…] [--out DIR] [--rate N]
# Environment: BENCH_HERALD=<herald binary> (else built), SOAK_OUT (bench/out/soak-<UTC date-time>),
# SOAK_RATE (300 requests/s in all), SOAK_DEVICES (5000 installations kept registered), SOAK_USERS (2000),
# SOAK_CHANNELS (50), SOAK_WS_CLIENTS (40), SOAK_INTERVAL (10 s), SOAK_MAX_INFLIGHT (256),
# SOAK_HTTP_CONNECTIONS (64, the generator's keep-alive pool),
# SOAK_MAX_ERROR_RATE (0.001), SOAK_MIX (route weights, e.g. "register=40 refresh=30 delete=… send_user=80"),
# SOAK_ENGINE (YAML flow mapping of engine settings, e.g. "{workers: 4}"),
# SOAK_SQLITE_FROM (a SQLite database, its .key file beside it, to start from instead of an empty one: with
# bench/soak_history.py's history of a long run, a short soak shows whether a request costs more on full tables).
# Runs scripts/bootstrap (the tools environment has aiohttp and matplotlib) and installs nginx-light
# with apt when it is missing.
# Short runs (a few minutes) see SQLite's page caches fill while the database grows (RSS rises by some 40 MB
# and then levels off); judge memory on runs of 10 minutes or more. The machine should be otherwise idle:
# other load shows as latency and event-loop lag, not as growth.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

seconds=3600
database=""
out=${SOAK_OUT:-}
rate=${SOAK_RATE:-300}
while (($#)); do
    case "$1" in
    --database) database=$2; shift 2 ;;
    --database=*) database=${1#*=}; shift ;;
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --rate) rate=$2; shift 2 ;;
    --rate=*) rate=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    [0-9]*) seconds=$1; shift ;;
    *) echo "soak: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
out=${out:-bench/out/soak-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

bench_need openssl:openssl python3:python3 nginx:nginx-light
# aiohttp (HTTP and WebSocket client) and matplotlib come from the project's tools environment
# (.python/tools, pinned in python/tools-py3XX.lock): scripts/bootstrap makes it, or reuses it as it is.
scripts/bootstrap
python=$PWD/.python/tools/bin/python3

bench_herald

work=$(mktemp -d)
server_pid=""
cleanup() {
    bench_is_main || return 0
    bench_stop
    if [ -f "$work/sink/nginx.pid" ]; then kill "$(cat "$work/sink/nginx.pid")" 2>/dev/null || true; fi
    [ -f "$work/serve.log" ] && cp "$work/serve.log" "$out/serve.log" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The provider stand-in: nginx over TLS with HTTP/2 (and HTTP/1.1 for the OAuth exchange).
sink=$work/sink
sink_port=$(free_port)
mkdir -p "$sink/www" "$sink/logs" "$sink/tmp"
: > "$sink/www/sink"
chmod 755 "$work" "$sink" "$sink/www"
chmod 644 "$sink/www/sink"
bench/sink.sh certs "$sink"
cat > "$sink/nginx.conf" <<CONF
worker_processes 1;
pid $sink/nginx.pid;
error_log $sink/logs/error.log warn;
events { worker_connections 4096; }
http {
    map \$request_uri \$soak_kind {
        ~^/3/device/ apns;
        ~^/v1/projects/ fcm;
        ~^/token oauth;
        default other;
    }
    log_format soak '\$soak_kind \$status';
    access_log $sink/logs/access.log soak buffer=16k flush=1s;
    keepalive_requests 100000000;
    http2_max_concurrent_streams 1000;
    client_body_buffer_size 16k;
    client_body_temp_path $sink/tmp;
    proxy_temp_path $sink/tmp;
    fastcgi_temp_path $sink/tmp;
    uwsgi_temp_path $sink/tmp;
    scgi_temp_path $sink/tmp;
    server {
        listen 127.0.0.1:$sink_port ssl http2;
        ssl_certificate $sink/server.pem;
        ssl_certificate_key $sink/server.key;
        root $sink/www;
        # Each location reads the whole body through the mirror (as bench/sink.sh explains: nginx closes
        # HTTP/2 connections that send bodies it discards), then answers from an internal location.
        location ~ ^/3/device/[0-9a-f]*dead\$ {
            rewrite ^ /sink break;
            mirror /_read;
            mirror_request_body on;
            error_page 405 =400 /_bad_token;
        }
        location /3/device/ {
            rewrite ^ /sink break;
            mirror /_read;
            mirror_request_body on;
            error_page 405 =200 /_apns;
        }
        location /v1/projects/ {
            rewrite ^ /sink break;
            mirror /_read;
            mirror_request_body on;
            error_page 405 =200 /_fcm;
        }
        location = /token {
            rewrite ^ /sink break;
            mirror /_read;
            mirror_request_body on;
            error_page 405 =200 /_token;
        }
        location = /_read { internal; return 204; }
        location = /_apns { internal; add_header apns-id \$request_id always; return 200; }
        location = /_bad_token {
            internal;
            default_type application/json;
            add_header apns-id \$request_id always;
            return 400 '{"reason":"BadDeviceToken"}';
        }
        location = /_fcm { internal; default_type application/json; return 200 '{"name":"projects/soak/messages/\$request_id"}'; }
        location = /_token {
            internal;
            default_type application/json;
            return 200 '{"access_token":"soak-\$request_id","expires_in":3600,"token_type":"Bearer"}';
        }
    }
}
CONF
nginx -c "$sink/nginx.conf" -p "$sink" 2> >(grep -v 'the "listen ... http2" directive is deprecated' >&2)

# Provider credentials: an APNs .p8 key and an FCM service account whose token_uri is the stand-in.
openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/fcm.pem" 2>/dev/null
python3 - "$work/fcm.pem" "https://127.0.0.1:$sink_port/token" > "$work/firebase.json" <<'PY'
import json, sys
print(json.dumps({"type": "service_account", "project_id": "soak", "private_key_id": "soakkey01",
                  "private_key": open(sys.argv[1]).read(), "client_email": "soak@soak.iam.gserviceaccount.com",
                  "client_id": "1", "token_uri": sys.argv[2]}))
PY
chmod 600 "$work/AuthKey.p8" "$work/firebase.json" "$work/fcm.pem"

server_key=$(bench_key hsk_)
client_key=$(bench_key hck_)
if [ -n "$database" ]; then
    store_line="database: '$database'"
    secret_line="secret_key: $(openssl rand -base64 32)"
    db_probe=$database
else
    store_line="database: $work/herald.sqlite"
    if [ -n "${SOAK_SQLITE_FROM:-}" ]; then
        cp "$SOAK_SQLITE_FROM" "$work/herald.sqlite"
        cp "$SOAK_SQLITE_FROM.key" "$work/herald.sqlite.key"
    fi
    secret_line=""
    db_probe=$work/herald.sqlite
fi
cat > "$work/herald.yaml" <<YAML
server: {host: 127.0.0.1, port: 0}
$store_line
$secret_line
log: {level: warning}
apps: [soak]
app:
  soak:
    server_key: $server_key
    client_key: $client_key
    apns:
      key_file: $work/AuthKey.p8
      key_id: SOAKKEY001
      team_id: SOAKTEAM01
      topic: com.example.herald.soak
      url: https://127.0.0.1:$sink_port
      ca_file: $sink/ca.pem
    fcm:
      service_account_file: $work/firebase.json
      url: https://127.0.0.1:$sink_port
      ca_file: $sink/ca.pem
    home_assistant: {relay: true, max_per_day: 1000000}
    argus: {public_base_url: "http://127.0.0.1"}
engine: ${SOAK_ENGINE:-"{}"}
YAML
chmod 600 "$work/herald.yaml"

bench_serve "$work/herald.yaml" "$work/serve.log"
port=${url##*:}
port=${port%%/*}
# The store as written out: a database URL without its user and password (a password is never written out).
store=sqlite
[ -z "$database" ] || store="postgres $(sed -E 's#//[^/@]*@#//#' <<<"$database")"
echo "== herald $($herald --version 2>/dev/null || echo '') pid $server_pid at $url; stand-in on :$sink_port; store $store"
echo "== soak: ${seconds}s at ${rate} req/s, samples every ${SOAK_INTERVAL:-10}s -> $out"
{
    echo "seconds=$seconds rate=$rate devices=${SOAK_DEVICES:-5000} users=${SOAK_USERS:-2000} channels=${SOAK_CHANNELS:-50}"
    echo "ws_clients=${SOAK_WS_CLIENTS:-40} interval=${SOAK_INTERVAL:-10} mix=${SOAK_MIX:-default} engine=${SOAK_ENGINE:-"{}"}"
    echo "herald=$herald ($(stat -c %y "$herald" 2>/dev/null)) commit=$(git rev-parse --short HEAD 2>/dev/null)"
    echo "store=$store started=$(date -u +%FT%TZ) load=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/run.txt"

traffic_status=0
"$python" bench/soak_traffic.py --url "$url" --server-key "$server_key" --client-key "$client_key" \
    --pid "$server_pid" --port "$port" --sink-port "$sink_port" --sink-log "$sink/logs/access.log" \
    --database "$db_probe" --seconds "$seconds" --rate "$rate" --csv "$out/soak.csv" \
    --summary "$out/summary.json" || traffic_status=$?
alive=1
kill -0 "$server_pid" 2>/dev/null || alive=0
echo "finished=$(date -u +%FT%TZ) herald_alive_at_end=$alive traffic_status=$traffic_status" >> "$out/run.txt"
bench_stop
if grep -qiE 'error|critical|fatal' "$work/serve.log"; then
    echo "== herald serve logged ($(grep -ciE 'error|critical|fatal' "$work/serve.log") lines; first 5, whole log in $out/serve.log):"
    grep -iE 'error|critical|fatal' "$work/serve.log" | head -5
fi
sed -n '1,200p' "$sink/logs/error.log" | grep -v 'listen ... http2' | head -5 > "$out/sink-errors.txt" || true

verdict=0
"$python" bench/soak_plot.py "$out/soak.csv" --png "$out/soak.png" --summary "$out/summary.json" \
    --devices "${SOAK_DEVICES:-5000}" --max-error-rate "${SOAK_MAX_ERROR_RATE:-0.001}" | tee "$out/verdict.txt" ||
    verdict=$?
if [ "$alive" = 0 ]; then
    echo "FAIL: herald serve exited during the soak (see $out/serve.log)" | tee -a "$out/verdict.txt"
    verdict=1
fi
if [ "$traffic_status" != 0 ]; then
    echo "FAIL: the traffic generator exited with $traffic_status" | tee -a "$out/verdict.txt"
    verdict=1
fi
echo "== output: $out (soak.csv, soak.png, verdict.txt, summary.json, serve.log, run.txt)"
exit "$verdict"
