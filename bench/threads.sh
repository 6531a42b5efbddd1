#!/usr/bin/env bash
# Per-thread CPU time and context switches of a running process over a window: where a request's
# thread hops go (each voluntary switch is a thread that went to sleep and had to be woken).
#   bench/threads.sh PID [seconds=10]
# Prints each thread's CPU ticks (1/CLK_TCK s) and voluntary / involuntary switches over the window,
# busiest first, then the totals. Divide the total voluntary switches by the notifications sent in
# the window (e.g. a fixed-rate `bench/latency.sh RATE` run) for switches per notification.
set -euo pipefail
pid=$1
seconds=${2:-10}
snapshot() {
    for task in /proc/"$pid"/task/*; do
        printf '%s %s %s %s\n' "$(basename "$task")" "$(tr ' ' _ < "$task/comm")" \
            "$(awk '{print $14 + $15}' "$task/stat")" \
            "$(awk '/^voluntary_ctxt_switches/ {v=$2} /^nonvoluntary_ctxt_switches/ {n=$2} END {print v, n}' "$task/status")"
    done
}
before=$(snapshot)
sleep "$seconds"
after=$(snapshot)
join <(echo "$before" | sort) <(echo "$after" | sort) | awk -v ticks="$(getconf CLK_TCK)" '
    { cpu = $7 - $3; vol = $8 - $4; invol = $9 - $5; tc += cpu; tv += vol; ti += invol
      printf "%-24s cpu %6.2f s  voluntary %8d  involuntary %8d\n", $2, cpu / ticks, vol, invol }
    END { printf "%-24s cpu %6.2f s  voluntary %8d  involuntary %8d\n", "total", tc / ticks, tv, ti }' |
    sort -k3 -n -r
