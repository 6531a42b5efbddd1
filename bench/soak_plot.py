#!/usr/bin/env python3
"""The plot and the verdict of a soak run (bench/soak.sh runs it; it re-runs on any soak.csv).

    python3 bench/soak_plot.py OUT/soak.csv [--png OUT/soak.png] [--summary OUT/summary.json]
                               [--devices 5000] [--max-error-rate 0.001]

The rule (also in bench/soak.sh's header): skip the first 10 % of the samples (warm-up); "early" is the next
20 %, "late" the last 20 %; growth = (mean(late) - mean(early)) / mean(early).
  GROWING    late - early > max(10 % of early, slack)   (SHRINKING: the same, falling; else FLAT)
  FAIL       a checked series with late - early > max(limit × early, slack): Herald's RSS (limit 20 %, slack
             8 MB), fds, threads, TCP connections (all, inbound, orphaned inbound, to the providers,
             CLOSE_WAIT), queued jobs, the oldest due age, pending deliveries, jobs, installations, channels
             (limit 20 %, slack per series in SERIES below), the generator's RSS; or errors (5xx + connection
             errors) above --max-error-rate of the requests.
The long-haul rules (a run of 45 minutes or more; `--no-long-haul` leaves them out): Herald's RSS at the end
(the last 2 minutes) within 10 % of its RSS at minute 30 (minutes 29–31); the request latency p50 and the CPU
per request (Herald's CPU % / requests per second) of the last 30 minutes within 10 % of minutes 30–60 (a run
shorter than 90 minutes compares minutes 30 to its middle with its middle to the end); and no error at all.
Series marked "expected" grow by design (notifications kept for retention_days, the ledger, the database
file); the rest is informative. Exit status: 0 pass, 1 fail, 2 too few samples to judge (< 10).
"""
import argparse
import csv
import json
import math
import sys

# column, title, unit, kind, slack (absolute noise allowance), limit (fractional growth that fails)
# kind: "check" (can fail), "expected" (grows by design), "info"
SERIES = [
    ("rss_mb", "Herald RSS", "MB", "check", 8, 0.20),
    ("fds", "Herald open fds", "", "check", 80, 0.20),
    ("fds_other", "  of them not sockets", "", "check", 16, 0.20),
    ("threads", "Herald threads", "", "check", 8, 0.20),
    ("cpu_pct", "Herald CPU", "% of a core", "info", 10, None),
    ("tcp_total", "Herald TCP connections", "", "check", 80, 0.20),
    ("tcp_in", "  inbound (its port)", "", "check", 80, 0.20),
    ("tcp_in_orphan", "  inbound, no client holds them", "", "check", 8, 0.20),
    ("tcp_provider", "  to the providers", "", "check", 4, 0.20),
    ("tcp_close_wait", "  in CLOSE_WAIT", "", "check", 4, 0.20),
    ("queue_due", "jobs due (metric)", "", "check", 50, 0.20),
    ("queue_running", "jobs running (metric)", "", "info", 8, None),
    ("queue_scheduled", "jobs scheduled (metric)", "", "check", 50, 0.20),
    ("queue_oldest_due_s", "oldest due job age", "s", "check", 5, 0.20),
    ("channel_connections", "direct channels open", "", "check", 8, 0.20),
    ("http_active", "HTTP requests in progress", "", "info", 8, None),
    ("pool_connections", "provider pool connections", "", "info", 2, None),
    ("pool_streams", "provider streams in use", "", "info", 16, None),
    ("pool_waiting", "provider requests waiting", "", "info", 16, None),
    ("db_installations", "installations (table)", "", "check", None, 0.20),
    ("db_pending", "pending deliveries (table)", "", "check", 200, 0.20),
    ("db_jobs", "jobs (table)", "", "check", 100, 0.20),
    ("db_notifications", "notifications (table)", "", "expected", 0, None),
    ("db_deliveries", "ledger rows (table)", "", "expected", 0, None),
    ("db_mb", "database on disk", "MB", "expected", 1, None),
    ("pg_cpu_pct", "PostgreSQL server CPU", "% of a core", "info", 10, None),
    ("pg_blks_read", "PostgreSQL blocks read", "/interval", "info", 100, None),
    ("pg_blks_hit", "PostgreSQL blocks hit", "/interval", "info", 1000, None),
    ("pg_dead_rows", "PostgreSQL dead row versions", "", "info", 1000, None),
    ("pg_autovacuums", "PostgreSQL autovacuum/analyze runs", "/interval", "info", 1, None),
    ("notifications_accepted", "notifications accepted", "/interval", "info", 10, None),
    ("notifications_finished", "notifications finished", "/interval", "info", 10, None),
    ("deliveries", "deliveries (all outcomes)", "/interval", "info", 10, None),
    ("deliveries_retry", "deliveries retried", "/interval", "info", 10, None),
    ("sink_apns", "APNs stand-in: 200", "/interval", "info", 10, None),
    ("sink_fcm", "FCM stand-in: 200", "/interval", "info", 10, None),
    ("sink_apns_bad", "APNs stand-in: BadDeviceToken", "/interval", "info", 10, None),
    ("req_per_s", "generator requests", "req/s", "info", 5, None),
    ("errors", "generator errors (5xx, conn)", "/interval", "info", 1, None),
    ("errors_4xx", "generator 4xx", "/interval", "info", 5, None),
    ("lat_p99_ms", "request latency p99", "ms", "info", 5, None),
    ("lat_p50_ms", "request latency p50", "ms", "info", 2, None),
    ("ws_events", "WebSocket pushes received", "/interval", "info", 10, None),
    ("ws_errors", "WebSocket errors", "/interval", "info", 1, None),
    ("gen_rss_mb", "generator RSS", "MB", "check", 8, 0.20),
    ("gen_cpu_pct", "generator CPU", "% of a core", "info", 5, None),
    ("gen_lag_ms", "generator event-loop lag (max)", "ms", "info", 20, None),
    ("gen_skipped", "generator skipped (in-flight cap)", "/interval", "info", 1, None),
]


def number(text):
    try:
        value = float(text)
        return value if math.isfinite(value) else None
    except (TypeError, ValueError):
        return None


def mean(values):
    return sum(values) / len(values) if values else None


def windows(n):
    """Indices of the early and late windows of n samples."""
    skip = math.ceil(n * 0.10)
    width = max(1, round(n * 0.20))
    return range(skip, min(n, skip + width)), range(max(0, n - width), n)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--png")
    parser.add_argument("--summary", help="the generator's summary.json (totals of requests and errors)")
    parser.add_argument("--devices", type=int, default=5000, help="SOAK_DEVICES: the installations' slack is 10 %%")
    parser.add_argument("--max-error-rate", type=float, default=0.001)
    parser.add_argument("--no-long-haul", action="store_true", help="leave out the long-haul rules")
    args = parser.parse_args()

    with open(args.csv) as f:
        rows = list(csv.DictReader(f))
    n = len(rows)
    if n < 10:
        print(f"verdict: too few samples to judge ({n}; at least 10 are needed)")
        if args.png and n >= 2:
            plot(rows, args.png, None)
        return 2
    t = [number(r["t"]) for r in rows]
    early, late = windows(n)
    print(f"verdict over {n} samples ({t[-1]:.0f} s): early window {t[early[0]]:.0f}–{t[early[-1]]:.0f} s, "
          f"late window {t[late[0]]:.0f}–{t[late[-1]]:.0f} s (first {math.ceil(n * 0.10)} samples skipped)")
    print(f"{'series':<36} {'early':>10} {'late':>10} {'growth':>9}  trend      rule")
    failures = []
    results = {}
    for column, title, unit, kind, slack, limit in SERIES:
        if column not in rows[0]:
            continue
        values = [number(r[column]) for r in rows]
        e = [values[i] for i in early if values[i] is not None]
        l = [values[i] for i in late if values[i] is not None]
        if not e or not l:
            continue
        me, ml = mean(e), mean(l)
        if slack is None:  # installations: 10 % of the pool
            slack = 0.10 * args.devices
        diff = ml - me
        growth = diff / me * 100 if me else (0.0 if diff == 0 else math.inf)
        if diff > max(0.10 * abs(me), slack):
            trend = "GROWING"
        elif -diff > max(0.10 * abs(me), slack):
            trend = "SHRINKING"
        else:
            trend = "FLAT"
        rule = {"info": "info", "expected": "expected to grow"}.get(kind, "")
        if kind == "check":
            bound = max(limit * abs(me), slack)
            rule = f"fail if +{bound:,.4g}{unit if unit == 'MB' or unit == 's' else ''}"
            if diff > bound:
                rule = "FAIL"
                failures.append(f"{title.strip()} grew {growth:+.1f} % ({me:,.4g} → {ml:,.4g} {unit})".rstrip())
        results[column] = (me, ml, growth, trend)
        growth_text = f"{growth:+.1f} %" if math.isfinite(growth) else "+inf"
        print(f"{(title.strip() + (' (' + unit + ')' if unit else '')):<36} {me:>10,.4g} {ml:>10,.4g} "
              f"{growth_text:>9}  {trend:<10} {rule}")

    totals = None
    if args.summary:
        try:
            with open(args.summary) as f:
                totals = json.load(f)
        except (OSError, ValueError):
            totals = None
    if totals is None:
        requests = sum(number(r["requests"]) or 0 for r in rows)
        errors = sum(number(r["errors"]) or 0 for r in rows)
    else:
        requests, errors = totals["requests"], totals["errors"]
    rate = errors / requests if requests else 1.0
    print(f"errors: {errors:,} of {requests:,} requests ({rate * 100:.3f} %, limit {args.max_error_rate * 100:.3f} %)")
    if rate > args.max_error_rate:
        failures.append(f"error rate {rate * 100:.3f} % > {args.max_error_rate * 100:.3f} %")
    if not args.no_long_haul and t[-1] >= 45 * 60:
        failures += long_haul(rows, t, errors)
    if totals and totals.get("skipped"):
        print(f"note: the generator skipped {totals['skipped']:,} requests at its in-flight cap (Herald stalled, "
              f"or the generator could not keep up)")
    if args.png:
        plot(rows, args.png, (early, late))
        print(f"plot: {args.png}")
    if failures:
        print("verdict: FAIL — " + "; ".join(failures))
        return 1
    print("verdict: PASS — nothing checked grows without bound, errors within the limit")
    return 0


def long_haul(rows, t, errors):
    """The long-haul rules (see the module's doc); returns what fails."""
    def window_mean(column, start, end, derive=None):
        values = []
        for row, at in zip(rows, t):
            if start <= at < end:
                value = derive(row) if derive else number(row[column])
                if value is not None:
                    values.append(value)
        return mean(values)

    def per_request(row):
        rate, cpu = number(row["req_per_s"]), number(row["cpu_pct"])
        return cpu / rate * 10 if rate and cpu is not None else None  # ms of CPU per request

    end = t[-1]
    failures = []
    print(f"long-haul rules over {end / 60:.0f} minutes:")
    rss30, rss_end = window_mean("rss_mb", 29 * 60, 31 * 60), window_mean("rss_mb", end - 120, end + 1)
    checks = [("Herald RSS at the end against minute 30", "MB", rss30, rss_end)]
    middle = 60 * 60 if end >= 90 * 60 else (30 * 60 + end) / 2
    first, last = (30 * 60, middle), (end - 30 * 60 if end >= 90 * 60 else middle, end + 1)
    for title, unit, column, derive in [("latency p50", "ms", "lat_p50_ms", None),
                                        ("CPU per request", "ms", None, per_request)]:
        a = window_mean(column, *first, derive)
        b = window_mean(column, *last, derive)
        checks.append((f"{title}, minutes {last[0] / 60:.0f}–{end / 60:.0f} against {first[0] / 60:.0f}–{first[1] / 60:.0f}",
                       unit, a, b))
    for title, unit, before, after in checks:
        if before is None or after is None:
            failures.append(f"{title}: no samples")
            continue
        change = (after - before) / before * 100 if before else 0.0
        verdict = "ok" if abs(change) <= 10 else "FAIL"
        print(f"  {title}: {before:,.4g} → {after:,.4g} {unit} ({change:+.1f} %, within ±10 %: {verdict})")
        if verdict == "FAIL":
            failures.append(f"{title} moved {change:+.1f} %")
    print(f"  errors: {errors:,} (none allowed)")
    if errors:
        failures.append(f"{errors:,} errors in a long haul")
    return failures


def plot(rows, png, marks):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [number(r["t"]) for r in rows]
    present = [s for s in SERIES if s[0] in rows[0] and any(number(r[s[0]]) is not None for r in rows)]
    columns = 4
    lines = math.ceil(len(present) / columns)
    figure, axes = plt.subplots(lines, columns, figsize=(5 * columns, 2.4 * lines), sharex=True, squeeze=False)
    colour = {"check": "tab:blue", "expected": "tab:gray", "info": "tab:green"}
    for axis, (column, title, unit, kind, _, _) in zip(axes.flat, present):
        xs, ys = zip(*[(x, number(r[column])) for x, r in zip(t, rows) if number(r[column]) is not None])
        axis.plot(xs, ys, color=colour[kind], linewidth=1)
        axis.set_title(title.strip() + (f" ({unit})" if unit else ""), fontsize=9)
        axis.tick_params(labelsize=7, labelbottom=True)
        top = max(ys)
        axis.set_ylim(bottom=min(0, min(ys)), top=top * 1.12 if top > 0 else 1)
        axis.grid(alpha=0.3)
        if marks:
            early, late = marks
            axis.axvspan(t[early[0]], t[early[-1]], color="tab:orange", alpha=0.12, linewidth=0)
            axis.axvspan(t[late[0]], t[late[-1]], color="tab:red", alpha=0.12, linewidth=0)
    for axis in list(axes.flat)[len(present):]:
        axis.set_visible(False)
    for axis in axes[-1]:
        axis.set_xlabel("seconds", fontsize=8)
    figure.suptitle("Herald soak (blue: checked, grey: grows by design, green: informative; "
                    "shaded: early and late windows)", fontsize=11)
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    figure.savefig(png, dpi=80)
    plt.close(figure)


if __name__ == "__main__":
    sys.exit(main())
