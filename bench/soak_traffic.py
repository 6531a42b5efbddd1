#!/usr/bin/env python3
"""Traffic generator and sampler of bench/soak.sh (run by it; see its header for the whole picture).

Open loop: every route has its own ticker that starts request n at start + n / rate, whatever the earlier ones
did; a request that would exceed --max-inflight in flight is skipped and counted (`gen_skipped`), so a stalled
Herald shows as latency and skips, never as a quietly lower rate. One aiohttp session (keep-alive pool) for
HTTP, another for the WebSocket clients.

Routes and default weights (requests/s at the default rate of 300; SOAK_MIX="route=weight ..." overrides):
  churn=50      POST /v1/installations (new device) or DELETE /v1/installations/{id}, whichever holds the
                registered pool at --devices (client key, as an app does)
  refresh=30    POST /v1/installations again for a registered device: half a new token, half the same token
                with changed fields (200)
  send_user=80  POST /v1/notifications to one user (user_ids)
  broadcast=1   POST /v1/notifications to one of --channels channels (about devices * 1.5 / channels devices)
  aovis=30      POST /api/internal/events for one of 100 cameras with 1-2 ACTIVE owners
  argus=20      POST /api/v1/push/mobile/events to 1-3 users
  ha=40         POST /ha/push with a registered (live) push token
  direct=40     POST /v1/notifications to a direct-only device held by a WebSocket client
  status=9      GET /v1/notifications/{id} of a recent send, or GET /v1/notifications?limit=20
About 2 % of APNs tokens end in "dead": the stand-in refuses them (BadDeviceToken) and Herald invalidates
them; a refresh gives the device a live token again.

Errors: any 5xx answer or connection error/timeout. 4xx answers are counted apart (per route and status in
the summary; the first bodies of each unexpected status are kept).

Every --interval seconds one CSV row (columns: see COLUMNS) and one progress line on stdout.
"""
import argparse
import asyncio
import collections
import datetime
import json
import os
import random
import secrets
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid

import aiohttp

DEFAULT_MIX = dict(churn=50, refresh=30, send_user=80, broadcast=1, aovis=30, argus=20, ha=40, direct=40, status=9)

COLUMNS = [
    "t", "timestamp",
    # Herald's process
    "rss_mb", "fds", "fds_other", "threads", "cpu_pct",
    "tcp_total", "tcp_in", "tcp_in_orphan", "tcp_provider", "tcp_close_wait",
    # GET /metrics
    "queue_due", "queue_running", "queue_scheduled", "queue_oldest_due_s", "channel_connections",
    "http_active", "pool_connections", "pool_streams", "pool_waiting",
    "notifications_accepted", "notifications_finished", "deliveries", "deliveries_delivered",
    "deliveries_retry", "deliveries_invalid", "deliveries_failed", "http_errors_metric",
    # the database
    "db_installations", "db_pending", "db_jobs", "db_notifications", "db_deliveries", "db_mb",
    # the PostgreSQL server (empty on SQLite, which runs inside Herald): its processes' CPU, the blocks its
    # statements read from outside shared_buffers and found in them (per interval), its tables' dead row
    # versions, and the autovacuum/autoanalyze runs (per interval)
    "pg_cpu_pct", "pg_blks_read", "pg_blks_hit", "pg_dead_rows", "pg_autovacuums",
    # the provider stand-in (per interval)
    "sink_apns", "sink_apns_bad", "sink_fcm", "sink_oauth", "sink_other",
    # the generator (per interval)
    "requests", "req_per_s", "errors", "errors_4xx", "lat_p50_ms", "lat_p99_ms", "lat_max_ms",
    "ws_events", "ws_connects", "ws_errors", "ws_dupes",
    "gen_rss_mb", "gen_fds", "gen_cpu_pct", "gen_lag_ms", "gen_skipped", "gen_inflight",
]

EVENT_TYPES = ["person", "vehicle", "pet", "package", "other"]
SUMMARIES = [
    "A person in a dark jacket walked up the driveway and stood at the front door for a few seconds.",
    "A silver sedan pulled into the driveway and parked near the garage door.",
    "A small dog crossed the lawn from left to right.",
    "A courier left a brown box on the porch step.",
    "Something moved near the hedge; the classifier could not say what.",
]


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")



# How many direct-channel notification ids the duplicate check remembers (about 4 minutes of pushes).
SEEN_DIRECT = 10000

class Device:
    __slots__ = ("id", "device_id", "platform", "service", "token", "user", "channels", "dead")

    def __init__(self, device_id, platform, service, token, user, channels, dead):
        self.id = None
        self.device_id = device_id
        self.platform = platform
        self.service = service
        self.token = token
        self.user = user
        self.channels = channels
        self.dead = dead


class Pool:
    """Registered devices: O(1) random pick and removal."""

    def __init__(self):
        self.items = []
        self.index = {}

    def __len__(self):
        return len(self.items)

    def add(self, device):
        if device.id in self.index:
            return
        self.index[device.id] = len(self.items)
        self.items.append(device)

    def pick(self):
        return random.choice(self.items) if self.items else None

    def remove(self, device):
        i = self.index.pop(device.id, None)
        if i is None:
            return
        last = self.items.pop()
        if i < len(self.items):
            self.items[i] = last
            self.index[last.id] = i


class Stats:
    def __init__(self):
        self.routes = collections.defaultdict(collections.Counter)  # route -> status/"conn" -> count
        self.samples = collections.defaultdict(list)  # "route status" -> first bodies
        self.reset_interval()
        self.ws = collections.Counter()
        self.skipped_total = 0

    def reset_interval(self):
        self.requests = 0
        self.errors = 0
        self.errors_4xx = 0
        self.latencies = []
        self.ws_events = 0
        self.ws_connects = 0
        self.ws_errors = 0
        self.ws_dupes = 0
        self.skipped = 0
        self.lag = 0.0

    def record(self, route, status, seconds, body=None, expected=(200, 201, 202, 204)):
        self.requests += 1
        self.latencies.append(seconds)
        key = status if isinstance(status, int) else "conn"
        self.routes[route][key] += 1
        if key == "conn" or key >= 500:
            self.errors += 1
        elif key >= 400:
            self.errors_4xx += 1
        if key not in expected:
            bucket = self.samples[f"{route} {key}"]
            if len(bucket) < 3:
                bucket.append((body or "")[:300])


class Soak:
    def __init__(self, args):
        self.args = args
        self.database_samples = 0
        self.growing_counts = {}  # the last counts of GROWING, repeated between the samples that count them
        self.postmaster = None  # the PostgreSQL server's pid, found through its checkpointer
        self.url = args.url.rstrip("/")
        self.server = {"Authorization": f"Bearer {args.server_key}", "Content-Type": "application/json"}
        self.client = {"Authorization": f"Bearer {args.client_key}", "Content-Type": "application/json"}
        self.stats = Stats()
        self.pool = Pool()
        self.users = [f"soak-user-{i}" for i in range(args.users)]
        self.channels = [f"ch{i}" for i in range(args.channels)]
        self.cameras = []  # (camera id, [owners])
        self.direct = []  # (installation id, credential)
        self.recent = collections.deque(maxlen=1000)
        self.seen_direct = collections.OrderedDict()
        self.inflight = 0
        self.tasks = set()
        self.stopping = False
        self.direct_sent = 0
        self.mix = dict(DEFAULT_MIX)
        for pair in os.environ.get("SOAK_MIX", "").split():
            name, _, weight = pair.partition("=")
            if name not in DEFAULT_MIX:
                raise SystemExit(f"soak_traffic: unknown route {name!r} in SOAK_MIX (routes: {', '.join(DEFAULT_MIX)})")
            self.mix[name] = float(weight)

    # -- HTTP -----------------------------------------------------------------------------------------

    async def call(self, route, method, path, body=None, headers=None, expected=(200, 201, 202, 204)):
        started = time.monotonic()
        data = None if body is None else json.dumps(body, separators=(",", ":"))
        try:
            async with self.http.request(method, self.url + path, data=data, headers=headers or self.server) as r:
                text = await r.text()
                status = r.status
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as error:
            self.stats.record(route, "conn", time.monotonic() - started, f"{type(error).__name__}: {error}", expected)
            return None, None
        self.stats.record(route, status, time.monotonic() - started, text, expected)
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, None

    # -- devices --------------------------------------------------------------------------------------

    def new_device(self):
        if random.random() < 0.65:
            dead = random.random() < 0.02
            token = secrets.token_hex(30) + ("dead" if dead else secrets.token_hex(2))
            platform, service = "ios", "apns"
        else:
            dead = False
            token = f"{secrets.token_urlsafe(16)}:APA91b{secrets.token_urlsafe(105)}"
            platform, service = "android", "fcm"
        channels = random.sample(self.channels, random.randint(1, 2)) if self.channels else []
        return Device(str(uuid.uuid4()), platform, service, token, random.choice(self.users), channels, dead)

    def registration(self, d, **extra):
        body = {"platform": d.platform, "service": d.service, "token": d.token, "device_id": d.device_id,
                "user_id": d.user, "channels": d.channels, "locale": "en-US", "timezone": "Europe/Berlin",
                "app_version": "1.0.0", "os_version": "17.1" if d.platform == "ios" else "14",
                "device_model": "iPhone15,2" if d.platform == "ios" else "Pixel 8"}
        body.update(extra)
        return body

    async def register_new(self, route="churn"):
        d = self.new_device()
        status, answer = await self.call(route, "POST", "/v1/installations", self.registration(d), self.client)
        if status in (200, 201) and answer and answer.get("id"):
            d.id = answer["id"]
            self.pool.add(d)

    async def churn(self):
        target = self.args.devices
        if len(self.pool) < target:
            await self.register_new()
        else:
            d = self.pool.pick()
            self.pool.remove(d)
            await self.call("churn", "DELETE", f"/v1/installations/{d.id}", None, self.client)

    async def refresh(self):
        d = self.pool.pick()
        if d is None:
            return
        if random.random() < 0.5:
            if d.service == "apns":
                d.dead = random.random() < 0.02
                d.token = secrets.token_hex(30) + ("dead" if d.dead else secrets.token_hex(2))
            else:
                d.token = f"{secrets.token_urlsafe(16)}:APA91b{secrets.token_urlsafe(105)}"
            body = self.registration(d)
        else:
            body = self.registration(d, app_version=f"1.{random.randint(0, 9)}.{random.randint(0, 9)}",
                                     badge=random.randint(0, 9))
        status, answer = await self.call("refresh", "POST", "/v1/installations", body, self.client)
        if status in (200, 201) and answer and answer.get("id") and answer["id"] != d.id:
            # Deleted while in flight and registered anew: keep the new id.
            self.pool.remove(d)
            d.id = answer["id"]
            self.pool.add(d)

    # -- sends ----------------------------------------------------------------------------------------

    def payload(self, title):
        return {"title": title, "body": random.choice(SUMMARIES), "sound": "default",
                "data": {"soak": "1", "n": str(random.randint(0, 1 << 30))}}

    async def send(self, route, target, title):
        status, answer = await self.call(route, "POST", "/v1/notifications",
                                         {"target": target, "payload": self.payload(title)})
        if status == 202 and answer and answer.get("id"):
            self.recent.append(answer["id"])
        return status

    async def send_user(self):
        await self.send("send_user", {"user_ids": [random.choice(self.users)]}, "For you")

    async def broadcast(self):
        await self.send("broadcast", {"channels": [random.choice(self.channels)]}, "News")

    async def direct_send(self):
        if not self.direct:
            return
        installation, _ = random.choice(self.direct)
        if await self.send("direct", {"installation_ids": [installation]}, "Direct") == 202:
            self.direct_sent += 1

    async def aovis(self):
        camera, _ = random.choice(self.cameras)
        await self.call("aovis", "POST", "/api/internal/events", {
            "eventId": str(uuid.uuid4()), "deviceId": camera, "classifyEventType": random.choice(EVENT_TYPES),
            "classifySummaryShort": random.choice(SUMMARIES), "occurredAt": now_iso()})

    async def argus(self):
        await self.call("argus", "POST", "/api/v1/push/mobile/events", {
            "event_id": str(uuid.uuid4()), "camera_id": f"cam-{random.randint(0, 19)}", "camera_name": "Front door",
            "smart_detection_type": random.choice(EVENT_TYPES), "description": random.choice(SUMMARIES),
            "timestamp": now_iso(), "user_ids": random.sample(self.users, random.randint(1, 3))})

    async def ha(self):
        d = None
        for _ in range(5):
            d = self.pool.pick()
            if d is not None and not d.dead:
                break
        if d is None or d.dead:
            return
        apple = d.service == "apns"
        await self.call("ha", "POST", "/ha/push", {
            "message": "The front door was opened", "title": "Front door", "push_token": d.token,
            "registration_info": {"app_id": "io.robbie.HomeAssistant" if apple else "io.homeassistant.companion.android",
                                  "app_version": "2024.11.1", "webhook_id": f"wh-{d.device_id[:8]}",
                                  "os_version": "17.1" if apple else "14"},
            "data": {"channel": "alarms", "tag": "door", "push": {"interruption-level": "time-sensitive"}}},
            {"Content-Type": "application/json"})

    async def status(self):
        if self.recent and random.random() < 0.8:
            await self.call("status", "GET", f"/v1/notifications/{random.choice(self.recent)}")
        else:
            await self.call("status", "GET", "/v1/notifications?limit=20")

    # -- direct channel -------------------------------------------------------------------------------

    async def ws_client(self, installation, credential):
        ws_url = self.url.replace("http", "ws", 1) + "/v1/channel"
        loop = asyncio.get_running_loop()
        while not self.stopping:
            try:
                async with self.wsession.ws_connect(ws_url, timeout=10, autoping=True) as ws:
                    first = await ws.receive_json(timeout=10)
                    if first.get("type") != "auth_required":
                        raise RuntimeError(f"expected auth_required, got {first}")
                    await ws.send_json({"type": "auth", "access_token": credential})
                    answer = await ws.receive_json(timeout=10)
                    if answer.get("type") != "auth_ok":
                        raise RuntimeError(f"expected auth_ok, got {answer}")
                    await ws.send_json({"id": 1, "type": "mobile_app/push_notification_channel",
                                        "webhook_id": installation, "support_confirm": True})
                    next_id = 2
                    self.stats.ws_connects += 1
                    self.stats.ws["connects"] += 1
                    deadline = loop.time() + random.uniform(20, 90)
                    while not self.stopping:
                        remaining = deadline - loop.time()
                        if remaining <= 0:
                            break
                        try:
                            message = await ws.receive(timeout=min(remaining, 1.0))
                        except asyncio.TimeoutError:
                            continue
                        if message.type != aiohttp.WSMsgType.TEXT:
                            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED,
                                                aiohttp.WSMsgType.CLOSING, aiohttp.WSMsgType.ERROR):
                                raise RuntimeError(f"closed by Herald: {message.type.name} {message.data}")
                            continue
                        data = json.loads(message.data)
                        if data.get("type") == "result":
                            if not data.get("success"):
                                self.stats.ws["failed_results"] += 1
                                bucket = self.stats.samples["ws result"]
                                if len(bucket) < 3:
                                    bucket.append(message.data[:300])
                        elif data.get("type") == "event":
                            event = data.get("event", {})
                            self.stats.ws_events += 1
                            self.stats.ws["events"] += 1
                            nid = (event.get("data") or {}).get("notification_id") or event.get("notification_id")
                            if nid:
                                if nid in self.seen_direct:
                                    self.stats.ws_dupes += 1
                                    self.stats.ws["duplicates"] += 1
                                else:
                                    self.seen_direct[nid] = True
                                    # A push delivered twice comes back within seconds: remembering the last
                                    # SEEN_DIRECT ids is enough, and keeps the generator's memory flat (with
                                    # 200,000 it grew for 80 minutes and failed the RSS rule of its own).
                                    if len(self.seen_direct) > SEEN_DIRECT:
                                        self.seen_direct.popitem(last=False)
                            confirm = event.get("hass_confirm_id")
                            if confirm:
                                await ws.send_json({"id": next_id, "type": "mobile_app/push_notification_confirm",
                                                    "webhook_id": installation, "confirm_id": confirm})
                                next_id += 1
                                self.stats.ws["confirms"] += 1
            except asyncio.CancelledError:
                raise
            except Exception as error:  # any failure of the channel counts as a WebSocket error
                if self.stopping:
                    break
                self.stats.ws_errors += 1
                self.stats.ws["errors"] += 1
                bucket = self.stats.samples["ws error"]
                if len(bucket) < 5:
                    bucket.append(f"{type(error).__name__}: {error}"[:300])
            if not self.stopping:
                await asyncio.sleep(random.uniform(0.5, 2.0))

    # -- set-up ---------------------------------------------------------------------------------------

    async def gather_limited(self, factories, limit=32):
        semaphore = asyncio.Semaphore(limit)

        async def run(factory):
            async with semaphore:
                return await factory()
        return await asyncio.gather(*(run(f) for f in factories))

    async def setup(self):
        started = time.monotonic()
        await self.gather_limited([lambda: self.register_new("setup")] * self.args.devices)
        for i in range(100):
            status, answer = await self.call("setup", "POST", "/api/internal/devices",
                                             {"alias": f"aovis-soak-{i:03d}", "name": f"Camera {i}"})
            if status != 201:
                raise SystemExit(f"soak_traffic: creating a camera answered {status}: {answer}")
            camera = answer["id"]
            owners = random.sample(self.users, random.randint(1, 2))
            for user in owners:
                status, answer = await self.call("setup", "PUT", f"/api/internal/devices/{camera}/owners/{user}",
                                                 {"status": "ACTIVE"})
                if status != 200:
                    raise SystemExit(f"soak_traffic: setting an owner answered {status}: {answer}")
            self.cameras.append((f"aovis-soak-{i:03d}", owners))
        for i in range(self.args.ws_clients):
            status, answer = await self.call("setup", "POST", "/v1/installations", {
                "platform": "desktop", "service": "direct", "token": f"soak-direct-{uuid.uuid4()}",
                "user_id": f"soak-direct-{i}", "device_model": "soak"})
            if status not in (200, 201):
                raise SystemExit(f"soak_traffic: registering a direct device answered {status}: {answer}")
            installation = answer["id"]
            status, credential = await self.call("setup", "POST", f"/v1/installations/{installation}/channel-credential",
                                                 {})
            if status != 200:
                raise SystemExit(f"soak_traffic: a channel credential answered {status}: {credential}")
            self.direct.append((installation, credential["credential"]))
        bad = {k: v for k, v in self.stats.routes["setup"].items() if k not in (200, 201)}
        print(f"== set-up: {len(self.pool)} devices, {len(self.cameras)} cameras, {len(self.direct)} direct devices "
              f"in {time.monotonic() - started:.1f} s" + (f" (other answers: {dict(bad)})" if bad else ""), flush=True)
        self.stats.reset_interval()

    # -- the tickers ----------------------------------------------------------------------------------

    def spawn(self, coroutine):
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        self.inflight += 1

        def done(t):
            self.tasks.discard(t)
            self.inflight -= 1
            if not t.cancelled() and t.exception() is not None:
                error = t.exception()
                self.stats.record("generator", "conn", 0.0, f"{type(error).__name__}: {error}")
        task.add_done_callback(done)

    async def ticker(self, name, rate, operation, start):
        if rate <= 0:
            return
        loop = asyncio.get_running_loop()
        n = 0
        while not self.stopping:
            n += 1
            delay = start + n / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if self.stopping:
                break
            if self.inflight >= self.args.max_inflight:
                self.stats.skipped += 1
                self.stats.skipped_total += 1
                continue
            self.spawn(operation())

    async def lag_probe(self):
        loop = asyncio.get_running_loop()
        while not self.stopping:
            before = loop.time()
            await asyncio.sleep(0.1)
            self.stats.lag = max(self.stats.lag, loop.time() - before - 0.1)

    # -- sampling -------------------------------------------------------------------------------------

    def proc(self):
        pid = self.args.pid
        values = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    values["rss_mb"] = int(line.split()[1]) / 1024
                elif line.startswith("Threads:"):
                    values["threads"] = int(line.split()[1])
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        inodes = set()
        fds = 0
        for fd in os.listdir(f"/proc/{pid}/fd"):
            fds += 1
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        values["fds"] = fds
        values["fds_other"] = fds - len(inodes)
        # The generator's own sockets, to tell Herald's inbound connections that no client holds any more.
        mine = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                mine.add(target[8:-1])
        total = inbound = provider = close_wait = 0
        peers = []  # the client ports of Herald's inbound connections
        client_ports = set()  # the local ports of the generator's connections to Herald
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                with open(table) as f:
                    next(f)
                    for line in f:
                        parts = line.split()
                        local_port = int(parts[1].rsplit(":", 1)[1], 16)
                        remote_port = int(parts[2].rsplit(":", 1)[1], 16)
                        if parts[9] in mine and remote_port == self.args.port:
                            client_ports.add(local_port)
                            continue
                        if parts[9] not in inodes or parts[3] == "0A":  # not Herald's, or listening
                            continue
                        total += 1
                        if local_port == self.args.port:
                            inbound += 1
                            peers.append(remote_port)
                        provider += remote_port == self.args.sink_port
                        close_wait += parts[3] == "08"
            except FileNotFoundError:
                pass
        orphans = sum(1 for port in peers if port not in client_ports)
        values.update(tcp_total=total, tcp_in=inbound, tcp_in_orphan=orphans, tcp_provider=provider,
                      tcp_close_wait=close_wait)
        return values, cpu

    @staticmethod
    def own():
        rss = 0.0
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024
        times = os.times()
        return rss, len(os.listdir("/proc/self/fd")), times.user + times.system

    async def metrics(self):
        try:
            async with self.http.get(self.url + "/metrics") as r:
                text = await r.text()
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
            return None
        sums = collections.Counter()
        for line in text.splitlines():
            if not line or line[0] == "#":
                continue
            name_labels, _, value = line.rpartition(" ")
            name, _, labels = name_labels.partition("{")
            try:
                number = float(value)
            except ValueError:
                continue
            sums[name] += number
            if name == "herald_queue_jobs":
                for state in ("due", "running", "scheduled"):
                    if f'state="{state}"' in labels:
                        sums[f"queue_{state}"] += number
            elif name == "herald_deliveries_total":
                for outcome in ("delivered", "retry", "invalid", "failed"):
                    if f'outcome="{outcome}"' in labels:
                        sums[f"deliveries_{outcome}"] += number
        return sums

    # The tables kept for retention_days grow by design: counting them is a scan whose cost grows with them
    # (count(*) over 1.5 million notifications is about 0.2 s of a core), on the machine Herald is measured on.
    # They are counted every GROWING_EVERY samples, the last count repeated between; the bounded ones every time.
    GROWING = ("notifications", "deliveries")
    GROWING_EVERY = 30

    def database(self):
        """Table counts and size: SQLite read-only (a fresh connection each time), PostgreSQL through psql."""
        self.database_samples += 1
        fresh = not self.growing_counts or self.database_samples % self.GROWING_EVERY == 1
        tables = ["installations", "pending_deliveries", "jobs"] + (list(self.GROWING) if fresh else [])
        result = self.count_tables(tables)
        if fresh and all(t in result for t in self.GROWING):
            self.growing_counts = {t: result[t] for t in self.GROWING}
        for table, count in self.growing_counts.items():
            result.setdefault(table, count)
        return result

    def count_tables(self, tables):
        target = self.args.database
        if target.startswith("postgres"):
            if not shutil.which("psql"):
                return {}
            query = "; ".join(f"select count(*) from {t}" for t in tables) + \
                "; select pg_database_size(current_database())" \
                "; select blks_read, blks_hit from pg_stat_database where datname = current_database()" \
                "; select coalesce(sum(n_dead_tup), 0), coalesce(sum(autovacuum_count + autoanalyze_count), 0)" \
                " from pg_stat_user_tables" \
                "; select coalesce(max(pid), 0) from pg_stat_activity where backend_type = 'checkpointer'"
            try:
                out = subprocess.run(["psql", target, "-Atq", "-F", " ", "-c", query], capture_output=True,
                                     text=True, timeout=30).stdout.split()
                counts = [int(x) for x in out]
            except (subprocess.SubprocessError, ValueError):
                return {}
            if len(counts) != len(tables) + 6:
                return {}
            result = dict(zip(tables, counts))
            size, blks_read, blks_hit, dead, vacuums, checkpointer = counts[len(tables):]
            result.update(db_mb=size / 1e6, pg_blks_read=blks_read, pg_blks_hit=blks_hit, pg_dead_rows=dead,
                          pg_autovacuums=vacuums)
            cpu = self.postgres_cpu(checkpointer)
            if cpu is not None:
                result["pg_cpu_s"] = cpu
            return result
        result = {}
        try:
            db = sqlite3.connect(f"file:{target}?mode=ro", uri=True, timeout=5)
            try:
                for table in tables:
                    result[table] = db.execute(f"select count(*) from {table}").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error as error:
            result["error"] = str(error)
        size = 0
        for suffix in ("", "-wal", "-shm"):
            try:
                size += os.path.getsize(target + suffix)
            except OSError:
                pass
        result["db_mb"] = size / 1e6
        return result

    def postgres_cpu(self, checkpointer):
        """The CPU seconds of the PostgreSQL server on this machine (its postmaster, the children it has, and
        those it reaped), or None when it is elsewhere."""
        def stat(pid):
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()

        try:
            if self.postmaster is None and checkpointer:
                self.postmaster = int(stat(checkpointer)[1])
            if not self.postmaster:
                return None
            fields = stat(self.postmaster)
        except (OSError, ValueError, IndexError):
            return None
        ticks = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = stat(entry)
            except OSError:
                continue
            if int(fields[1]) == self.postmaster:
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def sink(self):
        counts = collections.Counter()
        try:
            with open(self.args.sink_log, "rb") as f:
                f.seek(self.sink_offset)
                data = f.read()
        except FileNotFoundError:
            return counts
        end = data.rfind(b"\n") + 1
        self.sink_offset += end
        for line in data[:end].split(b"\n"):
            if not line:
                continue
            kind, _, status = line.partition(b" ")
            if kind == b"apns" and status == b"200":
                counts["sink_apns"] += 1
            elif kind == b"apns" and status == b"400":
                counts["sink_apns_bad"] += 1
            elif kind == b"fcm" and status == b"200":
                counts["sink_fcm"] += 1
            elif kind == b"oauth" and status == b"200":
                counts["sink_oauth"] += 1
            else:
                counts["sink_other"] += 1
        return counts

    async def sampler(self, start):
        loop = asyncio.get_running_loop()
        interval = self.args.interval
        previous_metrics = await self.metrics() or collections.Counter()
        _, previous_cpu = self.proc()
        _, _, previous_own_cpu = self.own()
        previous_database = {}
        previous_time = loop.time()
        self.sink_offset = 0
        self.sink()
        n = 0
        with open(self.args.csv, "w") as csv:
            csv.write(",".join(COLUMNS) + "\n")
            csv.flush()
            while not self.stopping:
                n += 1
                delay = start + n * interval - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                now = loop.time()
                elapsed = now - previous_time
                previous_time = now
                s = self.stats
                requests, errors, errors_4xx, latencies = s.requests, s.errors, s.errors_4xx, sorted(s.latencies)
                ws_events, ws_connects, ws_errors, ws_dupes = s.ws_events, s.ws_connects, s.ws_errors, s.ws_dupes
                skipped, lag = s.skipped, s.lag
                s.reset_interval()
                try:
                    process, cpu = self.proc()
                except (FileNotFoundError, ProcessLookupError):
                    print("== herald serve is gone: stopping", flush=True)
                    self.herald_died = True
                    self.stopping = True
                    break
                metrics = await self.metrics() or collections.Counter()
                database = await asyncio.to_thread(self.database)
                sink = self.sink()
                own_rss, own_fds, own_cpu = self.own()

                def delta(name):
                    return round(metrics.get(name, 0) - previous_metrics.get(name, 0)) if metrics else ""

                def database_delta(name):
                    now_value, before = database.get(name), previous_database.get(name)
                    return now_value - before if now_value is not None and before is not None else ""

                pg_cpu = database_delta("pg_cpu_s")

                def pct(k):
                    return f"{latencies[min(len(latencies) - 1, int(k * len(latencies)))] * 1000:.2f}" \
                        if latencies else ""
                row = {
                    "t": round(now - start, 1), "timestamp": now_iso(),
                    "rss_mb": f"{process['rss_mb']:.1f}", "fds": process["fds"], "fds_other": process["fds_other"],
                    "threads": process["threads"],
                    "cpu_pct": f"{(cpu - previous_cpu) / elapsed * 100:.1f}",
                    "tcp_total": process["tcp_total"], "tcp_in": process["tcp_in"],
                    "tcp_in_orphan": process["tcp_in_orphan"],
                    "tcp_provider": process["tcp_provider"], "tcp_close_wait": process["tcp_close_wait"],
                    "queue_due": metrics.get("queue_due", ""), "queue_running": metrics.get("queue_running", ""),
                    "queue_scheduled": metrics.get("queue_scheduled", ""),
                    "queue_oldest_due_s": metrics.get("herald_queue_oldest_due_age_seconds", ""),
                    "channel_connections": metrics.get("herald_channel_connections", ""),
                    "http_active": metrics.get("herald_http_active_requests", ""),
                    "pool_connections": metrics.get("herald_pool_connections", ""),
                    "pool_streams": metrics.get("herald_pool_streams_in_use", ""),
                    "pool_waiting": metrics.get("herald_pool_waiting_requests", ""),
                    "notifications_accepted": delta("herald_notifications_accepted_total"),
                    "notifications_finished": delta("herald_notifications_finished_total"),
                    "deliveries": delta("herald_deliveries_total"),
                    "deliveries_delivered": delta("deliveries_delivered"),
                    "deliveries_retry": delta("deliveries_retry"),
                    "deliveries_invalid": delta("deliveries_invalid"),
                    "deliveries_failed": delta("deliveries_failed"),
                    "http_errors_metric": delta("herald_http_request_errors_total"),
                    "db_installations": database.get("installations", ""),
                    "db_pending": database.get("pending_deliveries", ""), "db_jobs": database.get("jobs", ""),
                    "db_notifications": database.get("notifications", ""),
                    "db_deliveries": database.get("deliveries", ""),
                    "db_mb": f"{database['db_mb']:.1f}" if "db_mb" in database else "",
                    "pg_cpu_pct": f"{pg_cpu / elapsed * 100:.1f}" if pg_cpu != "" else "",
                    "pg_blks_read": database_delta("pg_blks_read"), "pg_blks_hit": database_delta("pg_blks_hit"),
                    "pg_dead_rows": database.get("pg_dead_rows", ""),
                    "pg_autovacuums": database_delta("pg_autovacuums"),
                    **{k: sink.get(k, 0) for k in ("sink_apns", "sink_apns_bad", "sink_fcm", "sink_oauth", "sink_other")},
                    "requests": requests, "req_per_s": f"{requests / elapsed:.1f}", "errors": errors,
                    "errors_4xx": errors_4xx, "lat_p50_ms": pct(0.5), "lat_p99_ms": pct(0.99),
                    "lat_max_ms": f"{latencies[-1] * 1000:.1f}" if latencies else "",
                    "ws_events": ws_events, "ws_connects": ws_connects, "ws_errors": ws_errors, "ws_dupes": ws_dupes,
                    "gen_rss_mb": f"{own_rss:.1f}", "gen_fds": own_fds,
                    "gen_cpu_pct": f"{(own_cpu - previous_own_cpu) / elapsed * 100:.1f}",
                    "gen_lag_ms": f"{lag * 1000:.1f}", "gen_skipped": skipped, "gen_inflight": self.inflight,
                }
                if "error" in database:
                    print(f"   (database probe: {database['error']})", flush=True)
                if metrics:
                    previous_metrics = metrics
                previous_cpu, previous_own_cpu = cpu, own_cpu
                previous_database = database
                csv.write(",".join(str(row[c]) for c in COLUMNS) + "\n")
                csv.flush()
                print(f"[{row['t']:>7}s] rss {row['rss_mb']} MB  fds {row['fds']}  tcp {row['tcp_total']} "
                      f"(in {row['tcp_in']}, orphans {row['tcp_in_orphan']}, providers {row['tcp_provider']})  cpu {row['cpu_pct']}%  "
                      f"due {row['queue_due']}  pending {row['db_pending']}  installations {row['db_installations']}  "
                      f"{row['req_per_s']} req/s  errors {errors}  4xx {errors_4xx}  p99 {row['lat_p99_ms']} ms  "
                      f"ws {ws_events} ev/{ws_errors} err  gen {row['gen_cpu_pct']}% lag {row['gen_lag_ms']} ms"
                      + (f"  SKIPPED {skipped}" if skipped else ""), flush=True)
                if now - start >= self.args.seconds - 0.5:
                    break

    # -- the run --------------------------------------------------------------------------------------

    async def run(self):
        timeout = aiohttp.ClientTimeout(total=30)
        self.herald_died = False
        connector = aiohttp.TCPConnector(limit=self.args.http_connections, keepalive_timeout=30)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as self.http, \
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as self.wsession:
            await self.setup()
            ws_tasks = [asyncio.ensure_future(self.ws_client(i, c)) for i, c in self.direct]
            await asyncio.sleep(1.0)  # let the channels open
            self.stats.reset_interval()
            loop = asyncio.get_running_loop()
            start = loop.time()
            total_weight = sum(self.mix.values())
            operations = dict(churn=self.churn, refresh=self.refresh, send_user=self.send_user,
                              broadcast=self.broadcast, aovis=self.aovis, argus=self.argus, ha=self.ha,
                              direct=self.direct_send, status=self.status)
            tickers = [asyncio.ensure_future(self.ticker(name, self.args.rate * weight / total_weight,
                                                         operations[name], start))
                       for name, weight in self.mix.items()]
            probe = asyncio.ensure_future(self.lag_probe())
            await self.sampler(start)
            self.stopping = True
            for task in tickers + [probe]:
                task.cancel()
            if self.tasks:
                await asyncio.wait(list(self.tasks), timeout=30)
            for task in ws_tasks:
                task.cancel()
            await asyncio.gather(*ws_tasks, *tickers, probe, return_exceptions=True)
            self.duration = loop.time() - start
        return self.report()

    def report(self):
        routes = {route: dict(sorted(((str(k), v) for k, v in counts.items()))) for route, counts in
                  self.stats.routes.items()}
        totals = collections.Counter()
        for route, counts in self.stats.routes.items():
            if route == "setup":
                continue
            for status, count in counts.items():
                totals["requests"] += count
                if status == "conn" or status >= 500:
                    totals["errors"] += count
                elif status >= 400:
                    totals["4xx"] += count
        summary = {
            "duration_s": round(self.duration, 1), "rate_target": self.args.rate,
            "requests": totals["requests"], "req_per_s": round(totals["requests"] / self.duration, 1),
            "errors": totals["errors"], "errors_4xx": totals["4xx"], "skipped": self.stats.skipped_total,
            "routes": routes, "websocket": dict(self.stats.ws), "direct_sends_accepted": self.direct_sent,
            "unexpected": {k: v for k, v in self.stats.samples.items()}, "herald_died": self.herald_died,
        }
        with open(self.args.summary, "w") as f:
            json.dump(summary, f, indent=1)
        print(f"== traffic: {summary['requests']:,} requests in {summary['duration_s']:.0f} s "
              f"({summary['req_per_s']:.1f}/s of {self.args.rate} targeted), errors (5xx + connection) "
              f"{summary['errors']}, 4xx {summary['errors_4xx']}, skipped (generator at its in-flight cap) "
              f"{summary['skipped']}")
        for route, counts in sorted(routes.items()):
            print(f"   {route:<10} " + "  ".join(f"{k}: {v:,}" for k, v in counts.items()))
        ws = self.stats.ws
        print(f"   websocket  connects {ws['connects']:,}  events {ws['events']:,} (direct sends accepted "
              f"{self.direct_sent:,}; the last ones may still be on their way)  confirms {ws['confirms']:,}  "
              f"duplicates {ws['duplicates']}  failed results {ws['failed_results']}  errors {ws['errors']}")
        for key, bodies in self.stats.samples.items():
            for body in bodies:
                print(f"   unexpected {key}: {body}")
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True)
    parser.add_argument("--server-key", required=True)
    parser.add_argument("--client-key", required=True)
    parser.add_argument("--pid", type=int, required=True, help="Herald's process")
    parser.add_argument("--port", type=int, required=True, help="Herald's listening port")
    parser.add_argument("--sink-port", type=int, required=True, help="the provider stand-in's port")
    parser.add_argument("--sink-log", required=True, help="the stand-in's access log (kind status per line)")
    parser.add_argument("--database", required=True, help="the SQLite file or the postgres:// URL")
    parser.add_argument("--seconds", type=float, default=3600)
    parser.add_argument("--rate", type=float, default=300, help="requests/s in all")
    parser.add_argument("--interval", type=float, default=float(os.environ.get("SOAK_INTERVAL", 10)))
    parser.add_argument("--devices", type=int, default=int(os.environ.get("SOAK_DEVICES", 5000)))
    parser.add_argument("--users", type=int, default=int(os.environ.get("SOAK_USERS", 2000)))
    parser.add_argument("--channels", type=int, default=int(os.environ.get("SOAK_CHANNELS", 50)))
    parser.add_argument("--ws-clients", type=int, default=int(os.environ.get("SOAK_WS_CLIENTS", 40)))
    parser.add_argument("--max-inflight", type=int, default=int(os.environ.get("SOAK_MAX_INFLIGHT", 256)))
    parser.add_argument("--http-connections", type=int, default=int(os.environ.get("SOAK_HTTP_CONNECTIONS", 64)),
                        help="the generator's keep-alive pool (Herald's inbound connections vary by up to this)")
    parser.add_argument("--csv", required=True)
    parser.add_argument("--summary", required=True)
    args = parser.parse_args()
    soak = Soak(args)
    sys.exit(asyncio.run(soak.run()))


if __name__ == "__main__":
    main()
