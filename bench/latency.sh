#!/usr/bin/env bash
# The latency from an accepted send, and from an accepted AOVIS event, to the provider request:
#   1. builds the release `herald` and `herald-bench` (or takes BENCH_HERALD and the herald-bench beside it);
#   2. makes a throwaway CA and a certificate for 127.0.0.1 (bench/sink.sh certs), picks a free port for
#      the APNs stand-in and starts `herald serve` (fresh SQLite database, default engine settings) with its
#      APNs URL there;
#   3. runs `herald-bench latency`, which in one process (one monotonic clock) starts the APNs stand-in
#      (it notes when each request arrives and which send it carries), registers the devices and an AOVIS
#      camera with one owner, and sends at a fixed rate, open loop (each request starts at its scheduled
#      instant whatever the ones before it did): single-device `POST /v1/notifications`, then
#      `POST /api/internal/events`, a warm-up and then `seconds` of each.
# Prints per route p50/p90/p99/max of (provider receipt − accepted answer received), of (provider receipt −
# intended request start) and of (answer − intended start), the achieved rate and errors; target p99 ≤ 10 ms
# at 1,000/s.
# Usage: bench/latency.sh [rate=1000] [seconds=30]
# Environment: BENCH_HERALD=<herald binary> (herald-bench is taken from the same directory),
# BENCH_ROUTES ("send event"), BENCH_ENGINE (YAML flow mapping of engine settings to try, e.g.
# "{workers: 4}"), BENCH_DEVICES (installations registered, 100).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rate=${1:-1000}
seconds=${2:-30}

bench_need openssl:openssl python3:python3

if [ -n "${BENCH_HERALD:-}" ]; then
    herald=$BENCH_HERALD
    bench_binary=$(dirname "$BENCH_HERALD")/herald-bench
else
    echo "== building herald and herald-bench (release)"
    flock /tmp/herald-build.lock sh -c \
        'swift build -c release --product herald >/dev/null && swift build -c release --product herald-bench >/dev/null'
    bin=$(swift build -c release --show-bin-path)
    herald=$bin/herald
    bench_binary=$bin/herald-bench
fi

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
cat > "$work/herald.yaml" <<YAML
server: {host: 127.0.0.1, port: 0}
database: $work/herald.sqlite
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

routes=()
for route in ${BENCH_ROUTES:-send event}; do routes+=(--route "$route"); done
echo "== load: $(uptime)"
ticks=$(getconf CLK_TCK)
c0=$(awk '{print $14 + $15}' "/proc/$server_pid/stat")
t0=$(date +%s.%N)
"$bench_binary" latency --herald "$url" --server-key "$server_key" --sink-port "$sink_port" \
    --sink-certificate "$work/server.pem" --sink-key "$work/server.key" --rate "$rate" --seconds "$seconds" \
    --devices "${BENCH_DEVICES:-100}" "${routes[@]}"
c1=$(awk '{print $14 + $15}' "/proc/$server_pid/stat")
t1=$(date +%s.%N)
python3 -c "import sys; print(f'herald CPU: {($c1 - $c0) / $ticks:.1f} s over {$t1 - $t0:.0f} s ({($c1 - $c0) / $ticks / ($t1 - $t0) * 100:.0f} % of one core, set-up and warm-ups included)')"
echo "== load: $(uptime)"
if grep -qiE 'error|critical' "$work/serve.log"; then
    echo "== herald serve logged:"; grep -iE 'error|critical' "$work/serve.log" | head -5
fi
