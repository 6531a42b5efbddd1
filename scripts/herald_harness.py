"""A throwaway Herald server for Python tests: `Herald` starts one and hands out its credentials.

What it sets up (in a temporary directory, removed on `stop()`):
- a JSON configuration with N apps (default one, `a`; pass `apps=("a", "b")` for two), each with a
  server key, a client key, user tokens (an HS256 secret and an RS256 public key file; the private
  key stays here so callers can mint tokens), ArgusAI (`public_base_url`, a high registration rate
  limit), the Home Assistant relay, LeanCloud (`app_id`, `app_key`, `master_key`, `client_push`),
  the SNS-compatible API (`access_key_id`, `secret_access_key`, `region`), and APNs and FCM
  credentials whose hosts are a closed port (as `scripts/schemathesis` does): pushes are accepted
  and fail in the background;
- a `secret_key`, and logging at `debug` in `json` to a file (`log_path`);
- `extra_config`, a dict deep-merged over that configuration (e.g. `{"http": {"max_body_bytes": 2048}}`).

It starts `herald serve --config … --port <free port>` and waits for `GET /readyz` to answer 200.

    from herald_harness import Herald
    with Herald(apps=("a", "b")) as h:
        status, headers, body = h.request("GET", "/v1/installations",
                                          {"Authorization": f"Bearer {h.app('a').server_key}"})
        token = h.mint_jwt("a", "alice", alg="RS256")
        headers = h.leancloud_headers("a", master=True)
        body, headers = h.sns_request_parts("a", {"Action": "ListTopics"})
        print(h.secrets)   # every secret made here (keys, secrets, minted tokens) or registered
                           # with register_secret(): what must never appear in h.log_path

Also: `user_headers(app, sub)` / `key_headers(app, "server"|"client")`, `sns_sign(app, body, date=…)`,
`leancloud_headers(app, master=…, sign=…, timestamp_ms=…)`, `healthy()`, `stop()` (SIGTERM, then
SIGKILL after a timeout; removes the temp dir), `kill()` (SIGKILL), `log_text()`. The server gets
SIGKILL if the Python process dies, and at interpreter exit, so none outlives its test.
`.python/tools/bin/python3 scripts/herald_harness.py` checks the harness itself against the binary
(two apps, every credential).

The binary is `HERALD_BINARY`, else `.build/debug/herald` (it is not built here). Needs Python 3.11
and the `cryptography` package (RSA and EC keys; in .python/tools, which scripts/bootstrap makes).
"""

from __future__ import annotations

import atexit
import base64
import copy
import ctypes
import datetime as _dt
import hashlib
import hmac
import http.client
import json
import os
import secrets as _secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

ROOT = Path(__file__).resolve().parent.parent
CLOSED_URL = "https://127.0.0.1:9"  # nothing listens on the discard port: providers fail fast


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the parent dies (Linux), so no server outlives its test."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def deep_merge(base: dict, extra: dict) -> dict:
    """`base` with `extra` merged in (nested dicts merged, anything else replaced); `base` is kept."""
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _pem_body_lines(pem: bytes) -> list[str]:
    return [line for line in pem.decode().splitlines() if line and not line.startswith("-----")]


@dataclass
class App:
    """One configured app and every credential it was given."""

    id: str
    server_key: str
    client_key: str
    jwt_secret: str
    rsa_private_key: rsa.RSAPrivateKey
    rsa_public_key_file: Path
    lc_app_id: str
    lc_app_key: str
    lc_master_key: str
    sns_access_key_id: str
    sns_secret_access_key: str
    # Publish keys (ntfy, Gotify): any channel, and one bound to the channel "alerts".
    publish_key: str = ""
    alerts_publish_key: str = ""
    sns_region: str = "us-east-1"
    sns_account_id: str = "123456789012"

    @property
    def rsa_private_key_pem(self) -> bytes:
        return self.rsa_private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    def config(self, public_base_url: str) -> dict:
        return {
            "server_key": self.server_key,
            "client_key": self.client_key,
            "jwt": {"hs256_secret": self.jwt_secret, "public_key_files": [str(self.rsa_public_key_file)]},
            "argus": {"public_base_url": public_base_url, "register_rate_limit": 10000},
            "home_assistant": {"relay": True},
            "publish_keys": [self.publish_key, f"{self.alerts_publish_key}=channel:alerts"],
            "matrix": {"app_ids": [f"org.herald.{self.id}.ios=apns", f"org.herald.{self.id}.android=fcm"],
                       "new_pushkeys_per_minute": 10000},
            "leancloud": {"app_id": self.lc_app_id, "app_key": self.lc_app_key,
                          "master_key": self.lc_master_key, "client_push": True},
            "sns_api": {"access_key_id": self.sns_access_key_id,
                        "secret_access_key": self.sns_secret_access_key, "region": self.sns_region},
        }


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def __iter__(self):  # status, headers, body = h.request(...)
        return iter((self.status, self.headers, self.body))

    def json(self):
        return json.loads(self.body)


@dataclass
class Herald:
    """A throwaway Herald: configured in `__init__`, started by `start()` (or `with`)."""

    apps: tuple[str, ...] = ("a",)
    extra_config: dict = field(default_factory=dict)
    binary: str | None = None
    ready_timeout: float = 30.0
    env: dict = field(default_factory=dict)  # extra environment of the server process

    def __post_init__(self) -> None:
        self.binary = str(Path(self.binary or os.environ.get("HERALD_BINARY") or ROOT / ".build/debug/herald").resolve())
        if not os.access(self.binary, os.X_OK):
            raise FileNotFoundError(f"no Herald binary at {self.binary} (build it first)")
        self.secrets: list[str] = []
        self._secret_set: set[str] = set()
        self.tmpdir = Path(tempfile.mkdtemp(prefix="herald-harness-"))
        self.log_path = self.tmpdir / "herald.log"
        self.config_path = self.tmpdir / "herald.json"
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.host = "127.0.0.1"
        self._apps: dict[str, App] = {}
        self.secret_key = self.register_secret(base64.b64encode(os.urandom(32)).decode())
        for index, app_id in enumerate(self.apps):
            self._apps[app_id] = self._make_app(app_id, index)
        self._write_provider_files()
        self.config = deep_merge(self._base_config(), self.extra_config)
        self._write_private(self.config_path, json.dumps(self.config, indent=2).encode())

    # --- configuration ---------------------------------------------------------------------

    def _make_app(self, app_id: str, index: int) -> App:
        token = lambda prefix, n=16: self.register_secret(prefix + _secrets.token_hex(n))  # noqa: E731
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public_file = self.tmpdir / f"jwt-{app_id}.pub.pem"
        public_file.write_bytes(key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        app = App(
            id=app_id,
            server_key=token("hsk_"),
            client_key=token("hck_"),
            jwt_secret=token("", 32),
            rsa_private_key=key,
            rsa_public_key_file=public_file,
            lc_app_id=token(f"lcid{index}"),
            lc_app_key=token("lckey"),
            lc_master_key=token("lcmaster"),
            sns_access_key_id=self.register_secret("AKIA" + _secrets.token_hex(8).upper()),
            sns_secret_access_key=token("", 20),
            publish_key=token("hpk_"),
            alerts_publish_key=token("hpk_"),
        )
        for line in _pem_body_lines(app.rsa_private_key_pem)[:1]:
            self.register_secret(line)
        return app

    def _write_provider_files(self) -> None:
        apns = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        fcm = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        self._write_private(self.tmpdir / "apns.p8", apns)
        self._write_private(self.tmpdir / "fcm.json", json.dumps({
            "type": "service_account", "project_id": "harness", "private_key_id": "harness-key",
            "private_key": fcm.decode(), "client_email": "harness@harness.iam.gserviceaccount.com",
            "token_uri": "http://127.0.0.1:9/token"}).encode())
        for pem in (apns, fcm):
            self.register_secret(_pem_body_lines(pem)[0])

    @staticmethod
    def _write_private(path: Path, data: bytes) -> None:
        """Writes a file only its owner may read (Herald refuses secrets readable by others)."""
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)

    def _base_config(self) -> dict:
        apps = {}
        for app in self._apps.values():
            apps[app.id] = deep_merge(app.config("http://127.0.0.1:9"), {
                "apns": {"key_file": str(self.tmpdir / "apns.p8"), "key_id": "HARNESSK01",
                         "team_id": "HARNESST01", "topic": "com.example.harness", "url": CLOSED_URL},
                "fcm": {"service_account_file": str(self.tmpdir / "fcm.json"), "url": CLOSED_URL},
            })
        return {
            "database": str(self.tmpdir / "herald.sqlite"),
            "secret_key": self.secret_key,
            "log": {"level": "debug", "format": "json"},
            "apps": list(self._apps),
            "app": apps,
        }

    # --- process ---------------------------------------------------------------------------

    def start(self) -> "Herald":
        """Starts the server and waits for `/readyz`; raises `RuntimeError` with the log's tail if it
        exits or does not get ready (a port taken meanwhile is retried)."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
        environment.update(self.env)
        for attempt in range(3):
            self.port = free_port()
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    [self.binary, "serve", "--config", str(self.config_path), "--port", str(self.port)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=environment,
                    cwd=self.tmpdir, preexec_fn=_die_with_parent)
            atexit.register(self._at_exit)
            deadline = time.monotonic() + self.ready_timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    break
                try:
                    if self.request("GET", "/readyz", timeout=2).status == 200:
                        return self
                except OSError:
                    pass
                time.sleep(0.1)
            exited = self.process.poll() is not None
            self._terminate(signal.SIGKILL)
            if not (exited and "address" in self.log_text().lower() and attempt < 2):
                reason = "exited" if exited else f"was not ready within {self.ready_timeout:g} s"
                raise RuntimeError(f"herald {reason}; its log ends:\n{self.log_tail()}")
        raise AssertionError("unreachable")

    def _terminate(self, sig: int, timeout: float = 15.0) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def _at_exit(self) -> None:
        self._terminate(signal.SIGKILL)
        self.cleanup()

    def stop(self, remove: bool = True, timeout: float = 15.0) -> int | None:
        """SIGTERM, waits (SIGKILL after `timeout` s); the exit status (-9: it had to be killed).
        `remove` deletes the temp dir."""
        code = self._terminate(signal.SIGTERM, timeout)
        if remove:
            self.cleanup()
        return code

    def kill(self) -> int | None:
        """SIGKILL at once; the temp dir stays until `cleanup()` or `stop()`."""
        return self._terminate(signal.SIGKILL)

    def cleanup(self) -> None:
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def healthy(self, timeout: float = 5.0) -> bool:
        """The process runs and `GET /healthz` answers 200 within `timeout`."""
        try:
            return self.alive() and self.request("GET", "/healthz", timeout=timeout).status == 200
        except OSError:
            return False

    def __enter__(self) -> "Herald":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    # --- credentials -----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def app(self, app_id: str | None = None) -> App:
        return self._apps[app_id or self.apps[0]]

    def register_secret(self, value: str) -> str:
        """Adds `value` to `secrets` (once) and returns it."""
        if value and value not in self._secret_set:
            self._secret_set.add(value)
            self.secrets.append(value)
        return value

    def mint_jwt(self, app: str | None, sub: str | None, alg: str = "HS256", exp: int | None = None,
                 aud=None, iss: str | None = None, nbf: int | None = None, iat: int | None = None,
                 extra_claims: dict | None = None, extra_headers: dict | None = None,
                 key: bytes | rsa.RSAPrivateKey | None = None) -> str:
        """A user token of `app` for `sub` (None: no `sub`), signed HS256 with the app's secret or
        RS256 with its private key (`key` signs with something else instead); `exp` defaults to an
        hour from now, `exp=0` leaves it out. `alg="none"` makes an unsigned token."""
        now = int(time.time())
        claims: dict = {"iat": now if iat is None else iat}
        if sub is not None:
            claims["sub"] = sub
        if exp != 0:
            claims["exp"] = now + 3600 if exp is None else exp
        for name, value in (("aud", aud), ("iss", iss), ("nbf", nbf)):
            if value is not None:
                claims[name] = value
        claims.update(extra_claims or {})
        header = {"alg": alg, "typ": "JWT", **(extra_headers or {})}
        compact = lambda obj: b64url(json.dumps(obj, separators=(",", ":")).encode())  # noqa: E731
        signing_input = f"{compact(header)}.{compact(claims)}".encode()
        the_app = self.app(app)
        if alg == "HS256":
            secret = key if isinstance(key, bytes) else the_app.jwt_secret.encode()
            signature = hmac.new(secret, signing_input, hashlib.sha256).digest()
        elif alg == "RS256":
            private = key if isinstance(key, rsa.RSAPrivateKey) else the_app.rsa_private_key
            signature = private.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        elif alg == "none":
            signature = b""
        else:
            raise ValueError(f"unsupported alg {alg}")
        return self.register_secret(f"{signing_input.decode()}.{b64url(signature)}")

    def user_headers(self, app: str | None, sub: str, **jwt) -> dict[str, str]:
        """`Authorization: Bearer <user token>` and `X-Herald-App` for `sub` of `app`."""
        the_app = self.app(app)
        return {"Authorization": f"Bearer {self.mint_jwt(the_app.id, sub, **jwt)}", "X-Herald-App": the_app.id}

    def key_headers(self, app: str | None = None, kind: str = "server") -> dict[str, str]:
        """`Authorization: Bearer <server, client or publish key>`."""
        the_app = self.app(app)
        key = {"server": the_app.server_key, "client": the_app.client_key, "publish": the_app.publish_key,
               "alerts": the_app.alerts_publish_key}[kind]
        return {"Authorization": f"Bearer {key}"}

    def leancloud_headers(self, app: str | None = None, master: bool = False, sign: bool = True,
                          timestamp_ms: int | None = None, key: str | None = None) -> dict[str, str]:
        """LeanCloud credentials: `X-LC-Id` and `X-LC-Sign: md5(timestamp + key),timestamp[,master]`
        (`sign=False`: `X-LC-Key: key[,master]`), with the app key or the master key (`key`
        overrides either) and a chosen timestamp in ms (default: now)."""
        the_app = self.app(app)
        secret = key if key is not None else (the_app.lc_master_key if master else the_app.lc_app_key)
        suffix = ",master" if master else ""
        if not sign:
            return {"X-LC-Id": the_app.lc_app_id, "X-LC-Key": secret + suffix}
        timestamp = str(int(time.time() * 1000) if timestamp_ms is None else timestamp_ms)
        digest = hashlib.md5((timestamp + secret).encode()).hexdigest()
        return {"X-LC-Id": the_app.lc_app_id, "X-LC-Sign": f"{digest},{timestamp}{suffix}"}

    def sns_sign(self, app: str | None, body: bytes, date: _dt.datetime | None = None,
                 region: str | None = None, access_key_id: str | None = None,
                 secret_access_key: str | None = None, path: str = "/sns",
                 content_type: str = "application/x-www-form-urlencoded; charset=utf-8") -> dict[str, str]:
        """SigV4 headers (service `sns`) of `POST path` with `body`, signed for the app's region and
        keys (each overridable) at `date` (UTC; default now)."""
        the_app = self.app(app)
        region = region or the_app.sns_region
        access_key_id = access_key_id or the_app.sns_access_key_id
        secret_access_key = secret_access_key or the_app.sns_secret_access_key
        when = (date or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
        amz_date, day = when.strftime("%Y%m%dT%H%M%SZ"), when.strftime("%Y%m%d")
        headers = {"content-type": content_type, "host": f"{self.host}:{self.port}", "x-amz-date": amz_date}
        signed = ";".join(sorted(headers))
        canonical = "\n".join([
            "POST", urllib.parse.quote(path, safe="/~"), "",
            *(f"{name}:{headers[name].strip()}" for name in sorted(headers)), "",
            signed, hashlib.sha256(body).hexdigest()])
        scope = f"{day}/{region}/sns/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        signing_key = ("AWS4" + secret_access_key).encode()
        for part in (day, region, "sns", "aws4_request"):
            signing_key = hmac.new(signing_key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
        return {
            "Content-Type": content_type, "X-Amz-Date": amz_date,
            "Authorization": f"AWS4-HMAC-SHA256 Credential={access_key_id}/{scope}, "
                             f"SignedHeaders={signed}, Signature={signature}",
        }

    def sns_request_parts(self, app: str | None, params: dict | list, **sign) -> tuple[bytes, dict[str, str]]:
        """The form body of an SNS Query API call (`Version=2010-03-31` added when absent) and its
        signed headers: `h.request("POST", "/sns", headers, body)`."""
        items = list(params.items()) if isinstance(params, dict) else list(params)
        if not any(name == "Version" for name, _ in items):
            items.append(("Version", "2010-03-31"))
        body = urllib.parse.urlencode(items).encode()
        return body, self.sns_sign(app, body, **sign)

    # --- requests --------------------------------------------------------------------------

    def connection(self, timeout: float = 10.0) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method: str, path: str, headers: dict | None = None, body: bytes | str | None = None,
                timeout: float = 10.0) -> Response:
        """One request on a new connection: `Response(status, headers, body)`, which also unpacks as
        `status, headers, body`. A `dict`/`list` body is sent as JSON."""
        headers = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        connection = self.connection(timeout)
        try:
            connection.request(method, path, body=body, headers=headers)
            answer = connection.getresponse()
            return Response(answer.status, answer.headers, answer.read())
        finally:
            connection.close()


def _self_test() -> None:
    """`.python/tools/bin/python3 scripts/herald_harness.py`: starts a two-app server and checks every credential."""
    with Herald(apps=("a", "b")) as h:
        assert h.request("GET", "/healthz").status == 200
        for app in ("a", "b"):
            for alg in ("HS256", "RS256"):
                status, _, body = h.request("GET", "/api/v1/devices", h.user_headers(app, "u1", alg=alg))
                assert status == 200, (app, alg, status, body)
            for master in (False, True):
                for sign in (False, True):
                    headers = h.leancloud_headers(app, master=master, sign=sign)
                    path = "/1.1/installations" if master else "/1.1/installations/nope"
                    status, _, body = h.request("GET", path, headers)
                    assert status == (200 if master else 404), (app, master, sign, status, body)
            body, headers = h.sns_request_parts(app, {"Action": "ListTopics"})
            status, _, answer = h.request("POST", "/sns", headers, body)
            assert status == 200, (app, status, answer)
            status, _, _ = h.request("GET", "/v1/installations", h.key_headers(app))
            assert status == 200
        assert h.log_path.exists() and h.secrets
    print(f"herald_harness: ok ({len(h.secrets)} secrets)")


if __name__ == "__main__":
    _self_test()
