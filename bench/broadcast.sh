#!/usr/bin/env bash
# One broadcast to every installation, through Herald's engine and APNs pool, against the nginx sink:
#   1. installs nginx-light and nghttp2-client when missing; starts the sink (bench/sink.sh);
#   2. builds the release `herald`, writes N installations as JSON Lines and bulk-imports them
#      (`herald import`), timing it;
#   3. measures the ceiling with h2load (same body size, same connections, 100 streams each);
#   4. starts `herald serve` with the sink as its APNs host, sends one notification to `all`, and
#      waits for `done`; stops the server and measures the ceiling again;
#   5. prints notifications/s, the ratio to the mean of the two ceilings (and to each), Herald's CPU
#      seconds per 1,000 notifications, its peak RSS, bytes written and the time to `done`.
# Usage: bench/broadcast.sh [installations=1000000] [connections=2]
# Environment: BENCH_PAGE_SIZE (engine.page_size, default 2000), BENCH_PERF=<file> (perf record the server while it sends),
# BENCH_HERALD=<binary> (use that release build instead of building one), BENCH_DEAD_PERCENT (that share of the
# tokens is answered 410 Unregistered, default 0), BENCH_WEBHOOK=1 (a webhook endpoint subscribed to every event,
# at the sink's receiver: the run also waits for every event to arrive, and says how long after `done`),
# BENCH_TEMPLATE=shared|recipient (the same words from a template, docs/content.md: `shared` renders once per
# page, `recipient` names each device's profile, so each device is rendered and read on its own).
set -euo pipefail
# Files made here hold keys: owner-only, as herald serve requires of a config file with secrets.
umask 077
cd "$(dirname "$0")/.."
count=${1:-1000000}
connections=${2:-2}
port=${BENCH_PORT:-18443}
http_port=${BENCH_HTTP_PORT:-18080}

need=()
command -v nginx >/dev/null 2>&1 || need+=(nginx-light)
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v curl >/dev/null 2>&1 || need+=(curl)
if ((${#need[@]})); then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

. bench/lib.sh
bench_herald  # BENCH_HERALD: a release binary built elsewhere (A/B runs of two versions)

work=$(mktemp -d)
server_pid=""
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; bench/sink.sh stop "$work"; rm -rf "$work"' EXIT
bench/sink.sh start "$work" "$port"
sleep 0.5

openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
cat > "$work/herald.yaml" <<YAML
server: {host: 127.0.0.1, port: $http_port}
database: $work/herald.sqlite
log: {level: warning}
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
YAML
if [ -n "${BENCH_WEBHOOK:-}" ]; then
    cat >> "$work/herald.yaml" <<YAML
webhooks: {allow_http: true, allow_networks: ["127.0.0.1/32"]}
YAML
    # app.default.webhooks, under the app's existing mapping.
    python3 - "$work/herald.yaml" "$((port + 1))" <<'PY'
import base64, os, sys
path, port = sys.argv[1], sys.argv[2]
text = open(path).read().replace("app:\n  default:\n", "app:\n  default:\n    webhooks: [bench]\n    webhook:\n      bench:\n"
    f"        url: http://127.0.0.1:{port}/hook\n        events: ['*']\n"
    f"        secret: whsec_{base64.b64encode(os.urandom(32)).decode()}\n", 1)
open(path, "w").write(text)
PY
fi

echo "== importing $count installations"
python3 - "$count" "${BENCH_DEAD_PERCENT:-0}" > "$work/devices.jsonl" <<'PY'
import os, sys
n, dead = int(sys.argv[1]), float(sys.argv[2])
out = sys.stdout
every = int(100 / dead) if dead > 0 else 0
for i in range(n):
    # Every (100/dead)-th token starts "dead": the sink answers it 410 Unregistered.
    token = ("dead" + os.urandom(30).hex()) if every and i % every == 0 else os.urandom(32).hex()
    out.write('{"platform":"ios","token":"%s","user_id":"u%d"}\n' % (token[:64], i))
PY
import_start=$(date +%s.%N)
"$herald" import "$work/devices.jsonl" --config "$work/herald.yaml"
import_end=$(date +%s.%N)

cat > "$work/body.json" <<'JSON'
{"aps":{"alert":{"body":"A silver sedan pulled into the driveway and parked near the garage door.","title":"Vehicle detected at Front Door"},"mutable-content":1,"sound":"default"},"deep_link":"aovis://event/018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","cloudEventId":"018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","deviceId":"aovis-n4k-7f3a9c","eventType":"vehicle"}
JSON
token=$(printf 'ab%.0s' $(seq 32))
ceiling_count=$((count < 200000 ? count : 200000))
# The ceiling is measured before and after the broadcast: this VM's speed drifts within minutes,
# and the ratio is taken against the mean of the two.
measure_ceiling() {
    echo "== ceiling ($1): h2load, $ceiling_count requests, $connections connections x 100 streams" >&2
    local out
    out=$(h2load -n "$ceiling_count" -c "$connections" -m 100 -d "$work/body.json" \
        -H 'apns-topic: com.example.herald' -H 'apns-push-type: alert' -H 'apns-priority: 10' \
        "https://127.0.0.1:$port/3/device/$token")
    echo "$out" | grep -E 'finished in|status codes' >&2
    echo "$out" | sed -n 's/.*finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p'
}
ceiling=$(measure_ceiling before)

echo "== broadcast to all through herald serve"
"$herald" serve --config "$work/herald.yaml" > "$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do grep -q "server key:" "$work/serve.log" 2>/dev/null && break; sleep 0.1; done
key=$(sed -n 's/^server key: //p' "$work/serve.log")
# The key is printed before the listener is up: send only once it answers /readyz.
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$http_port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
cpu() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
ticks=$(getconf CLK_TCK)
written() { awk '/^write_bytes/ {print $2}' "/proc/$server_pid/io"; }
cpu_before=$(cpu)
written_before=$(written)
perf_pid=""
if [ -n "${BENCH_PERF:-}" ]; then
    # Samples the server during the broadcast (BENCH_PERF names the perf.data file to write).
    perf record -F ${BENCH_PERF_FREQ:-499} -g -o "$BENCH_PERF" -p "$server_pid" >/dev/null 2>&1 &
    perf_pid=$!
fi
send='{"target":{"all":true},"payload":{"title":"Vehicle detected at Front Door","body":"A silver sedan pulled into the driveway and parked near the garage door.","sound":"default","mutable_content":true,"deep_link":"aovis://event/018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","data":{"cloudEventId":"018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","deviceId":"aovis-n4k-7f3a9c","eventType":"vehicle"}}}'
if [ -n "${BENCH_TEMPLATE:-}" ]; then
    # The same words from a template (saved before the clock starts); `recipient` adds the device's id.
    greeting=""; [ "$BENCH_TEMPLATE" = recipient ] && greeting=" ({{recipient.installation_id}})"
    curl -sf -X PUT -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
        -d '{"title":"Vehicle detected at {{camera}}","body":"A {{color}} {{kind}} pulled into the driveway and parked near the garage door.'"$greeting"'"}' \
        "http://127.0.0.1:$http_port/v1/templates/vehicle" >/dev/null
    send='{"target":{"all":true},"template":{"name":"vehicle","variables":{"camera":"Front Door","color":"silver","kind":"sedan"}},"payload":{"sound":"default","mutable_content":true,"deep_link":"aovis://event/018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","data":{"cloudEventId":"018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b","deviceId":"aovis-n4k-7f3a9c","eventType":"vehicle"}}}'
fi
start=$(date +%s.%N)
id=$(curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$send" \
    "http://127.0.0.1:$http_port/v1/notifications" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
# One long-lived poller (a process per poll would take CPU from the two cores being measured).
record=$(python3 - "http://127.0.0.1:$http_port/v1/notifications/$id" "$key" <<'PY'
import json, sys, time, urllib.request
request = urllib.request.Request(sys.argv[1], headers={"Authorization": "Bearer " + sys.argv[2]})
while True:
    with urllib.request.urlopen(request) as response:
        body = response.read().decode()
    if json.loads(body)["status"] in ("done", "failed", "expired", "canceled"):
        print(body)
        break
    time.sleep(0.1)
PY
)
end=$(date +%s.%N)
if [ -n "${BENCH_WEBHOOK:-}" ]; then
    # Every event the broadcast makes: one invalidation and one failed delivery per dead token, and the completion.
    invalid=$(echo "$record" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["invalid"])')
    expected=$((2 * invalid + 1))
    for _ in $(seq 600); do
        [ "$(sort -u "$work/logs/hooks.log" 2>/dev/null | grep -c .)" -ge "$expected" ] && break
        sleep 0.1
    done
    hooks_end=$(date +%s.%N)
    received=$(sort -u "$work/logs/hooks.log" 2>/dev/null | grep -c . || true)
    echo "webhooks:         $received distinct events of $expected expected, the last $(python3 -c "print(f'{$hooks_end - $end:.1f}')") s after done"
fi
cpu_after=$(cpu)
written_after=$(written)
[ -n "$perf_pid" ] && kill -INT "$perf_pid" && wait "$perf_pid" || true
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
server_pid=""
ceiling_after=$(measure_ceiling after)
echo "$record" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("status:", r["status"], "counts:", r["counts"])'
python3 - "$count" "$ceiling" "$ceiling_after" "$start" "$end" "$cpu_before" "$cpu_after" "$ticks" "$rss_kb" "$import_start" "$import_end" \
    "$written_before" "$written_after" <<'PY'
import sys
count, before, after, start, end, c0, c1, ticks, rss, i0, i1, w0, w1 = (float(x) for x in sys.argv[1:])
seconds = end - start
rate = count / seconds
print(f"import:           {count:,.0f} installations in {i1 - i0:.1f} s ({count / (i1 - i0):,.0f}/s)")
ceiling = (before + after) / 2
print(f"ceiling (h2load): {ceiling:,.0f} req/s (before {before:,.0f}, after {after:,.0f})")
print(f"herald broadcast: {rate:,.0f} notifications/s, done in {seconds:.1f} s")
print(f"ratio:            {rate / ceiling:.2f} (against before {rate / before:.2f}, after {rate / after:.2f})")
print(f"herald CPU:       {(c1 - c0) / ticks / count * 1000:.3f} s per 1,000 notifications")
print(f"peak RSS:         {rss / 1024:.0f} MB")
print(f"written to disk:  {(w1 - w0) / 2**20:,.0f} MiB ({(w1 - w0) / count:,.0f} bytes per notification)")
PY
