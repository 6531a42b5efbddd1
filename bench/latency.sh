#!/usr/bin/env bash
# The one-notification path: latency from an accepted send, and from an accepted AOVIS event, to the
# provider request, and the capacity within a p99 bound.
#   1. builds the release `herald` and `herald-bench` (or takes BENCH_HERALD and the herald-bench beside it);
#   2. makes a throwaway CA and a certificate for 127.0.0.1 (bench/sink.sh certs), picks a free port for
#      the APNs stand-in and starts `herald serve` (fresh SQLite database with `sqlite.synchronous: full`,
#      or the PostgreSQL database given, default engine settings) with its APNs URL there;
#   3. runs `herald-bench latency`, which in one process (one monotonic clock) starts the APNs stand-in
#      (it notes when each request arrives and which notification it carries), registers 5,000 users with
#      two iOS devices each and 1,000 AOVIS cameras (camera n owned by user n, whose second device's
#      preferences filter the cameras' vehicle events out), and sends open loop (each request starts at its
#      scheduled instant whatever the ones before it did): single-device `POST /v1/notifications` to the
#      10,000 installations in turn, then `POST /api/internal/events` from the 1,000 cameras in turn.
# Without a rate it searches each route's capacity: steps of 20 s at fixed rates (rising by half while
# they pass, then halving the gap), a step passing when every request is accepted, every one reaches the
# provider no later than one second after the step, and the p99 of (provider receipt - accepted answer)
# is at most 10 ms. Each step prints its percentiles and Herald's CPU time per notification over the
# step only (set-up excluded), against Herald's CPU per `GET /healthz` sent at the same rate for 5 s after
# the step (the HTTP floor), and the benchmark's own CPU per request; the last lines give each route's
# capacity. With a rate it runs that one.
# Usage: bench/latency.sh [--database postgres://...] [rate [seconds]]
# Environment: BENCH_HERALD=<herald binary> (herald-bench is taken from the same directory),
# BENCH_ROUTES ("send event"), BENCH_ENGINE (YAML flow mapping of engine settings to try, e.g.
# "{workers: 4}"), BENCH_ARGS (more herald-bench latency options, e.g. "--p99 20 --start-rate 500"),
# BENCH_PERF (a perf.data path: `perf record -g` samples the server while it is measured).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
database=""
if [ "${1:-}" = "--database" ]; then
    database=$2
    shift 2
fi
rate=${1:-}
seconds=${2:-20}

bench_need openssl:openssl python3:python3

bench_binaries

work=$(mktemp -d)
server_pid=""
cleanup() {
    bench_is_main || return 0
    bench_stop
    rm -rf "$work"
}
trap cleanup EXIT
bench/sink.sh certs "$work"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
sink_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
server_key=$(bench_key hsk_)
engine=${BENCH_ENGINE:-"{}"}
if [ -n "$database" ]; then
    # A shared database needs the key of tokens at rest in the configuration (every node the same).
    store="database: $database
secret_key: $(openssl rand -base64 32)"
else
    store="database: $work/herald.sqlite
sqlite: {synchronous: full}"
fi
cat > "$work/herald.yaml" <<YAML
server: {host: 127.0.0.1, port: 0}
$store
log: {level: warning}
apps: [bench]
app:
  bench:
    server_key: $server_key
    client_key: $(bench_key hck_)
    apns:
      key_file: $work/AuthKey.p8
      key_id: BENCHKEY01
      team_id: BENCHTEAM1
      topic: com.example.herald
      url: https://127.0.0.1:$sink_port
      ca_file: $work/ca.pem
engine: $engine
YAML

bench_serve "$work/herald.yaml" "$work/serve.log"

args=()
for route in ${BENCH_ROUTES:-send event}; do args+=(--route "$route"); done
[ -n "$rate" ] && args+=(--rate "$rate")
echo "== load: $(uptime)"
perf_pid=""
if [ -n "${BENCH_PERF:-}" ]; then
    # Samples the server while it is measured (BENCH_PERF names the perf.data file to write).
    perf record -F "${BENCH_PERF_FREQ:-499}" -g -o "$BENCH_PERF" -p "$server_pid" >/dev/null 2>&1 &
    perf_pid=$!
fi
# shellcheck disable=SC2086
"$bench_binary" latency --herald "$url" --server-key "$server_key" --herald-pid "$server_pid" \
    --sink-port "$sink_port" --sink-certificate "$work/server.pem" --sink-key "$work/server.key" \
    --seconds "$seconds" "${args[@]}" ${BENCH_ARGS:-}
if [ -n "$perf_pid" ]; then kill -INT "$perf_pid" 2>/dev/null || true; wait "$perf_pid" 2>/dev/null || true; fi
echo "== load: $(uptime)"
if grep -qiE 'error|critical' "$work/serve.log"; then
    echo "== herald serve logged:"; grep -iE 'error|critical' "$work/serve.log" | head -5
fi
