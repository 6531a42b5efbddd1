#!/usr/bin/env bash
# The registration API's rate against the same binary's trivial route, in one run:
#   1. installs wrk when missing; builds the release `herald` (or takes BENCH_HERALD);
#   2. starts `herald serve` on a fresh SQLite database (the default store, durable as configured by
#      default: every registration committed before its answer);
#   3. runs wrk against `GET /healthz`, then against `POST /v1/installations` (bench/register.lua: a
#      new 64-hex APNs token per request, the client key as an app sends it), then `/healthz` again;
#   4. stops the server, counts the installations with `herald export` and checks the count against
#      the 201s wrk saw (a request still in flight when wrk stopped may have been committed unanswered).
# Prints both rates, the ratio (registrations / the mean of the two /healthz runs; target ≥ 0.3) and
# Herald's CPU seconds per 1,000 registrations.
# Usage: bench/register.sh [seconds=30] [connections=64]
# (64: a registration spends longer between the event loop, the executor and SQLite's writer than
# /healthz does, so 32 in flight leave the cores partly idle; both routes are measured with the same count.)
# Environment: BENCH_HERALD=<binary> (a release build made elsewhere), BENCH_THREADS (wrk threads, 2).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
seconds=${1:-30}
connections=${2:-64}
threads=${BENCH_THREADS:-2}

bench_need wrk:wrk python3:python3

bench_herald

work=$(mktemp -d)
server_pid=""
cleanup() {
    bench_is_main || return 0
    bench_stop
    rm -rf "$work"
}
trap cleanup EXIT
server_key=$(bench_key hsk_)
client_key=$(bench_key hck_)
cat > "$work/herald.yaml" <<YAML
server: {host: 127.0.0.1, port: 0}
database: $work/herald.sqlite
log: {level: warning}
apps: [bench]
app:
  bench:
    server_key: $server_key
    client_key: $client_key
YAML

bench_serve "$work/herald.yaml" "$work/serve.log"
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }

healthz() {
    echo "== GET /healthz ($1): wrk, ${seconds}s, $connections connections, $threads threads" >&2
    local out c0 c1 requests
    c0=$(cpu)
    out=$(wrk -t "$threads" -c "$connections" -d "${seconds}s" "$url/healthz")
    c1=$(cpu)
    echo "$out" | grep -E 'Requests/sec|Non-2xx|Socket errors' >&2 || true
    requests=$(echo "$out" | sed -n 's/^ *\([0-9]*\) requests in.*/\1/p')
    # The rate, then Herald's CPU seconds per 1,000 requests.
    echo "$(echo "$out" | sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p') $(((c1 - c0) * 1000000 / ticks / requests))"
}
# A short warm-up of both routes (connections, caches, the first SQLite pages).
wrk -t 1 -c 4 -d 2s "$url/healthz" >/dev/null
healthz_before=$(healthz before)

echo "== POST /v1/installations: wrk, ${seconds}s, $connections connections, $threads threads"
c0=$(cpu)
register_out=$(wrk -t "$threads" -c "$connections" -d "${seconds}s" --latency -s bench/register.lua "$url/v1/installations" -- "$client_key")
c1=$(cpu)
echo "$register_out" | grep -E 'Requests/sec|Non-2xx|Socket errors|requests in|^ +(50|99)%|^register:'
register_rate=$(echo "$register_out" | sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p')
counts=$(echo "$register_out" | sed -n 's/^register: //p')
healthz_after=$(healthz after)

bench_stop
installations=$("$herald" export --config "$work/herald.yaml" --app bench | wc -l)

python3 - $healthz_before $healthz_after "$register_rate" "$c0" "$c1" "$ticks" "$installations" $counts <<'PY'
import sys
before, before_cpu, after, after_cpu, rate = (float(x) for x in sys.argv[1:6])
c0, c1, ticks, installations = (int(x) for x in sys.argv[6:10])
counts = dict(pair.split("=") for pair in sys.argv[10:])
sent, created, updated, other = (int(counts[k]) for k in ("sent", "created", "updated", "other"))
unanswered = sent - created - updated - other
ceiling = (before + after) / 2
print(f"GET /healthz:            {ceiling:,.0f} req/s (before {before:,.0f}, after {after:,.0f})")
print(f"POST /v1/installations:  {rate:,.0f} req/s")
print(f"ratio:                   {rate / ceiling:.2f} (target >= 0.3)")
answered = created + updated + other
print(f"herald CPU:              {(c1 - c0) / ticks / answered * 1000:.3f} s per 1,000 registrations, "
      f"{(before_cpu + after_cpu) / 2 / 1000:.3f} s per 1,000 /healthz")
print(f"responses:               {created:,} created (201), {updated:,} updated (200), {other:,} other; "
      f"{unanswered} unanswered when wrk stopped")
ok = created <= installations <= created + unanswered and updated == 0
print(f"installations stored:    {installations:,} ({'matches' if ok else 'DOES NOT match'} the 201s"
      + (f" + {installations - created} committed but unanswered" if ok and installations > created else "") + ")")
sys.exit(0 if ok and other == 0 else 1)
PY
