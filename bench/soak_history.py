#!/usr/bin/env python3
"""Gives a soak's SQLite database the history of a long run, so a short soak shows whether the cost of a request
depends on what the tables already hold (bench/soak.sh, SOAK_SQLITE_FROM).

  python3 bench/soak_history.py DATABASE COPIES [--span SECONDS]

DATABASE is a copy (its `.key` file next to it) of a soak's database taken while it ran, e.g.
`sqlite3 <work>/herald.sqlite ".backup seed.sqlite"` after SECONDS of traffic. Its notifications, their ledger rows,
AOVIS and ArgusAI events and the relay's usage rows are copied COPIES times, each copy moved SECONDS earlier (ids
keep their UUIDv7 order: a copy's ids carry its own earlier milliseconds; an event copy gets a new external id, a
relay row a new token). The devices, channels, jobs and pending deliveries are deleted: the next soak registers its
own. Forty-eight copies of 150 s at the default rate hold what two hours of it leave (1.5 million notifications).
"""
import argparse
import os
import sqlite3
import uuid


def shifted_id(text, milliseconds):
    digits = text.replace("-", "")
    digits = f"{int(digits[:12], 16) - milliseconds:012x}" + digits[12:]
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def columns(db, table):
    return [row[1] for row in db.execute(f"pragma table_info({table})") if row[1] != "sequence"]


def copy(db, table, rows, names, ids, times, seconds, fresh=None):
    milliseconds = int(seconds * 1000)
    out = []
    for row in rows:
        row = list(row)
        for name in ids:
            i = names.index(name)
            if row[i]:
                row[i] = shifted_id(row[i], milliseconds)
        for name in times:
            i = names.index(name)
            if row[i] is not None:
                row[i] -= seconds
        if fresh:
            fresh(row)
        out.append(row)
    db.executemany(f"insert into {table} ({','.join(names)}) values ({','.join('?' * len(names))})", out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("database")
    parser.add_argument("copies", type=int)
    parser.add_argument("--span", type=float, default=150, help="seconds of traffic the database holds (150)")
    args = parser.parse_args()
    db = sqlite3.connect(args.database)
    tables = {
        "notifications": (["id"], ["created_at", "started_at", "completed_at", "not_before", "expires_at"]),
        "deliveries": (["notification_id"], ["at"]),
        "events": (["id", "notification_id"], ["created_at", "occurred_at", "push_sent_at"]),
    }
    names = {table: columns(db, table) for table in tables}
    rows = {table: db.execute(f"select {','.join(names[table])} from {table}").fetchall() for table in tables}
    relay = db.execute("select app_id, service, day, successful, errors from relay_usage").fetchall()
    external = names["events"].index("external_id")

    def new_external_id(row):
        row[external] = str(uuid.uuid4())

    for k in range(args.copies, 0, -1):
        with db:
            for table, (ids, times) in tables.items():
                copy(db, table, rows[table], names[table], ids, times, k * args.span,
                     new_external_id if table == "events" else None)
            db.executemany(
                "insert or ignore into relay_usage (app_id, service, token_index, day, successful, errors) "
                "values (?, ?, ?, ?, ?, ?)",
                [(app, service, os.urandom(32), day, ok, errors) for (app, service, day, ok, errors) in relay])
    with db:
        for table in ["installation_channels", "preferences", "installations", "source_device_owners",
                      "source_devices", "jobs", "pending_deliveries", "rate_buckets"]:
            db.execute(f"delete from {table}")
    db.execute("pragma wal_checkpoint(truncate)")
    for table in ["notifications", "deliveries", "events", "relay_usage"]:
        print(table, db.execute(f"select count(*) from {table}").fetchone()[0])


if __name__ == "__main__":
    main()
