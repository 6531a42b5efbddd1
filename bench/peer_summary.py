#!/usr/bin/env python3
"""The figures of bench/peer-sygnal.sh: one step of one gateway, or the whole run's table.

    peer_summary.py step GATEWAY RATE SECONDS REQUESTS.tsv GENERATOR.json ARRIVALS.log RESULTS.jsonl
        matches the generator's requests (event id, scheduled wall-clock time, status) with the sink's log of
        arrivals (nginx's $msec and the request body, whose `event_id` names the notify), appends the step's
        figures to RESULTS.jsonl, prints its row, and exits 0 when the step passed, 1 when it did not;
    peer_summary.py table RESULTS.jsonl ARRIVALS.log
        prints every step of both gateways side by side, each gateway's capacity, the two ratios the issue
        sets goals for (Herald's CPU per notify over Sygnal's at 800/s, Herald's capacity over Sygnal's), and
        how many accepted notifies of each gateway never reached the sink by the end of the run.

Each step also notes the generator's longest lag behind its schedule and the machine's load average (the
generator, nginx and anything else running share the cores with the gateway measured).
A step passes when every request was accepted (200, no pushkey rejected), every accepted push is at the sink no
later than SETTLE (1 s) after the step's end, and the p99 from scheduled send to arrival is at most BOUND_MS.
Standard library only.
"""

import json
import math
import sys

SETTLE = 1.0
BOUND_MS = 100.0
GATEWAYS = ("sygnal", "herald")
CPU_RATE = 800


def percentile(values, q):
    """Nearest-rank percentile of a sorted list (None when empty)."""
    if not values:
        return None
    return values[max(0, math.ceil(q * len(values)) - 1)]


def read_arrivals(path):
    """event id -> arrival times (seconds since 1970) in the sink's log, in log order."""
    arrivals = {}
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            try:
                entry = json.loads(line)
                event_id = json.loads(entry["b"]).get("event_id")
            except (ValueError, KeyError, AttributeError):
                continue
            if event_id:
                arrivals.setdefault(event_id, []).append(float(entry["t"]))
    return arrivals


def load_average():
    """The machine's load average over the last minute (other work on the cores skews every figure)."""
    try:
        with open("/proc/loadavg", encoding="utf-8") as handle:
            return float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def step(gateway, rate, seconds, requests_path, generator_path, arrivals_path, results_path):
    with open(generator_path, encoding="utf-8") as handle:
        generator = json.loads(handle.read().strip().splitlines()[-1])
    arrivals = read_arrivals(arrivals_path)
    end = generator["scheduled_end"]
    requests = accepted = at_sink = late = duplicates = 0
    latencies = []
    with open(requests_path, encoding="utf-8") as handle:
        for line in handle:
            event_id, scheduled, _answered, status, rejected, _error = line.rstrip("\n").split("\t", 5)
            requests += 1
            if status != "200" or rejected != "0":
                continue
            accepted += 1
            times = arrivals.get(event_id)
            if not times:
                continue
            at_sink += 1
            duplicates += len(times) - 1
            if times[0] > end + SETTLE:
                late += 1
            latencies.append((times[0] - float(scheduled)) * 1000)
    latencies.sort()
    cpu = generator.get("gateway_cpu_s")
    result = {
        "gateway": gateway,
        "rate": rate,
        "requests_file": requests_path,
        "seconds": seconds,
        "requests": requests,
        "offered_per_s": requests / seconds,
        "accepted": accepted,
        "accepted_per_s": accepted / seconds,
        "at_sink": at_sink,
        "late": late,
        "lost": accepted - at_sink,
        "duplicates": duplicates,
        "cpu_ms_per_notify": cpu * 1000 / accepted if cpu is not None and accepted else None,
        "p50_ms": percentile(latencies, 0.50),
        "p99_ms": percentile(latencies, 0.99),
        "generator_lag_ms": generator.get("max_start_lag_ms"),
        "load": load_average(),
        "generator_cpu_ms_per_request": (generator["bench_cpu_s"] * 1000 / requests)
        if generator.get("bench_cpu_s") is not None and requests
        else None,
    }
    if accepted < requests:
        result["failure"] = f"{requests - accepted} not accepted ({generator.get('first_error', '')[:120]})"
    elif at_sink < accepted:
        result["failure"] = f"{accepted - at_sink} accepted but not at the sink"
    elif late:
        result["failure"] = f"{late} at the sink more than {SETTLE:g} s after the step"
    elif result["p99_ms"] is None or result["p99_ms"] > BOUND_MS:
        result["failure"] = f"p99 over {BOUND_MS:g} ms"
    result["passed"] = "failure" not in result
    with open(results_path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(result) + "\n")
    print(row(result), flush=True)
    return 0 if result["passed"] else 1


def ms(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


def row(r):
    verdict = "pass" if r["passed"] else "FAIL: " + r["failure"]
    return "  ".join(
        [
            f"  {r['gateway']:<6} {r['rate']:>6g}/s",
            f"offered {r['offered_per_s']:7.1f}/s",
            f"accepted {r['accepted_per_s']:7.1f}/s",
            f"at sink {r['at_sink']:>6} (late {r['late']}, lost {r['lost']})",
            f"CPU/notify {ms(r['cpu_ms_per_notify'], 3)} ms",
            f"p50 {ms(r['p50_ms'])} ms",
            f"p99 {ms(r['p99_ms'])} ms",
            f"generator lag {ms(r['generator_lag_ms'], 1)} ms",
            f"load {ms(r['load'])}",
            f"[{verdict}]",
        ]
    )


def capacity(steps):
    """The gateway's last passing rate before its first failing step (the rates rise; a step run after a failure,
    for the CPU ratio, does not count), and whether it passed every step it ran."""
    best = None
    for s in sorted(steps, key=lambda s: s["rate"]):
        if not s["passed"]:
            return best, False
        best = s["rate"]
    return best, True


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def never_arrived(requests_path, arrivals):
    """How many of a step's accepted notifies have no push in the sink's log."""
    missing = 0
    with open(requests_path, encoding="utf-8") as handle:
        for line in handle:
            event_id, _scheduled, _answered, status, rejected, _error = line.rstrip("\n").split("\t", 5)
            if status == "200" and rejected == "0" and event_id not in arrivals:
                missing += 1
    return missing


def table(results_path, arrivals_path):
    try:
        handle = open(results_path, encoding="utf-8")
    except FileNotFoundError:
        print("no step was measured")
        return
    with handle:
        results = [json.loads(line) for line in handle if line.strip()]
    # A push missing when its step was summed up may have come since (late, not lost): count again now.
    arrivals = read_arrivals(arrivals_path)
    for r in results:
        r["lost_at_end"] = never_arrived(r["requests_file"], arrivals)
    by = {(r["gateway"], r["rate"]): r for r in results}
    rates = sorted({r["rate"] for r in results})
    print()
    print(
        "| rate | gateway | offered/s | accepted/s | at sink (late, lost) | CPU per notify | p50 | p99 "
        "| generator lag | load | step |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for rate in rates:
        for gateway in GATEWAYS:
            r = by.get((gateway, rate))
            if r is None:
                continue
            print(
                f"| {rate:g}/s | {gateway} | {r['offered_per_s']:.1f} | {r['accepted_per_s']:.1f} "
                f"| {r['at_sink']} ({r['late']}, {r['lost']}) | {ms(r['cpu_ms_per_notify'], 3)} ms "
                f"| {ms(r['p50_ms'])} ms | {ms(r['p99_ms'])} ms | {ms(r['generator_lag_ms'], 1)} ms "
                f"| {ms(r['load'])} | {'pass' if r['passed'] else 'fail'} |"
            )
    print()
    print("| rate | Herald / Sygnal CPU per notify | Herald / Sygnal p50 | Herald / Sygnal p99 |")
    print("|---|---|---|---|")
    for rate in rates:
        s, h = by.get(("sygnal", rate)), by.get(("herald", rate))
        if s is None or h is None:
            continue
        print(
            f"| {rate:g}/s | {ms(ratio(h['cpu_ms_per_notify'], s['cpu_ms_per_notify']))} "
            f"| {ms(ratio(h['p50_ms'], s['p50_ms']))} | {ms(ratio(h['p99_ms'], s['p99_ms']))} |"
        )
    print()
    capacities = {}
    for gateway in GATEWAYS:
        steps = [r for r in results if r["gateway"] == gateway]
        best, every = capacity(steps)
        capacities[gateway] = (best, every)
        if best is None:
            print(f"{gateway} capacity: no step passed")
        else:
            note = " (passed every step it ran: at least this)" if every else ""
            print(f"{gateway} capacity: {best:g}/s{note}")
    s, h = by.get(("sygnal", CPU_RATE)), by.get(("herald", CPU_RATE))
    cpu_ratio = ratio(h and h["cpu_ms_per_notify"], s and s["cpu_ms_per_notify"])
    if cpu_ratio is None:
        print(f"CPU per notify at {CPU_RATE}/s, Herald / Sygnal: no step of both gateways at {CPU_RATE}/s")
    else:
        print(
            f"CPU per notify at {CPU_RATE}/s, Herald / Sygnal: {cpu_ratio:.2f} "
            f"({h['cpu_ms_per_notify']:.3f} / {s['cpu_ms_per_notify']:.3f} ms; goal <= 0.8, aim 0.6)"
        )
    (hb, h_every), (sb, s_every) = capacities["herald"], capacities["sygnal"]
    cap_ratio = ratio(hb, sb)
    if cap_ratio is None:
        print("Capacity, Herald / Sygnal: not defined (a gateway passed no step)")
    elif s_every:
        print(
            f"Capacity, Herald / Sygnal: not determined (Sygnal passed every step it ran, up to {sb:g}/s: "
            "give --rates that go higher)"
        )
    else:
        bound = f" (at least: Herald passed every step, up to {hb:g}/s)" if h_every else ""
        print(f"Capacity, Herald / Sygnal: {cap_ratio:.2f} ({hb:g} / {sb:g} per s; goal >= 1.5, aim 2){bound}")
    for gateway in GATEWAYS:
        lost = sum(r["lost_at_end"] for r in results if r["gateway"] == gateway)
        print(f"{gateway}: {lost} accepted notif{'y' if lost == 1 else 'ies'} not at the sink by the run's end")


def main(argv):
    if len(argv) == 9 and argv[1] == "step":
        return step(argv[2], float(argv[3]), float(argv[4]), *argv[5:9])
    if len(argv) == 4 and argv[1] == "table":
        table(argv[2], argv[3])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
