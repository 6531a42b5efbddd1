#!/usr/bin/env bash
# The one-notification path against a peer: Herald's Matrix push gateway and Sygnal (the Matrix.org gateway,
# release 0.15.1 from ../shared/tools/sygnal/) in one run, on the same steps, against one sink.
#   1. builds the release `herald` and `herald-bench` (or takes BENCH_HERALD and the herald-bench beside it), and
#      Sygnal's virtual environment in .build/bench/sygnal-0.15.1 (pinned from its requirements.lock, Sygnal
#      installed from a copy of its source; reused while the lock is unchanged);
#   2. maps Apple's APNs host names to 127.0.0.1 in /etc/hosts for the run only (the file is restored on any
#      exit; the script refuses to start when it already maps them) and starts nginx on 127.0.0.1:443 as the
#      APNs sink (bench/sink.sh: HTTP/2, TLS with a throwaway CA, 200 with the request's apns-id echoed), which
#      logs each push's arrival time ($msec, milliseconds) with its body, whose `event_id` names the notify;
#   3. starts Sygnal (its APNs app on the sandbox host, trusting the CA, `h2` added to aioapns's ALPN by a
#      sitecustomize.py) and `herald serve` (a fresh SQLite database with `sqlite.synchronous: full`, the Matrix
#      app id routed to APNs at the sink, `new_pushkeys_per_minute` raised for the warm-up), both logging at
#      warning, and warms each up with one notify per pushkey (Herald registers pushkeys on first use);
#   4. per rate, for each gateway still rising (Sygnal first): `herald-bench notify` sends one-device notifies
#      open loop (request n at start + n/rate, whatever happened before; the pushkeys in turn, a unique event id
#      each) for the step's seconds and reads the gateway's CPU time (utime + stime in /proc/<pid>/stat) from
#      the first scheduled request to 1 s after the last answer; bench/peer_summary.py matches the requests with
#      the sink's log and prints the step: offered and accepted rate, pushes at the sink, CPU per accepted
#      notify, p50/p99 from scheduled send to arrival. A step passes when every notify is accepted, every push
#      is at the sink within 1 s of the step's end, and the p99 is at most 100 ms; a gateway that fails a step
#      stops rising (but still runs the 800/s step, the rate of the CPU ratio, if it had not reached it);
#   5. prints the table of both, the ratios per rate, each gateway's capacity (its last passing step before its
#      first failing one), the
#      two ratios issue 53 sets goals for (Herald's CPU per notify over Sygnal's at 800/s, Herald's capacity
#      over Sygnal's) and how many accepted notifies never reached the sink by the end of the run.
# Needs root (the hosts file, port 443), nginx, openssl and python3 (3.11, as Sygnal's lock was made with).
# Usage: bench/peer-sygnal.sh [--seconds S] [--rates "400 800 1100 ..."] [--pushkeys N]
# Environment: BENCH_HERALD=<herald binary> (herald-bench is taken from the same directory), BENCH_SYGNAL=<dir>
# (Sygnal's source and lock, as ../shared/tools/sygnal holds them), BENCH_KEEP=1 keeps the work directory (logs,
# the sink's arrivals, each step's requests) and prints where it is; BENCH_PERF=<perf.data> samples Herald with
# `perf record -g` (BENCH_PERF_FREQ per second, 499 by default) during its 800/s step.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

seconds=15
rates="400 800 1100 1400 1700 2000 2400 2800 3200 3600"
pushkeys=1000
while (($#)); do
    case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --pushkeys) pushkeys=$2; shift 2 ;;
    *) echo "usage: bench/peer-sygnal.sh [--seconds S] [--rates \"400 800 ...\"] [--pushkeys N]" >&2; exit 2 ;;
    esac
done

for rate in $rates; do
    [[ $rate =~ ^[1-9][0-9]*$ ]] || { echo "rates are whole numbers per second, rising: $rates" >&2; exit 2; }
done

apple_hosts=(api.push.apple.com api.development.push.apple.com)
hosts_file=/etc/hosts
sygnal_source=${BENCH_SYGNAL:-../shared/tools/sygnal}
app_id=im.example.peer.ios
topic=com.example.herald

if [ "$(id -u)" != 0 ]; then
    echo "bench/peer-sygnal.sh needs root: it maps Apple's hosts in $hosts_file and listens on port 443" >&2
    exit 1
fi
if grep -qE '(^|[[:space:]])api(\.development)?\.push\.apple\.com([[:space:]]|$)' "$hosts_file"; then
    echo "$hosts_file already maps Apple's APNs hosts: refusing to run (another run, or a mapping of yours)" >&2
    exit 1
fi
if [ ! -f "$sygnal_source/requirements.lock" ]; then
    echo "Sygnal's source is not at $sygnal_source (../shared/tools/sygnal/ beside the repository, or BENCH_SYGNAL)" >&2
    exit 1
fi
bench_need openssl:openssl python3:python3 nginx:nginx

bench_binaries

# Sygnal's environment, pinned by its lock; rebuilt when the lock changes.
venv=.build/bench/sygnal-0.15.1
lock_sum=$(sha256sum "$sygnal_source/requirements.lock" | cut -d' ' -f1)
if [ "$(cat "$venv/.lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
    echo "== making Sygnal's environment in $venv"
    rm -rf "$venv"
    mkdir -p .build/bench
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r "$sygnal_source/requirements.lock"
    # pip builds in the source directory, and shared/ is read-only: install from a copy.
    source_copy=$(mktemp -d)
    cp -r "$sygnal_source/src/." "$source_copy"
    "$venv/bin/pip" install -q --no-deps "$source_copy"
    rm -rf "$source_copy"
    echo "$lock_sum" > "$venv/.lock-sha256"
fi

work=$(mktemp -d)
server_pid=""
sygnal_pid=""
hosts_saved=""
cleanup() {
    bench_is_main || return 0
    if [ -n "$hosts_saved" ]; then
        # Written back in place (a container's /etc/hosts is a mount: it cannot be replaced by a rename).
        cat "$hosts_saved" > "$hosts_file"
        hosts_saved=""
    fi
    bench_stop
    if [ -n "$sygnal_pid" ]; then kill "$sygnal_pid" 2>/dev/null || true; wait "$sygnal_pid" 2>/dev/null || true; fi
    bench/sink.sh stop "$work"
    if [ -n "${BENCH_KEEP:-}" ]; then
        echo "== kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The sink: nginx on 127.0.0.1:443 answering like APNs, its certificate naming Apple's hosts, logging arrivals.
SINK_ARRIVALS=1 bench/sink.sh start "$work" 443 "${apple_hosts[@]}"

# The copy is complete before the trap may write it back.
cp "$hosts_file" "$work/hosts.saved"
hosts_saved=$work/hosts.saved
{
    echo "# bench/peer-sygnal.sh (removed when it exits)"
    for host in "${apple_hosts[@]}"; do echo "127.0.0.1 $host"; done
} >> "$hosts_file"

openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Sygnal, as its README in ../shared/tools/sygnal says.
sygnal_port=$(free_port)
mkdir -p "$work/sygnal-site"
cat > "$work/sygnal-site/sitecustomize.py" <<'PY'
# aioapns offers no ALPN protocol and nginx refuses HTTP/2 without one: client contexts offer h2.
import ssl

_create_default_context = ssl.create_default_context


def create_default_context(purpose=ssl.Purpose.SERVER_AUTH, *args, **kwargs):
    context = _create_default_context(purpose, *args, **kwargs)
    if purpose == ssl.Purpose.SERVER_AUTH:
        context.set_alpn_protocols(["h2"])
    return context


ssl.create_default_context = create_default_context
PY
cat > "$work/sygnal.yaml" <<YAML
log:
  setup:
    version: 1
    formatters:
      normal: {format: "%(asctime)s [%(process)d] %(levelname)-5s %(name)s %(message)s"}
    handlers:
      stderr: {class: logging.StreamHandler, formatter: normal, stream: "ext://sys.stderr"}
    loggers:
      sygnal.access: {propagate: false, handlers: [stderr], level: WARNING}
      sygnal: {propagate: false, handlers: [stderr], level: WARNING}
    root: {handlers: [stderr], level: WARNING}
    disable_existing_loggers: false
  access: {x_forwarded_for: false}
http: {bind_addresses: ['127.0.0.1'], port: $sygnal_port}
apps:
  $app_id:
    type: apns
    keyfile: $work/AuthKey.p8
    key_id: BENCHKEY01
    team_id: BENCHTEAM1
    topic: $topic
    platform: sandbox
    convert_device_token_to_hex: false
YAML
RUN_DESPITE_UNSUPPORTED=Y SYGNAL_CONF="$work/sygnal.yaml" SSL_CERT_FILE="$work/ca.pem" \
    PYTHONPATH="$work/sygnal-site" "$venv/bin/python" -m sygnal.sygnal > "$work/sygnal.log" 2>&1 &
sygnal_pid=$!

# Herald.
cat > "$work/herald.yaml" <<YAML
server: {host: 127.0.0.1, port: 0}
database: $work/herald.sqlite
sqlite: {synchronous: full}
log: {level: warning}
apps: [peer]
app:
  peer:
    server_key: $(bench_key hsk_)
    client_key: $(bench_key hck_)
    apns:
      key_file: $work/AuthKey.p8
      key_id: BENCHKEY01
      team_id: BENCHTEAM1
      topic: $topic
      url: https://127.0.0.1:443
      ca_file: $work/ca.pem
    matrix:
      app_ids: [$app_id=apns]
      new_pushkeys_per_minute: 100000
YAML
# The log exists before the server opens it: bench_serve reads it at once.
: > "$work/serve.log"
bench_serve "$work/herald.yaml" "$work/serve.log"
herald_url=$url

sygnal_url=http://127.0.0.1:$sygnal_port
sygnal_listens() { python3 -c "import socket; socket.create_connection(('127.0.0.1', $sygnal_port), 1)" 2>/dev/null; }
for _ in $(seq 300); do
    sygnal_listens && break
    kill -0 "$sygnal_pid" 2>/dev/null || break
    sleep 0.1
done
if ! sygnal_listens; then
    echo "Sygnal did not start:" >&2
    cat "$work/sygnal.log" >&2
    exit 1
fi

# The same pushkeys for both: 64 hex digits, a random prefix per run and the index.
pushkey_prefix=$(head -c 28 /dev/urandom | od -An -tx1 | tr -d ' \n')
run=$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
gateway_url() { if [ "$1" = herald ]; then echo "$herald_url"; else echo "$sygnal_url"; fi; }
gateway_pid() { if [ "$1" = herald ]; then echo "$server_pid"; else echo "$sygnal_pid"; fi; }

# notify GATEWAY NAME RATE [herald-bench notify options...]: one schedule; its JSON line goes to NAME.json.
notify() {
    local gateway=$1 name=$2 rate=$3
    shift 3
    "$bench_binary" notify --url "$(gateway_url "$gateway")" --app-id "$app_id" --pushkeys "$pushkeys" \
        --pushkey-prefix "$pushkey_prefix" --event-prefix "\$$run-$name" --rate "$rate" \
        --pid "$(gateway_pid "$gateway")" --out "$work/$name.tsv" "$@" > "$work/$name.json"
}

echo "== load: $(uptime)"
if awk -v cores="$(nproc)" '{ exit !($1 > cores) }' /proc/loadavg; then
    echo "== the machine is busy (load average above its $(nproc) cores): these figures are not for the record"
fi
for gateway in sygnal herald; do
    # One notify per pushkey (Herald registers each on first use), at a rate both keep up with.
    notify "$gateway" "warm-$gateway" 200 --count "$pushkeys"
    if ! grep -q "\"accepted\":${pushkeys}[,}]" "$work/warm-$gateway.json"; then
        echo "$gateway's warm-up was not accepted whole: $(cat "$work/warm-$gateway.json")" >&2
        tail -5 "$work/$gateway.log" "$work/serve.log" 2>/dev/null >&2 || true
        exit 1
    fi
done
echo "== warmed up: $pushkeys pushkeys each; steps of $seconds s at $rates per s"

# The rate the CPU ratio is read at runs for both gateways even past a capacity (it does not count for one).
cpu_rate=800
rising=" sygnal herald "
for rate in $rates; do
    for gateway in sygnal herald; do
        [[ $rising == *" $gateway "* || $rate == "$cpu_rate" ]] || continue
        name=$gateway-$rate
        perf_pid=""
        if [ -n "${BENCH_PERF:-}" ] && [ "$gateway" = herald ] && [ "$rate" = "$cpu_rate" ]; then
            # Samples Herald during its step at the CPU ratio's rate (BENCH_PERF names the perf.data file).
            perf record -F "${BENCH_PERF_FREQ:-499}" -g -o "$BENCH_PERF" -p "$server_pid" >/dev/null 2>&1 &
            perf_pid=$!
        fi
        notify "$gateway" "$name" "$rate" --seconds "$seconds"
        if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
        # What the sink's log buffer holds by now (flushed every 100 ms) and a late push's last chance.
        sleep 1
        if ! python3 bench/peer_summary.py step "$gateway" "$rate" "$seconds" "$work/$name.tsv" "$work/$name.json" \
            "$work/logs/arrivals.log" "$work/steps.jsonl"; then
            rising=${rising/ $gateway / }
        fi
    done
    if [ -z "${rising// /}" ] && [[ " $rates " != *" $cpu_rate "* || $rate -ge $cpu_rate ]]; then break; fi
done
echo "== load: $(uptime)"
# The last step's late pushes, if any, have a few more seconds to come before lost ones are counted.
sleep 3
python3 bench/peer_summary.py table "$work/steps.jsonl" "$work/logs/arrivals.log"
for log in "$work/serve.log" "$work/sygnal.log"; do
    if grep -qiE 'error|critical|traceback' "$log"; then
        echo "== $(basename "$log") logged:"; grep -iE 'error|critical|traceback' "$log" | head -5
    fi
done
