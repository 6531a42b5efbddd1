# Shared by bench/register.sh, bench/latency.sh and bench/peer-sygnal.sh (sourced, from the repository root).

# Files made here hold keys: owner-only, as herald serve requires of a config file with secrets.
umask 077

# The script's own shell: its EXIT trap must clean up there only. Bash has been seen to run the trap in
# a forked child too (about one start in five here), which removed the work directory under the server.
bench_shell=$BASHPID
bench_is_main() { [ "$BASHPID" = "$bench_shell" ]; }

# Installs the Debian packages of the commands that are missing: bench_need COMMAND:PACKAGE...
bench_need() {
    local need=() pair
    for pair in "$@"; do command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}"); done
    if ((${#need[@]})); then
        local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
    fi
}

# A random API key with a prefix: bench_key hsk_
bench_key() { echo "$1bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }

# Starts `$herald serve --config CONFIG` (port 0) logging to LOG, waits until it listens, and sets
# server_pid and url (the caller's EXIT trap stops server_pid): bench_serve CONFIG LOG
bench_serve() {
    "$herald" serve --config "$1" > "$2" 2>&1 &
    server_pid=$!
    url=""
    for _ in $(seq 300); do
        url=$(sed -n 's/^Herald is listening on \(http[^ ]*\).*/\1/p' "$2")
        [ -n "$url" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "herald serve did not start" >&2
    cat "$2" >&2
    exit 1
}

# Stops the server bench_serve started, if it runs.
bench_stop() {
    if [ -n "${server_pid:-}" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    server_pid=""
}

# Sets herald: BENCH_HERALD, or the release build (built under the global build lock).
bench_herald() {
    if [ -n "${BENCH_HERALD:-}" ]; then
        herald=$BENCH_HERALD
    else
        echo "== building herald (release)"
        flock /tmp/herald-build.lock swift build -c release --product herald >/dev/null
        herald=$(swift build -c release --show-bin-path)/herald
    fi
}

# Sets herald and bench_binary: BENCH_HERALD and the herald-bench beside it, or the release builds of both (built
# under the global build lock).
bench_binaries() {
    if [ -n "${BENCH_HERALD:-}" ]; then
        herald=$BENCH_HERALD
        bench_binary=$(dirname "$BENCH_HERALD")/herald-bench
    else
        echo "== building herald and herald-bench (release)"
        flock /tmp/herald-build.lock sh -c \
            'swift build -c release --product herald >/dev/null && swift build -c release --product herald-bench >/dev/null'
        local bin
        bin=$(swift build -c release --show-bin-path)
        herald=$bin/herald
        bench_binary=$bin/herald-bench
    fi
}
