#!/usr/bin/env python3
"""Runs a throwaway Synapse homeserver whose HTTP pusher calls a Matrix push gateway, step by step.

Test-only peer of Herald's Matrix Push Gateway API (POST /_matrix/push/v1/notify, as Sygnal
implements it): the notifications come from Synapse's own HTTP pusher (synapse.push.httppusher),
so their JSON, the way the gateway's answer is read (`rejected` pushkeys are removed, a non-2xx
answer or a transport error backs off and retries) and the push rules that decide them are the
real homeserver's. Runs in .python/matrix (scripts/bootstrap), Synapse pinned by
python/matrix-py3XX.lock.

On start it writes a homeserver.yaml into a temporary directory (or --dir): server_name
`localhost`, SQLite, one plain-HTTP client listener on 127.0.0.1 on a free port, no open
registration (a random registration_shared_secret instead), no key servers, no stats, rate limits
out of the way, ip_range_whitelist 127.0.0.0/8 and ::1 (Synapse's pushers refuse loopback
addresses otherwise), a signing key, the media store and homeserver.log (Synapse's log; its own
stdout and stderr go to homeserver.out) in the directory. It starts `python -m
synapse.app.homeserver`, waits for GET /health, registers @alice:localhost and @bob:localhost with
the shared-secret admin API and logs them in, and alice makes a private room that bob joins (two
members: Synapse's default rule .m.rule.room_one_to_one notifies bob of alice's messages, with
sound "default", so prio "high"; a body that contains "bob", bob's display name, highlights too).

Usage:
  .python/matrix/bin/python3 scripts/matrix-synapse.py [--dir DIR] [--keep] [--timeout 90]

The directory is removed at the end unless it was given with --dir or --keep is set.

Protocol: JSON lines, one object per line each way. First, on stdout:
  {"ready": true, "homeserver": "http://127.0.0.1:PORT", "room_id": "!...", "alice": "@alice:localhost",
   "bob": "@bob:localhost", "dir": "...", "seconds": 7.1}
or, when the homeserver could not be set up (then the exit status is 1):
  {"ready": false, "error": "...", "log": "<the last lines of homeserver.log and homeserver.out>"}
Then one command per line on stdin, each answered with one line:
  {"cmd": "set_pusher", "app_id": A, "pushkey": K, "url": "http://127.0.0.1:N/_matrix/push/v1/notify",
   "format": "event_id_only" | null, "data": {...}?}     -> {"ok": true}
      an HTTP pusher for bob (POST /_matrix/client/v3/pushers/set, lang en); "data" (optional) is
      merged into the pusher's data beside url and format (e.g. default_payload)
  {"cmd": "remove_pusher", "app_id": A, "pushkey": K}   -> {"ok": true}   (kind null)
  {"cmd": "send", "body": "text"}                      -> {"ok": true, "event_id": "$..."}
      alice sends an m.room.message (m.text) to the room
  {"cmd": "pushers"}                                   -> {"ok": true, "pushers": [{"app_id": ..., "pushkey": ...,
      "kind": "http", "data": {...}, ...}]}  (GET /_matrix/client/v3/pushers, bob's, as Synapse lists them)
  {"cmd": "wait_pushers", "count": N, "timeout": S}    -> {"ok": true|false, "pushers": [...]}
      polls until bob has exactly N pushers (ok true) or S seconds (default 10) pass (ok false)
  {"cmd": "quit"}                                      -> {"ok": true}, then Synapse is stopped, exit 0
A command that fails answers {"ok": false, "error": "..."} (with "log" when Synapse has died) and
the driver goes on. On EOF on stdin, SIGTERM, SIGINT or any failure of the driver itself, Synapse is
stopped (SIGTERM, then SIGKILL after 10 s); Synapse also gets SIGKILL when the driver dies
(PR_SET_PDEATHSIG), and the driver stops itself when its own parent dies, so nothing outlives the
test.
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from signedjson.key import generate_signing_key, write_signing_keys

SERVER_NAME = "localhost"
PASSWORD = "correct horse battery staple"
# Out of the tests' way: every rate limit a test could reach.
NO_LIMIT = {"per_second": 10000, "burst_count": 10000}


class Fatal(Exception):
    """The homeserver cannot be set up or has gone."""


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In Synapse's process before exec: SIGKILL when the driver dies (its main thread spawns it)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except (OSError, AttributeError):
        pass


def homeserver_config(directory: Path, port: int) -> dict[str, Any]:
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(directory / "homeserver.pid"),
        "public_baseurl": f"http://127.0.0.1:{port}/",
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(directory / "homeserver.db")}},
        "log_config": str(directory / "log.yaml"),
        "media_store_path": str(directory / "media_store"),
        "signing_key_path": str(directory / "signing.key"),
        "enable_registration": False,
        "registration_shared_secret": secrets.token_hex(32),
        "macaroon_secret_key": secrets.token_hex(32),
        "form_secret": secrets.token_hex(32),
        "report_stats": False,
        "enable_metrics": False,
        # No key servers (no network) and no federation: a homeserver of its own.
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        # Password hashing made cheap: the users are throwaway.
        "bcrypt_rounds": 4,
        # Synapse's outbound HTTP client (pushers among its users) blocks ip_range_blacklist,
        # loopback included by default, unless an address is in ip_range_whitelist.
        "ip_range_whitelist": ["127.0.0.0/8", "::1/128"],
        "rc_message": NO_LIMIT,
        "rc_registration": NO_LIMIT,
        "rc_login": {"address": NO_LIMIT, "account": NO_LIMIT, "failed_attempts": NO_LIMIT},
        "rc_joins": {"local": NO_LIMIT, "remote": NO_LIMIT},
        "rc_joins_per_room": NO_LIMIT,
        "rc_invites": {"per_room": NO_LIMIT, "per_user": NO_LIMIT, "per_issuer": NO_LIMIT},
        "rc_room_creation": NO_LIMIT,
        "rc_admin_redaction": NO_LIMIT,
        "rc_3pid_validation": NO_LIMIT,
        "rc_presence": {"per_user": NO_LIMIT},
        "rc_profile": NO_LIMIT,
        "rc_delayed_event_mgmt": NO_LIMIT,
    }


def log_config(directory: Path) -> dict[str, Any]:
    return {
        "version": 1,
        "formatters": {"precise": {"format": "%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(message)s"}},
        "handlers": {
            "file": {
                "class": "logging.FileHandler",
                "formatter": "precise",
                "filename": str(directory / "homeserver.log"),
                "encoding": "utf8",
            }
        },
        # INFO for the pushers (what they sent, a rejected pushkey removed, a failure's backoff).
        "loggers": {"synapse.push": {"level": "INFO"}, "synapse.storage.SQL": {"level": "WARNING"}},
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }


class Homeserver:
    def __init__(self, directory: Path, timeout: float) -> None:
        self.directory = directory
        self.timeout = timeout
        self.process: subprocess.Popen | None = None
        self.out = None
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.config = homeserver_config(directory, self.port)
        # No proxy for the driver's own requests either.
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.tokens: dict[str, str] = {}
        self.room_id = ""
        self.txn = 0

    # --- the process ---------------------------------------------------------------------------
    def write_files(self) -> None:
        d = self.directory
        (d / "media_store").mkdir(parents=True, exist_ok=True)
        (d / "homeserver.yaml").write_text(yaml.safe_dump(self.config, sort_keys=False))
        (d / "log.yaml").write_text(yaml.safe_dump(log_config(d), sort_keys=False))
        with open(d / "signing.key", "w") as stream:
            write_signing_keys(stream, [generate_signing_key("a_" + secrets.token_hex(2))])

    def start(self) -> None:
        env = dict(os.environ)
        # Synapse's pushers go through http(s)_proxy when one is set: never here.
        for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
            env.pop(name, None)
        self.out = open(self.directory / "homeserver.out", "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "synapse.app.homeserver", "-c", str(self.directory / "homeserver.yaml")],
            cwd=self.directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.out,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.out is not None:
            self.out.close()
            self.out = None

    def check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            code = None if self.process is None else self.process.returncode
            raise Fatal(f"synapse exited (status {code})")

    def log_tail(self, lines: int = 40) -> str:
        parts = []
        for name in ("homeserver.log", "homeserver.out"):
            path = self.directory / name
            try:
                text = path.read_text(errors="replace").splitlines()
            except OSError:
                continue
            if text:
                parts.append(f"== {name}\n" + "\n".join(text[-lines:]))
        return "\n".join(parts)

    # --- HTTP ----------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with self.opener.open(request, timeout=30) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"{method} {path}: HTTP {error.code} {error.read().decode(errors='replace')}") from None
        return json.loads(raw) if raw else {}

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            self.check_alive()
            try:
                with self.opener.open(self.base + "/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                raise Fatal(f"GET /health did not answer within {self.timeout:g} s")
            time.sleep(0.2)

    # --- users and the room ----------------------------------------------------------------------
    def register(self, user: str) -> None:
        """Shared-secret registration (/_synapse/admin/v1/register), then a password login."""
        path = "/_synapse/admin/v1/register"
        nonce = self.request("GET", path)["nonce"]
        mac = hmac.new(self.config["registration_shared_secret"].encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), user.encode(), PASSWORD.encode(), b"notadmin"]))
        self.request(
            "POST",
            path,
            {"nonce": nonce, "username": user, "password": PASSWORD, "admin": False, "mac": mac.hexdigest()},
        )
        login = self.request(
            "POST",
            "/_matrix/client/v3/login",
            {
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": user},
                "password": PASSWORD,
                "initial_device_display_name": f"{user}'s test device",
            },
        )
        self.tokens[user] = login["access_token"]

    def set_up(self) -> None:
        self.write_files()
        self.start()
        self.wait_healthy()
        for user in ("alice", "bob"):
            self.register(user)
        room = self.request(
            "POST", "/_matrix/client/v3/createRoom", {"preset": "private_chat", "name": "Herald test"},
            self.tokens["alice"],
        )
        self.room_id = room["room_id"]
        quoted = urllib.parse.quote(self.room_id, safe="")
        self.request(
            "POST", f"/_matrix/client/v3/rooms/{quoted}/invite", {"user_id": self.user("bob")}, self.tokens["alice"]
        )
        self.request("POST", f"/_matrix/client/v3/join/{quoted}", {}, self.tokens["bob"])

    @staticmethod
    def user(name: str) -> str:
        return f"@{name}:{SERVER_NAME}"

    # --- commands --------------------------------------------------------------------------------
    def pushers(self) -> list[dict[str, Any]]:
        return self.request("GET", "/_matrix/client/v3/pushers", token=self.tokens["bob"]).get("pushers", [])

    def command(self, message: dict[str, Any]) -> dict[str, Any]:
        cmd = message.get("cmd")
        if cmd == "set_pusher":
            data: dict[str, Any] = dict(message.get("data") or {})
            data["url"] = message["url"]
            if message.get("format") is not None:
                data["format"] = message["format"]
            self.request(
                "POST",
                "/_matrix/client/v3/pushers/set",
                {
                    "kind": "http",
                    "app_id": message["app_id"],
                    "pushkey": message["pushkey"],
                    "app_display_name": message.get("app_display_name", "Herald test"),
                    "device_display_name": message.get("device_display_name", "bob's phone"),
                    "lang": "en",
                    "data": data,
                },
                self.tokens["bob"],
            )
            return {"ok": True}
        if cmd == "remove_pusher":
            self.request(
                "POST",
                "/_matrix/client/v3/pushers/set",
                {"kind": None, "app_id": message["app_id"], "pushkey": message["pushkey"]},
                self.tokens["bob"],
            )
            return {"ok": True}
        if cmd == "send":
            self.txn += 1
            quoted = urllib.parse.quote(self.room_id, safe="")
            answer = self.request(
                "PUT",
                f"/_matrix/client/v3/rooms/{quoted}/send/m.room.message/herald-{os.getpid()}-{self.txn}",
                {"msgtype": "m.text", "body": message["body"]},
                self.tokens["alice"],
            )
            return {"ok": True, "event_id": answer["event_id"]}
        if cmd == "pushers":
            return {"ok": True, "pushers": self.pushers()}
        if cmd == "wait_pushers":
            count = int(message["count"])
            deadline = time.monotonic() + float(message.get("timeout", 10))
            while True:
                pushers = self.pushers()
                if len(pushers) == count:
                    return {"ok": True, "pushers": pushers}
                if time.monotonic() > deadline:
                    return {"ok": False, "pushers": pushers, "error": f"{len(pushers)} pushers, not {count}"}
                time.sleep(0.1)
        raise ValueError(f"unknown command {cmd!r}")


def serve(homeserver: Homeserver) -> int:
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("a command is a JSON object")
            if message.get("cmd") == "quit":
                emit({"ok": True})
                return 0
            homeserver.check_alive()
            answer = homeserver.command(message)
        except Fatal as error:
            answer = {"ok": False, "error": str(error), "log": homeserver.log_tail()}
        except Exception as error:  # noqa: BLE001: a failed command is answered, and the driver goes on
            answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            if homeserver.process is None or homeserver.process.poll() is not None:
                answer["log"] = homeserver.log_tail()
        emit(answer)
    return 0  # EOF: the test has gone


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)


def _terminate(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="the homeserver's directory (kept); default: a temporary one (removed)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--timeout", type=float, default=90, help="seconds for Synapse to answer GET /health")
    arguments = parser.parse_args()

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    # When the test that runs the driver dies, its end of stdin closes (EOF); in case it was shared,
    # the driver also watches its parent and stops Synapse on its way out. (Not PR_SET_PDEATHSIG for
    # the driver itself: that fires when the parent *thread* that spawned it ends.)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()

    started = time.monotonic()
    if arguments.dir:
        directory = Path(arguments.dir).resolve()
        directory.mkdir(parents=True, exist_ok=True)
    else:
        directory = Path(tempfile.mkdtemp(prefix="herald-synapse-"))
    remove = not arguments.dir and not arguments.keep
    homeserver = Homeserver(directory, arguments.timeout)
    try:
        try:
            homeserver.set_up()
        except Exception as error:  # noqa: BLE001: reported on the channel
            homeserver.stop()
            emit({"ready": False, "error": f"{type(error).__name__}: {error}", "log": homeserver.log_tail()})
            return 1
        emit(
            {
                "ready": True,
                "homeserver": homeserver.base,
                "room_id": homeserver.room_id,
                "alice": homeserver.user("alice"),
                "bob": homeserver.user("bob"),
                "dir": str(directory),
                "seconds": round(time.monotonic() - started, 2),
            }
        )
        return serve(homeserver)
    finally:
        homeserver.stop()
        if remove:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
