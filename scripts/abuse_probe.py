"""Raw-socket abuse of a running Herald: each probe must get a clean answer (or a closed
connection), never a hang or a crash, and the server must still answer GET /healthz afterwards.

What it proves, one section each:
- oversized bodies (past `http.max_body_bytes`) on a native route and each dialect's: `413` in the
  dialect's error shape (AOVIS's guide knows only 400 invalid_body; LeanCloud's "too large" is
  code 116, with 400), with an honest Content-Length and with chunked encoding; a lying
  Content-Length (smaller, or far larger than what is sent) and none at all get a 4xx or a close;
- JSON nested 100,000 deep: `400` in the dialect's shape;
- invalid UTF-8 in JSON strings and in the SNS form body: `400` in the dialect's shape;
- huge headers (one of 100 KB; 10,000 small ones): a 4xx or a close, never a hang;
- slowloris: request headers sent a byte a second, and a body sent a byte a second, are cut off
  (closed, or answered 408) within `http.header_timeout_seconds` / `http.body_timeout_seconds`
  (set to 2 here) plus 3 s; skipped when the server does not know those keys;
- the direct channel's WebSocket (/v1/channel, authenticated with a channel credential): a frame
  past the 16 KiB limit (sent, or only declared) closes with 1009 or drops the connection; reserved
  bits, an unmasked client frame, an unknown opcode, a fragmented control frame close with 1002
  (invalid UTF-8 in a text frame: 1007, or Home Assistant's `invalid_format` result) or drop it.

    .python/tools/bin/python3 scripts/abuse_probe.py   (scripts/dialect-fuzz runs it after the fuzzer)

HERALD_BINARY picks the binary (default .build/debug/herald). Prints one line per check and
`abuse-probe: N checks, F failures, S skipped`; exits 1 on any failure. The server is started and
stopped here (scripts/herald_harness.py), so nothing is left running.
"""

from __future__ import annotations

import base64
import email.parser
import hashlib
import http.client
import json
import mmap
import os
import select
import signal
import socket
import struct
import sys
import time
import urllib.parse
from dataclasses import dataclass
from typing import Callable, Iterable

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dialect_fuzz import USER, shape_problems  # noqa: E402
from herald_harness import Herald, Response  # noqa: E402

MAX_BODY = 262_144  # room for 100,000-deep JSON under the limit
TIMEOUT = 2  # http.header_timeout_seconds and http.body_timeout_seconds of the probed server
SLACK = 3
WS_LIMIT = 16 * 1024  # Hummingbird's WebSocket frame limit, which Herald keeps


class Skip(Exception):
    pass


# --- raw HTTP ---------------------------------------------------------------------------------


@dataclass
class Exchange:
    """What came back on one raw connection: the first response (None: none), whether the server
    closed the connection, and how long it took."""

    answer: Response | None
    closed: bool
    seconds: float
    error: str = ""

    def describe(self) -> str:
        if self.answer is None:
            return f"no answer, {'closed' if self.closed else 'still open'} after {self.seconds:.1f} s {self.error}".rstrip()
        body = self.answer.body[:160].decode("utf-8", "backslashreplace")
        return f"{self.answer.status} {self.answer.headers.get('Content-Type')} {body} ({self.seconds:.1f} s)"


def parse_response(data: bytes) -> tuple[Response | None, bool]:
    """The first HTTP response in `data`, and whether it is complete (by its Content-Length)."""
    head, separator, rest = data.partition(b"\r\n\r\n")
    if not separator:
        return None, False
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return None, False
    message = http_message(lines[1:])
    length = int(message.get("Content-Length") or 0)
    return Response(status, message, rest[:length]), len(rest) >= length


def http_message(lines: list[str]) -> http.client.HTTPMessage:
    return email.parser.Parser(_class=http.client.HTTPMessage).parsestr("\r\n".join(lines) + "\r\n\r\n")


def exchange(h: Herald, pieces: Iterable[bytes | float], wait: float = 10.0) -> Exchange:
    """Sends `pieces` on a new connection (a float sleeps that long, and stops early when the server
    has answered or closed), then reads until the first response is complete, the server closes,
    or `wait` seconds pass."""
    started = time.monotonic()
    sock = socket.create_connection((h.host, h.port), timeout=wait)
    data, closed, error = b"", False, ""

    def receive(timeout: float) -> None:
        nonlocal data, closed
        readable, _, _ = select.select([sock], [], [], max(timeout, 0))
        if readable:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, OSError):
                chunk = b""
            if chunk:
                data += chunk
            else:
                closed = True

    try:
        for piece in pieces:
            if closed or parse_response(data)[1]:
                break
            if isinstance(piece, float):
                receive(piece)
                continue
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError) as failure:
                error = f"({type(failure).__name__} while sending)"
                break
            receive(0)
        deadline = started + wait
        while not closed and not parse_response(data)[1] and time.monotonic() < deadline:
            receive(deadline - time.monotonic())
    finally:
        sock.close()
    return Exchange(parse_response(data)[0], closed, time.monotonic() - started, error)


def request_head(h: Herald, method: str, path: str, headers: dict) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {h.host}:{h.port}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# --- the probed routes ------------------------------------------------------------------------


@dataclass
class Target:
    """A route taking a body: its error shape, credentials (given the body, for SigV4), a body
    template whose `@@` is replaced by the probe's bytes, and its content type."""

    name: str
    path: str
    shape: str
    credentials: Callable[[Herald, bytes], dict]
    template: bytes
    content_type: str = "application/json"
    # what a body past the limit gets: 413, but AOVIS's guide has only 400 invalid_body, and
    # LeanCloud's code 116 ("too large") comes with its 400
    too_large: tuple[int, ...] = (413,)

    def body(self, text: bytes) -> bytes:
        return self.template.replace(b"@@", text)


def targets() -> list[Target]:
    user = lambda h, body: h.user_headers(None, USER)  # noqa: E731
    server = lambda h, body: h.key_headers()  # noqa: E731
    return [
        Target("native", "/v1/installations", "native", server, b'{"platform":"ios","token":"@@"}'),
        Target("ArgusAI", "/api/v1/push/mobile/register", "native", user,
               b'{"platform":"ios","device_token":"@@","device_id":"5F1A4C83-2E0B-4E58-9C0A-3E7A51C1D2B4"}'),
        Target("AOVIS register", "/api/internal/push/register", "aovis", user, b'{"platform":"ios","token":"@@"}',
               too_large=(400, 413)),
        Target("AOVIS events", "/api/internal/events", "native", server,
               b'{"eventId":"e1","deviceId":"cam","classifyEventType":"person","classifySummaryShort":"@@"}'),
        Target("LeanCloud installations", "/1.1/installations", "leancloud",
               lambda h, body: h.leancloud_headers(master=True), b'{"deviceType":"ios","deviceToken":"@@"}',
               too_large=(400, 413)),
        Target("LeanCloud push", "/1.1/push", "leancloud", lambda h, body: h.leancloud_headers(master=True),
               b'{"channels":["x"],"data":{"alert":"@@"}}', too_large=(400, 413)),
        Target("Home Assistant", "/ha/push", "ha", lambda h, body: {},
               b'{"message":"@@","push_token":"x","registration_info":{"app_id":"a","app_version":"1"}}'),
        Target("SNS", "/sns", "sns", lambda h, body: h.sns_sign(None, body),
               b"Action=CreateTopic&Version=2010-03-31&Name=@@", "application/x-www-form-urlencoded; charset=utf-8"),
    ]


# --- running ----------------------------------------------------------------------------------


class Probe:
    def __init__(self, h: Herald) -> None:
        self.h = h
        self.checks = self.failures = self.skipped = 0

    def check(self, section: str, name: str, run: Callable[[], str | None]) -> None:
        """Runs one check: `run` returns a problem (None: fine) or raises Skip; then the server must
        still be healthy."""
        self.checks += 1
        try:
            problem = run()
        except Skip as reason:
            self.skipped += 1
            print(f"SKIP {section}: {name}: {reason}")
            return
        except OSError as error:
            problem = f"{type(error).__name__}: {error}"
        if problem is None and not self.h.healthy():
            problem = "the server no longer answers GET /healthz" + ("" if self.h.alive() else f"; it died:\n{self.h.log_tail()}")
        if problem:
            self.failures += 1
            print(f"FAIL {section}: {name}: {problem}")
        else:
            print(f"ok   {section}: {name}")

    def answered(self, target: Target, result: Exchange, statuses: tuple[int, ...]) -> str | None:
        """A problem unless `result` is one of `statuses` in the target's error shape."""
        if result.answer is None or result.answer.status not in statuses:
            return f"expected {'/'.join(map(str, statuses))}, got {result.describe()}"
        problems = shape_problems(target.shape, result.answer)
        return f"{'; '.join(problems)}: {result.describe()}" if problems else None

    def too_large(self, target: Target, result: Exchange) -> str | None:
        """`answered` with the target's too-large statuses; LeanCloud's must be code 116."""
        problem = self.answered(target, result, target.too_large)
        if problem is None and target.shape == "leancloud" and json.loads(result.answer.body).get("code") != 116:
            problem = f"expected LeanCloud code 116, got {result.describe()}"
        return problem

    def clean(self, target: Target | None, result: Exchange, limit: float) -> str | None:
        """A problem unless the server answered 4xx (in the target's shape) or closed within `limit` s."""
        if result.answer is not None:
            if not 400 <= result.answer.status < 500:
                return f"expected a 4xx or a close, got {result.describe()}"
            problems = shape_problems(target.shape, result.answer) if target else []
            return f"{'; '.join(problems)}: {result.describe()}" if problems else None
        if not result.closed or result.seconds > limit:
            return f"neither answered nor closed within {limit:g} s: {result.describe()}"
        return None

    # --- sections ---

    def oversized(self) -> None:
        for target in targets():
            body = target.body(b"a" * (MAX_BODY + 4096))
            headers = {**target.credentials(self.h, body), "Content-Type": target.content_type}
            section = f"oversized body, {target.name} POST {target.path}"
            self.check(section, "Content-Length", lambda: self.too_large(target, exchange(self.h, [
                request_head(self.h, "POST", target.path, {**headers, "Content-Length": len(body)}), body])))
            chunks = [body[i:i + 8192] for i in range(0, len(body), 8192)]
            chunked = [b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks] + [b"0\r\n\r\n"]
            self.check(section, "chunked", lambda: self.too_large(target, exchange(self.h, [
                request_head(self.h, "POST", target.path, {**headers, "Transfer-Encoding": "chunked"}), *chunked])))
            self.check(section, "Content-Length smaller than the body", lambda: self.clean(target, exchange(self.h, [
                request_head(self.h, "POST", target.path, {**headers, "Content-Length": 20}), body]), 10))
            self.check(section, "Content-Length far larger than what is sent", lambda: self.clean(target, exchange(self.h, [
                request_head(self.h, "POST", target.path, {**headers, "Content-Length": 100 * MAX_BODY}), body[:1000]],
                wait=TIMEOUT + SLACK + 1), TIMEOUT + SLACK))
            self.check(section, "no Content-Length", lambda: self.clean(target, exchange(self.h, [
                request_head(self.h, "POST", target.path, headers), body]), 10))

    def deep_json(self) -> None:
        for target in targets():
            if target.shape == "sns":
                continue
            for name, body in (("100,000 [", b"[" * 100_000 + b"]" * 100_000), ("40,000 {\"a\":", b'{"a":' * 40_000 + b"1" + b"}" * 40_000),
                               ("100,000 [ in a string field", target.body(b'"' + b"[" * 100_000))):
                # the last is valid JSON only up to the field: a string that ends early, then arrays
                headers = {**target.credentials(self.h, body), "Content-Type": target.content_type, "Content-Length": len(body)}
                self.check(f"deep JSON, {target.name} POST {target.path}", name, lambda: self.answered(
                    target, exchange(self.h, [request_head(self.h, "POST", target.path, headers), body]), (400,)))

    def invalid_utf8(self) -> None:
        samples = {"0xFF 0xFE": b"\xff\xfe", "overlong /": b"\xc0\xaf", "UTF-16 surrogate": b"\xed\xa0\x80",
                   "truncated": b"ok\xe2\x82"}
        for target in targets():
            for name, raw in samples.items():
                text = urllib.parse.quote_from_bytes(raw).encode() if target.shape == "sns" else raw
                for label, bytes_ in (("raw", raw), ("%-encoded", text)) if target.shape == "sns" else (("", raw),):
                    body = target.body(bytes_)
                    headers = {**target.credentials(self.h, body), "Content-Type": target.content_type,
                               "Content-Length": len(body)}
                    self.check(f"invalid UTF-8, {target.name} POST {target.path}", f"{name} {label}".strip(),
                               lambda: self.answered(target, exchange(self.h, [
                                   request_head(self.h, "POST", target.path, headers), body]), (400,)))

    def huge_headers(self) -> None:
        user = self.h.user_headers(None, USER)
        for name, extra in (("one 100 KB header", {"X-Big": "b" * 100_000}),
                            ("10,000 small headers", {f"X-H{n}": "v" for n in range(10_000)})):
            for path in ("/api/v1/devices", "/healthz"):
                self.check("huge headers", f"{name}, GET {path}", lambda: self.clean(
                    None, exchange(self.h, [request_head(self.h, "GET", path, {**user, **extra})]), 10))

    def slowloris(self, supported: str | None) -> None:
        def drip(head: bytes, body: bytes) -> str | None:
            if supported:
                raise Skip(supported)
            pieces: list[bytes | float] = []
            pieces += [head] if body else []
            for byte in (body or head):
                pieces += [bytes([byte]), 1.0]
            result = exchange(self.h, pieces, wait=TIMEOUT + SLACK + 2)
            if result.answer is not None and result.answer.status != 408:
                return f"expected 408 or a close, got {result.describe()}"
            if result.answer is None and not result.closed or result.seconds > TIMEOUT + SLACK:
                return f"not cut off within {TIMEOUT} + {SLACK} s: {result.describe()}"
            return None

        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: slowloris\r\nAccept: */*\r\n\r\n"
        self.check("slowloris", "headers a byte a second", lambda: drip(head, b""))
        body = json.dumps({"platform": "ios", "token": "ab" * 32}).encode()
        post = request_head(self.h, "POST", "/v1/installations",
                            {**self.h.key_headers(), "Content-Type": "application/json", "Content-Length": len(body)})
        self.check("slowloris", "body a byte a second", lambda: drip(post, body))

    def websocket(self) -> None:
        server = self.h.key_headers()
        installation = self.h.request("POST", "/v1/installations", server,
                                      {"platform": "ios", "token": os.urandom(32).hex()}).json()["id"]
        answer = self.h.request("POST", f"/v1/installations/{installation}/channel-credential", server)
        assert answer.status in (200, 201), answer
        credential = self.h.register_secret(answer.json()["credential"])

        def opened() -> WebSocket:
            ws = WebSocket(self.h)
            ws.send(1, json.dumps({"type": "auth", "access_token": credential}).encode())
            kind = json.loads(ws.message())["type"]
            if kind != "auth_ok":
                raise AssertionError(f"auth answered {kind}")
            return ws

        def probe(frame: bytes, codes: set[int], tail: bytes = b"", answer: str | None = None) -> str | None:
            """`frame` (then `tail`) must close the socket with one of `codes` or drop it; or, with
            `answer`, get a text message containing it (Home Assistant's error result)."""
            ws = opened()
            try:
                ws.sock.sendall(frame)
                if tail:
                    try:
                        ws.sock.sendall(tail)
                    except OSError:
                        pass
                code, seconds = ws.close_code(wait=5)
            finally:
                ws.sock.close()
            if isinstance(code, bytes):
                return None if answer and answer.encode() in code else f"answered {code[:200]!r} instead of closing"
            if code == "open":
                return f"the connection is still open after {seconds:.1f} s"
            if code not in codes | {"closed"}:
                return f"closed with {code}, expected {sorted(codes)} or a dropped connection"
            return None

        def roundtrip() -> str | None:
            ws = opened()
            ws.send(1, json.dumps({"id": 1, "type": "ping"}).encode())
            message = json.loads(ws.message())
            ws.sock.close()
            return None if message.get("type") == "pong" else f"ping answered {message}"

        big = os.urandom(4 * WS_LIMIT)
        section = "WebSocket /v1/channel"
        self.check(section, "a well-formed exchange (ping → pong)", roundtrip)
        self.check(section, f"a {len(big)}-byte text frame", lambda: probe(frame_bytes(1, big), {1009}))
        self.check(section, "a frame declaring 2^40 bytes", lambda: probe(
            frame_bytes(2, b"", declared=1 << 40), {1009}, os.urandom(4096)))
        self.check(section, "reserved bits set", lambda: probe(frame_bytes(1, b'{"id":2,"type":"ping"}', rsv=0x70), {1002}))
        self.check(section, "an unmasked client frame", lambda: probe(frame_bytes(1, b'{"id":2,"type":"ping"}', mask=False), {1002}))
        self.check(section, "opcode 0x3", lambda: probe(frame_bytes(3, b"x"), {1002}))
        self.check(section, "a fragmented ping", lambda: probe(frame_bytes(9, b"x", fin=False), {1002}))
        self.check(section, "invalid UTF-8 in a text frame (1007, a close, or an invalid_format result)",
                   lambda: probe(frame_bytes(1, b"\xff\xfe"), {1007, 1002}, answer='"invalid_format"'))

    def run(self, slowloris_unsupported: str | None) -> None:
        self.oversized()
        self.deep_json()
        self.invalid_utf8()
        self.huge_headers()
        self.slowloris(slowloris_unsupported)
        self.websocket()


# --- WebSocket ------------------------------------------------------------------------------


def frame_bytes(opcode: int, payload: bytes, fin: bool = True, rsv: int = 0, mask: bool = True,
                declared: int | None = None) -> bytes:
    """A WebSocket frame (RFC 6455 §5.2); `declared` claims another payload length."""
    length = len(payload) if declared is None else declared
    first = (0x80 if fin else 0) | rsv | opcode
    masked = 0x80 if mask else 0
    if length < 126:
        head = struct.pack("!BB", first, masked | length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", first, masked | 126, length)
    else:
        head = struct.pack("!BBQ", first, masked | 127, length)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class WebSocket:
    """A client connection to /v1/channel, handshake done, `auth_required` read."""

    GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, h: Herald, path: str = "/v1/channel") -> None:
        self.sock = socket.create_connection((h.host, h.port), timeout=10)
        self.buffer = b""
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(request_head(h, "GET", path, {
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13"}))
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise AssertionError(f"the upgrade was refused: {self.buffer[:200]!r}")
            self.buffer += chunk
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        accept = base64.b64encode(hashlib.sha1((key + self.GUID).encode()).digest()).decode()
        if not head.startswith(b"HTTP/1.1 101") or accept.encode() not in head:
            raise AssertionError(f"not a WebSocket upgrade: {head[:300]!r}")
        if json.loads(self.message()).get("type") != "auth_required":
            raise AssertionError("no auth_required")

    def send(self, opcode: int, payload: bytes) -> None:
        self.sock.sendall(frame_bytes(opcode, payload))

    def _read(self, count: int) -> bytes:
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def frame(self) -> tuple[int, bytes]:
        first, second = self._read(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._read(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._read(8))[0]
        return first & 0x0F, self._read(length)

    def message(self) -> bytes:
        """The next text or binary message (pings are skipped)."""
        while True:
            opcode, payload = self.frame()
            if opcode in (1, 2):
                return payload
            if opcode == 8:
                raise AssertionError(f"closed: {payload!r}")

    def close_code(self, wait: float) -> tuple[int | str | bytes, float]:
        """The close code the server sends (or "closed" when it just drops the connection, "open"
        when it does neither within `wait` s, the message when it answers one), and after how long."""
        started = time.monotonic()
        self.sock.settimeout(wait)
        try:
            while True:
                opcode, payload = self.frame()
                if opcode in (1, 2):
                    return payload, time.monotonic() - started
                if opcode == 8:
                    return (struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else "closed"), time.monotonic() - started
        except socket.timeout:
            return "open", time.monotonic() - started
        except (EOFError, ConnectionResetError, OSError):
            return "closed", time.monotonic() - started


def binary_mentions(path: str, text: bytes) -> bool:
    """Whether the executable holds `text` (Herald ignores configuration keys it does not know, so
    this is how a probe tells an old binary from a broken feature)."""
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return data.find(text) >= 0


def main() -> int:
    extra = {"http": {"max_body_bytes": MAX_BODY, "header_timeout_seconds": TIMEOUT, "body_timeout_seconds": TIMEOUT}}
    unsupported = None
    try:
        h = Herald(extra_config=extra).start()
    except RuntimeError as refused:
        unsupported = f"the server refused http.header_timeout_seconds / body_timeout_seconds ({str(refused).splitlines()[1][:200]})"
        h = Herald(extra_config={"http": {"max_body_bytes": MAX_BODY}}).start()
    try:
        if unsupported is None and not binary_mentions(h.binary, b"header_timeout_seconds"):
            unsupported = "this Herald does not know http.header_timeout_seconds yet (the key is ignored)"
        probe = Probe(h)
        probe.run(unsupported)
        if not h.alive():
            probe.failures += 1
            print(f"FAIL the server died; its log ends:\n{h.log_tail()}")
    finally:
        h.stop(timeout=10)
    print(f"abuse-probe: {probe.checks} checks, {probe.failures} failures, {probe.skipped} skipped")
    return 1 if probe.failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
