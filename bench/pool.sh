#!/usr/bin/env bash
# Herald's APNs pool against the machine's ceiling, in one run:
#   1. installs nginx-light and nghttp2-client when missing;
#   2. starts nginx as an HTTP/2 TLS sink on 127.0.0.1 that answers like APNs (bench/sink.sh);
#   3. measures the ceiling with h2load: same ~350-byte body, same connections, 100 streams each;
#   4. drives the same number of notifications through the release build of Herald's APNs client
#      and pool (herald-bench) and prints both rates, the ratio and Herald's CPU per 1,000.
# Usage: bench/pool.sh [notifications=200000] [connections=2]
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-200000}
connections=${2:-2}
port=${BENCH_PORT:-18443}

need=()
command -v nginx >/dev/null 2>&1 || need+=(nginx-light)
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
if ((${#need[@]})); then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

echo "== building herald-bench (release)"
flock /tmp/herald-build.lock swift build -c release --product herald-bench >/dev/null
bench_binary=$(swift build -c release --show-bin-path)/herald-bench

work=$(mktemp -d)
trap 'bench/sink.sh stop "$work"; rm -rf "$work"' EXIT
bench/sink.sh start "$work" "$port"
sleep 0.5

# The same alert herald-bench sends (a camera event with a deep link), for h2load.
cat > "$work/body.json" <<'JSON'
{"aps":{"alert":{"body":"A silver sedan pulled into the driveway and parked near the garage door.","title":"Vehicle detected at Front Door"},"mutable-content":1,"sound":"default"},"cloudEventId":"018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","deepLink":"aovis://event/018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","deviceId":"aovis-n4k-7f3a9c","eventType":"vehicle"}
JSON
token=$(printf 'ab%.0s' $(seq 32))

echo "== ceiling: h2load, $count requests, $connections connections x 100 streams"
h2load_out=$(h2load -n "$count" -c "$connections" -m 100 -d "$work/body.json" \
    -H 'apns-topic: com.example.herald' -H 'apns-push-type: alert' -H 'apns-priority: 10' \
    "https://127.0.0.1:$port/3/device/$token")
echo "$h2load_out" | grep -E 'finished in|status codes'
ceiling=$(echo "$h2load_out" | sed -n 's/.*finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p')

echo "== herald: $count notifications through the APNs client and HTTP/2 pool"
herald_out=$("$bench_binary" pool --port "$port" --ca "$work/ca.pem" --count "$count" --connections "$connections" \
    --concurrency $((connections * 1000)))
echo "$herald_out"
rate=$(echo "$herald_out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rate"])')
cpu=$(echo "$herald_out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_seconds_per_1000"])')
python3 - "$ceiling" "$rate" "$cpu" <<'PY'
import sys
ceiling, rate, cpu = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print(f"ceiling (h2load): {ceiling:,.0f} req/s")
print(f"herald pool:      {rate:,.0f} notifications/s")
print(f"ratio:            {rate / ceiling:.2f}")
print(f"herald CPU:       {cpu:.3f} s per 1,000 notifications")
PY
