#!/usr/bin/env python3
"""Herald's security test: table-driven checks through the real HTTP API of throwaway servers.

    .python/tools/bin/python3 scripts/security-test.py
                      (HERALD_BINARY, else .build/debug/herald; it is not built here; cryptography and
                      websockets come from .python/tools, which scripts/bootstrap makes)

Environment (optional): HERALD_BINARY; HERALD_TEST_POSTGRES (a PostgreSQL cluster URL as
`scripts/postgres` prints it: adds the tokens-at-rest check on PostgreSQL, skipped when unset);
HERALD_SECURITY_VERBOSE=1 prints every check's detail, not only failures'.

Every check prints PASS, FAIL (with the request and the answers), SKIP (why) or WARN (a documented
behaviour that leaks more than the rest of the API does; not a failure). One server (apps a, b, c, d;
SQLite; log level debug as the harness sets it) runs almost every check; a second one runs the
registration and refused-credential limits at their boundaries, a third the PostgreSQL at-rest check.
The last line is `security: N passed, N failed, N skipped` (the total and the warnings are on the line
before it); the exit status is 1 when any check failed. Needs Python 3.11, `cryptography` (via scripts/herald_harness.py) and,
for the direct-channel checks, `websockets` (scripts/test installs it; they fail without it).

ROUTE INVENTORY: every user- or tenant-scoped route, who may call it, and what this script checks
(B = another user of the same app, or another app; "like missing" = same status and body as a
random nonexistent id, and the victim's object unchanged afterwards).
| dialect | route | callers | checked here |
|---|---|---|---|
| native | POST /v1/installations | server, client, user | bad credentials 401/nothing stored; A registering with B's device_id; client-key/user-token registration limit (guarded) |
| native | GET /v1/installations | server, user (own) | user list never shows B's (also ?user_id=B); client key 403 |
| native | GET/PATCH/DELETE /v1/installations/{id} | server, client (PATCH/DELETE), user (own) | user A on B's, app b's server/client key and b-user on a's: like missing |
| native | GET/PUT /v1/installations/{id}/preferences | server, user (own) | A on B's, app b on a's: like missing; client key 403 |
| native | POST /v1/installations/{id}/channel-credential | server, user (own) | A on B's, app b on a's: like missing; client key 403 |
| UnifiedPush | POST/GET /v1/installations/{id}/push-endpoints, DELETE …/{endpoint_id} | server, user (own) | A on B's, app b on a's: like missing; client key 403; A revoking B's endpoint id on A's installation: 404, B's endpoint still live |
| UnifiedPush | GET/POST /up/{secret} | the URL alone | a made-up secret 404 like a malformed one; nothing user-scoped |
| ntfy | POST/PUT /, POST/PUT /{topic} | publish keys (Bearer, Basic password, ?auth=) | app a's publish key never reaches app b's devices; a key bound to a channel cannot publish to another (403 40301); server, client and user credentials are not publish keys (401 40101), and a publish key is 401 on the native API |
| Gotify | POST /message | publish keys (X-Gotify-Key, ?token=, Bearer) | app a's key never reaches app b's devices; a key bound to a channel reaches that channel only; server keys are not tokens (401 in Gotify's body) |
| Matrix | POST /_matrix/push/v1/notify | the pushkey (no credential, as Sygnal) | app a's Matrix app id with app b's token never reaches b's installation; an unknown app id is rejected and registers nothing; pushkeys never logged whole |
| native | DELETE /v1/users/{user_id}/installations | server | user/client 403; app b's server key deletes nothing of a (same as unknown user) |
| native | POST/GET /v1/notifications, GET/DELETE /v1/notifications/{id}, GET …/{id}/deliveries | server | app b's server key on a's: like missing; b's targets (ids, users, channels, where) reach none of a's; a's idempotency key is b's own; user/client 403 |
| native | POST/GET /v1/webhooks, GET/PATCH/DELETE /v1/webhooks/{id}, POST …/{id}/rotate-secret, …/test, …/replay, GET …/deliveries | server | app b's server key on a's: like missing, a's endpoint unchanged; b's list holds none of a's; client and publish keys refused, nothing created; the signing secret not in the database in clear |
| native | POST /v1/live-activities, GET …/{id}, POST …/{id}/updates; POST/GET /v1/live-activities/channels, DELETE …/{id}, POST …/{id}/updates | server | app b's server key on a's activity: like missing, a's revision unchanged; b's channel list holds none of a's; client, user and publish keys refused, nothing started |
| native | GET/PUT/DELETE /v1/templates/{name}, GET /v1/templates, POST …/{name}/render; a send's `template` | server | app b's server key on a's template: like missing, a's revision unchanged; b's list holds none of a's; b cannot send with it (`template_not_found`); client and publish keys refused |
| native | GET /v1/installations/{id}/live-activities, PUT/DELETE …/push-to-start/{type}, PUT/DELETE …/{activity_id} | server, client, user (own) | A on B's installation, app b on a's: like missing, B's tokens unchanged; push-to-start and activity tokens not in the database in clear |
| native | POST /v1/opens | server, client, user (own) | A for B's installation, app b for a's: like missing, nothing counted; A's open of a notification sent only to B (WARN) |
| channel | GET /v1/channel, /api/websocket (WebSocket) | channel credential (one installation), user token | A's credential/token cannot subscribe to B's webhook id; forged MAC refused; keys refused |
| ArgusAI | POST /api/v1/push/mobile/register | user | bad credentials 401; register_rate_limit boundary (3 ok, 4th 429 + Retry-After) |
| ArgusAI | PUT/DELETE /api/v1/push/mobile/tokens/{device_id} | user (own) | A on B's device id: like missing |
| ArgusAI | POST/PUT /api/v1/push/mobile/preferences | user (own) | A with B's device id: like missing, B's preferences unchanged |
| ArgusAI | GET /api/v1/devices, PATCH/DELETE /api/v1/devices/{id} | user (own) | list shows only own; A on B's: like missing; keys 403 |
| ArgusAI | POST /api/v1/push/mobile/events | server | user/client 403; a's event_id reused by app b is b's own |
| AOVIS | POST /api/internal/push/register | user | B's camera answers like an unknown camera; bad credentials 401 invalid_session |
| AOVIS | POST /api/internal/devices, GET /api/internal/devices/{id}, PUT …/owners/{user_id} | server | app b's key on a's camera: like missing, owners unchanged; user/client 403 |
| AOVIS | POST /api/internal/events, GET /api/internal/events/{id} | server | app b's key with a's camera/event (by Herald id and CloudEvent id): like missing; a's eventId/CloudEvent id reused by b: b's own |
| LeanCloud | POST/GET/PUT/DELETE /1.1/installations[/{id}] and /1.1/classes/_Installation[/{id}] | app key (the object named), master (all) | app b's app and master key on a's objects: like missing, unchanged; list and where= with app key 119; b's master where= never returns a's |
| LeanCloud | /1.1/users[/{id}], /1.1/classes/_User[/{id}] | master | app key 119; b's master on a's user: like missing |
| LeanCloud | POST /1.1/push, GET /1.1/classes/_Notification[/{id}], /1.1/tables/Notifications/{id} | master, app key (push with client_push; status by id) | b on a's push: like missing; client_push off: 119 |
| LeanCloud | POST /1.1/batch | as its requests | b's batch on a's object: like missing; app-key list inside a batch: 119 |
| LeanCloud | (auth) X-LC-Key, X-LC-Sign, X-AVOSCloud-* | | skew 60 s: stale/future sign 401, within skew ok, wrong sign 401, app-key sign claiming master 401 |
| HA relay | POST /ha/push, POST /ha/push/rate_limits | the push token | one token's pushes never target or count against another's; relay-off app's token like unknown (rate_limits) and relayed only as the relay app's new token; max_per_day boundary |
| SNS API | POST /sns (every Action on ARNs) | SigV4 with an app's access key | app b's key on a's applications, endpoints, topics, subscriptions: like missing, unchanged; SigV4 date/secret/region/key |
| console | POST/GET/DELETE /console/session, GET /console/api/overview, GET /console/api/installations/{id}/history, /v1 under a session | server-key session | session of a on b's: like missing; tampered cookie 401; sign-in limiter boundary |
| (auth) | every Bearer route | user JWT or opaque session (introspection) | inactive/expired/timed-out session 401 invalid_session; a session of app d never reaches app a; which credentials reach app d's auth service |
| public | /healthz /readyz /openapi.yaml /metrics /v1/webpush/vapid-public-key | anyone | (nothing user-scoped) |

EXISTING SWIFT COVERAGE (audited 2026-11-25; what this script adds is marked +):
| item | covered by | gap filled here |
|---|---|---|
| native user isolation (GET/PATCH/DELETE by another user, list, user_mismatch) | AuthTests.userIsolation | + preferences, channel-credential, opens via HTTP of a real server, cross-app keys, byte-equal 404 bodies |
| expired/nbf/wrong signature/no exp/iss/aud/no sub/garbage JWT | AuthTests.badUserTokens, .leeway | + alg none/None/NONE, HS256 signed with the RS256 public PEM, tampered payload, other app's secret with X-Herald-App, empty Bearer; on ArgusAI/AOVIS routes too |
| client key limits | AuthTests.clientKey (list, read) | + preferences, notifications, users, channel credential, console, dialect routes |
| ArgusAI another user's device 404 | ArgusAIDialectTests ("A user cannot see, rename, …") | + byte-equal to missing, unchanged afterwards; events route 403 |
| ArgusAI register_rate_limit | ArgusAIDialectTests (429 + Retry-After) | + boundary on the real binary |
| AOVIS camera ownership | AOVISRegisterTests.deviceId | + another user's ACTIVE camera answers like an unknown one; cross-app backend routes |
| LeanCloud credentials (stale sign, wrong key, app key on master routes) | LeanCloudTests.authentication (skew 900 by injected clock) | + configured skew 60 at its boundary, future timestamps, cross-app objects, batch, where= |
| SigV4 15-minute window, wrong secret | SigV4VerifierTests (unit), SNSAPITests.signatures | + 20 min past/future and 14 min through HTTP, wrong region, unknown key, cross-app ARNs |
| HA max_per_day | HomeAssistantRelayTests | + per-token isolation, relay-off app |
| console cross-app, sign-in limiter | ConsoleTests.anotherApp, failed sign-ins | + history route like missing, tampered cookie, limiter boundary on the binary |
| opens cross-user/app | OpenRoutesTests | + equal bodies via HTTP |
| tokens at rest | SQLiteStoreTests.encryptedAtRest, PostgresStoreTests (store level) | + every dialect's registration through HTTP, .sqlite/-wal raw bytes and a sqlite3 dump; SNS PlatformCredential |
| secrets in logs | ServeProcessTests (default info level, keys and one token) | + debug-level JSON log, every credential, JWT, signature, cookie and token used here |
| opaque sessions (introspection) | SessionIntrospectionTests (mock auth service) | + cross-app: which other tenants' credentials reach an app's auth service |
| auth-failure limit, registration limit | RateLimitTests (every surface's 429 shape, refill) | + boundaries on the binary, lock-out of the right key, public routes open |
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import uuid
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import rsa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from herald_harness import Herald, b64url  # noqa: E402

VERBOSE = os.environ.get("HERALD_SECURITY_VERBOSE") == "1"
ISSUER, AUDIENCE = "https://id.c.example", "herald-c"
SKEW = 60  # app a's leancloud.signature_skew_seconds
ARGUS_LIMIT, RELAY_LIMIT, SIGN_IN_LIMIT, LIMIT_N = 3, 3, 3, 3


# --- reporting ---------------------------------------------------------------------------------

class Report:
    def __init__(self) -> None:
        self.passed = self.failed = self.skipped = self.warned = 0
        self.failures: list[str] = []

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"PASS  {name}" + (f"  ({detail})" if VERBOSE and detail else ""))
        else:
            self.failed += 1
            self.failures.append(name)
            print(f"FAIL  {name}\n      {detail}")
        sys.stdout.flush()
        return ok

    def skip(self, name: str, why: str) -> None:
        self.skipped += 1
        print(f"SKIP  {name}: {why}")

    def warn(self, name: str, detail: str) -> None:
        self.warned += 1
        print(f"WARN  {name}\n      {detail}")

    def run(self, name: str, function, *args) -> None:
        """Runs a check function; an exception is that check's failure, not the script's end."""
        try:
            function(*args)
        except Exception as error:  # noqa: BLE001
            self.check(name, False, f"raised {type(error).__name__}: {error}\n"
                       + "".join(traceback.format_exc().splitlines(True)[-6:]))


R = Report()
USED: set[str] = set()  # every secret value this script sent or registered, for the log check
TOKENS: dict[str, str] = {}  # push tokens and keys registered -> where, for the at-rest check
MARKER = "plain-marker-" + secrets.token_hex(8)  # stored in clear on purpose: proves the scan sees data
FIVE_XX: list[str] = []
METRICS: list[str] = []


def used(value: str) -> str:
    if value:
        USED.add(value)
    return value


def short(data, limit: int = 300) -> str:
    text = data.decode(errors="replace") if isinstance(data, bytes) else str(data)
    return text if len(text) <= limit else text[:limit] + "…"


# --- requests ------------------------------------------------------------------------------------

def call(h: Herald, method: str, path: str, headers: dict | None = None, body=None):
    headers = dict(headers or {})
    for name, value in headers.items():
        if name.lower() in ("authorization", "x-lc-key", "x-lc-sign", "cookie", "x-csrf-token",
                            "x-avoscloud-application-key", "x-avoscloud-master-key", "x-avoscloud-request-sign"):
            used(value)
            for part in re.split(r"[ ,=;]", value):
                if len(part) >= 16:
                    used(part)
    answer = h.request(method, path, headers, body)
    if answer.status >= 500:
        FIVE_XX.append(f"{method} {path} -> {answer.status} {short(answer.body)}")
    return answer


def jbody(answer):
    try:
        return json.loads(answer.body)
    except ValueError:
        return None


def err_code(answer):
    body = jbody(answer)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("code")
    if isinstance(body, dict):
        return body.get("error") if isinstance(body.get("error"), str) else body.get("code")
    return None


def describe(answer) -> str:
    return f"{answer.status} {short(answer.body)}"


def apns_token() -> str:
    return secrets.token_hex(32)


def fcm_token() -> str:
    return "f" + secrets.token_urlsafe(20).replace("-", "x").replace("_", "y") + ":APA91b" + secrets.token_hex(40)


def missing_like(identifier: str) -> str:
    """A nonexistent id shaped like `identifier`: its last 12 characters redrawn from their class."""
    head, tail = identifier[:-12], identifier[-12:]
    out = []
    for char in tail:
        if char in "0123456789abcdef":
            out.append(secrets.choice("0123456789abcdef"))
        elif char.isdigit():
            out.append(secrets.choice("0123456789"))
        elif char.isupper():
            out.append(secrets.choice("ABCDEFGHJKMNPQRSTVWXYZ"))
        elif char.isalpha():
            out.append(secrets.choice("abcdefghijklmnopqrstuvwxyz"))
        else:
            out.append(char)
    candidate = head + "".join(out)
    return candidate if candidate != identifier else missing_like(identifier)


def normalized(answer, ids) -> tuple:
    text = answer.body.decode(errors="replace")
    for identifier in ids:
        if identifier:
            text = text.replace(identifier, "<ID>")
    text = re.sub(r"<RequestId>[^<]*</RequestId>", "<RequestId/>", text)
    content_type = (answer.headers.get("Content-Type") or "").split(";")[0]
    return answer.status, content_type, text


def notification_state(h, w, notification_id: str):
    """What another app could change of app a's notification: all but its delivery's progress, which goes
    on meanwhile (its provider is a closed port: sent / retried / rate-limited counts and the queued or
    sending status move by themselves); a cancel (status canceled) or a counted open still shows."""
    notification = jbody(h.request("GET", f"/v1/notifications/{notification_id}", w.key("a")))
    if not isinstance(notification, dict):
        return notification
    view = {key: value for key, value in notification.items() if key not in ("counts", "completed_at", "updated_at")}
    view["opened"] = (notification.get("counts") or {}).get("opened")
    if view.get("status") in ("queued", "sending"):
        view["status"] = "queued or sending"
    return view


def like_missing(name: str, attempt, victim: str, missing: str, snapshot=None, extra_ids=(),
                 missing_ids=()) -> bool:
    """`attempt(id)` on the victim answers exactly as on a missing id, and the victim is unchanged."""
    before = snapshot() if snapshot else None
    on_victim = attempt(victim)
    on_missing = attempt(missing)
    after = snapshot() if snapshot else None
    problems = []
    victim_view = normalized(on_victim, [victim, *extra_ids])
    missing_view = normalized(on_missing, [missing, *(missing_ids or extra_ids)])
    if victim_view != missing_view:
        problems.append(f"answers differ: victim {describe(on_victim)} | missing {describe(on_missing)}")
    if on_victim.status < 300 and on_victim.status == on_missing.status and snapshot is None:
        problems.append(f"both answered {on_victim.status}")
    if snapshot and before != after:
        problems.append(f"victim changed: before {short(json.dumps(before), 400)} | after {short(json.dumps(after), 400)}")
    return R.check(name, not problems, "; ".join(problems) or describe(on_victim))


# --- JWT forgery ----------------------------------------------------------------------------------

def compact(obj) -> str:
    return b64url(json.dumps(obj, separators=(",", ":")).encode())


def forge(header: dict, claims: dict, signature: bytes = b"", key: bytes | None = None) -> str:
    signing_input = f"{compact(header)}.{compact(claims)}"
    if key is not None:
        signature = hmac.new(key, signing_input.encode(), hashlib.sha256).digest()
    return used(f"{signing_input}.{b64url(signature)}")


def claims(sub: str, **extra) -> dict:
    now = int(time.time())
    return {"sub": sub, "iat": now, "exp": now + 3600, **extra}


# --- set-up of the main server -------------------------------------------------------------------

class World:
    """What the checks act on: users alice (A) and bob (B) of app a, app b (another tenant; relay off,
    client push off), app c (JWT issuer and audience) and app d (opaque sessions by introspection)."""

    def __init__(self, h: Herald) -> None:
        self.h = h
        self.a, self.b = h.app("a"), h.app("b")

    def user(self, app: str, sub: str, **jwt) -> dict:
        headers = self.h.user_headers(app, sub, **jwt)
        return used_headers(headers)

    def key(self, app: str, kind: str = "server") -> dict:
        return self.h.key_headers(app, kind)


def used_headers(headers: dict) -> dict:
    for value in headers.values():
        used(value)
    return headers


def native_register(h, headers, app_label, **fields):
    token = fields.pop("token", None) or apns_token()
    body = {"platform": "ios", "token": token, **fields}
    answer = call(h, "POST", "/v1/installations", headers, body)
    assert answer.status in (200, 201), f"native registration: {describe(answer)}"
    TOKENS[token] = f"native ios ({app_label})"
    return jbody(answer)["id"], token


def snapshot_installation(h, app: str, installation_id: str):
    headers = h.key_headers(app)
    one = h.request("GET", f"/v1/installations/{installation_id}", headers)
    prefs = h.request("GET", f"/v1/installations/{installation_id}/preferences", headers)
    return [one.status, jbody(one), prefs.status, jbody(prefs)]


def seed(w: World) -> dict:
    h = w.h
    s: dict = {}
    A, B = w.user("a", "alice"), w.user("a", "bob")
    s["A"], s["B"] = A, B
    s["inst_A"], s["tok_A"] = native_register(h, A, "alice")
    s["inst_B"], s["tok_B"] = native_register(h, B, "bob", device_id="bob-phone-1", channels=["news"],
                                                attributes={"home": "bob-private-attribute"}, locale="de-DE")
    assert call(h, "PUT", f"/v1/installations/{s['inst_B']}/preferences", B,
                {"enabled_categories": ["person"], "sound_enabled": False}).status == 200
    s["inst_b"], s["tok_b"] = native_register(h, w.user("b", "carol"), "app b carol")
    s["inst_b_srv"], s["tok_b_srv"] = native_register(h, w.key("b"), "app b server", user_id="dave")
    # A notification of app a to bob's installation (for notifications and opens).
    answer = call(h, "POST", "/v1/notifications", w.key("a"),
                  {"target": {"installation_ids": [s["inst_B"]]}, "payload": {"title": "t", "body": "b"},
                   "idempotency_key": "sec-idem-" + secrets.token_hex(4)})
    assert answer.status == 202, describe(answer)
    s["notif_a"], s["idem_a"] = jbody(answer)["id"], json.loads(call(h, "GET", f"/v1/notifications/{jbody(answer)['id']}", w.key("a")).body).get("idempotency_key")
    # ArgusAI devices.
    for who, headers in (("A", A), ("B", B)):
        device = str(uuid.uuid4())
        token = apns_token()
        answer = call(h, "POST", "/api/v1/push/mobile/register", headers,
                      {"device_id": device, "platform": "ios", "device_token": token, "device_name": f"{who}'s"})
        assert answer.status == 201, describe(answer)
        TOKENS[token] = "ArgusAI ios"
        s[f"argus_dev_{who}"], s[f"argus_id_{who}"] = device, jbody(answer)["id"]
    assert call(h, "PUT", "/api/v1/push/mobile/preferences", B,
                {"device_id": s["argus_dev_B"], "enabled_cameras": ["cam-9"], "quiet_hours_enabled": False}).status == 200
    # AOVIS: bob's camera (ACTIVE), bob's registration, an event.
    answer = call(h, "POST", "/api/internal/devices", w.key("a"), {"name": "Bob's gate"})
    assert answer.status == 201, describe(answer)
    s["cam_B"] = jbody(answer)["id"]
    assert call(h, "PUT", f"/api/internal/devices/{s['cam_B']}/owners/bob", w.key("a"),
                {"status": "ACTIVE"}).status == 200
    token = apns_token()
    answer = call(h, "POST", "/api/internal/push/register", B, {"platform": "ios", "token": token, "deviceId": s["cam_B"]})
    assert answer.status == 200, describe(answer)
    TOKENS[token] = "AOVIS ios"
    s["event_key_a"], s["cloud_id_a"] = "sec-" + secrets.token_hex(4), "ce-" + secrets.token_hex(6)
    answer = call(h, "POST", "/api/internal/events", w.key("a"),
                  {"eventId": s["event_key_a"], "id": s["cloud_id_a"], "deviceId": s["cam_B"], "classifyEventType": "person",
                   "classifySummaryShort": "someone"})
    assert answer.status == 201, describe(answer)
    s["event_a"] = jbody(answer)["heraldId"]
    # LeanCloud: an installation, a _User and a push in app a.
    lc = h.leancloud_headers("a", master=True)
    token = apns_token()
    answer = call(h, "POST", "/1.1/installations", h.leancloud_headers("a"),
                  {"deviceType": "ios", "deviceToken": token, "channels": ["lc"], "secretField": "keep", "marker": MARKER})
    assert answer.status == 201, describe(answer)
    TOKENS[token] = "LeanCloud ios"
    s["lc_obj"], s["lc_tok"] = jbody(answer)["objectId"], token
    answer = call(h, "POST", "/1.1/users", lc, {"username": "bob-lc", "location": {"__type": "GeoPoint", "latitude": 1, "longitude": 2}})
    assert answer.status == 201, describe(answer)
    s["lc_user"] = jbody(answer)["objectId"]
    s["lc_notification_id"] = "sec-lc-" + secrets.token_hex(4)
    answer = call(h, "POST", "/1.1/push", lc, {"data": {"alert": "x"}, "where": {"objectId": s["lc_obj"]},
                                               "notification_id": s["lc_notification_id"]})
    assert answer.status == 200, describe(answer)
    s["lc_push"] = jbody(answer)["objectId"]
    # SNS: an application, an endpoint, a topic and a subscription in app a.
    s["sns_app_name"] = "sec-a-" + secrets.token_hex(3)
    answer = sns(h, "a", {"Action": "CreatePlatformApplication", "Name": s["sns_app_name"], "Platform": "APNS",
                          "Attributes.entry.1.key": "PlatformCredential",
                          "Attributes.entry.1.value": used("sns-credential-" + secrets.token_hex(16))})
    assert answer.status == 200, describe(answer)
    s["sns_app"] = xml(answer, "PlatformApplicationArn")
    token = apns_token()
    answer = sns(h, "a", {"Action": "CreatePlatformEndpoint", "PlatformApplicationArn": s["sns_app"], "Token": token,
                          "CustomUserData": "bob"})
    assert answer.status == 200, describe(answer)
    TOKENS[token] = "SNS APNS endpoint"
    s["sns_ep"], s["sns_tok"] = xml(answer, "EndpointArn"), token
    answer = sns(h, "a", {"Action": "CreateTopic", "Name": "sec-topic-" + secrets.token_hex(3)})
    s["sns_topic"] = xml(answer, "TopicArn")
    answer = sns(h, "a", {"Action": "Subscribe", "TopicArn": s["sns_topic"], "Protocol": "application",
                          "Endpoint": s["sns_ep"]})
    assert answer.status == 200, describe(answer)
    s["sns_sub"] = xml(answer, "SubscriptionArn")
    # App b's SNS endpoint (for b's own-object requests).
    answer = sns(h, "b", {"Action": "CreatePlatformApplication", "Name": "sec-b-" + secrets.token_hex(3), "Platform": "GCM"})
    s["sns_app_b"] = xml(answer, "PlatformApplicationArn")
    token = fcm_token()
    answer = sns(h, "b", {"Action": "CreatePlatformEndpoint", "PlatformApplicationArn": s["sns_app_b"], "Token": token})
    TOKENS[token] = "SNS GCM endpoint (app b)"
    s["sns_ep_b"] = xml(answer, "EndpointArn")
    return s


# --- SNS helpers ---------------------------------------------------------------------------------

def sns(h, app, params, **sign):
    body, headers = h.sns_request_parts(app, params, **sign)
    used(headers["Authorization"].rsplit("Signature=", 1)[-1])
    return call(h, "POST", "/sns", headers, body)


def xml(answer, element: str) -> str | None:
    match = re.search(rf"<{element}>([^<]*)</{element}>", answer.body.decode(errors="replace"))
    return match.group(1) if match else None


def sns_arn_with_id(arn: str) -> str:
    """The ARN with its last path component (an installation id, a name or a subscription id) redrawn."""
    prefix, _, last = arn.rpartition("/") if "/" in arn.rsplit(":", 1)[-1] else arn.rpartition(":")
    separator = "/" if "/" in arn.rsplit(":", 1)[-1] else ":"
    return prefix + separator + (missing_like(last) if len(last) >= 12 else last + "-" + secrets.token_hex(4))


# --- credential checks ---------------------------------------------------------------------------

def credential_checks(w: World, s: dict) -> None:
    h = w.h
    now = int(time.time())
    pem = w.a.rsa_public_key_file.read_bytes()
    valid = w.h.mint_jwt("a", "alice")
    header_b64, payload_b64, signature_b64 = valid.split(".")
    tampered_payload = compact({**json.loads(base64.urlsafe_b64decode(payload_b64 + "==")), "sub": "bob"})
    pem_der = b"".join(base64.b64decode(line) for line in pem.decode().splitlines() if line and not line.startswith("---"))
    cases = [
        ("alg none", forge({"alg": "none", "typ": "JWT"}, claims("alice"))),
        ("alg None", forge({"alg": "None", "typ": "JWT"}, claims("alice"))),
        ("alg NONE", forge({"alg": "NONE", "typ": "JWT"}, claims("alice"))),
        ("alg nOnE with a copied signature", forge({"alg": "nOnE"}, claims("alice"), base64.urlsafe_b64decode(signature_b64 + "=="))),
        ("alg none, no signature segment", f"{compact({'alg': 'none'})}.{compact(claims('alice'))}"),
        ("HS256 signed with the RS256 public key PEM", forge({"alg": "HS256", "typ": "JWT"}, claims("alice"), key=pem)),
        ("HS256 signed with the PEM without its last newline", forge({"alg": "HS256"}, claims("alice"), key=pem.rstrip(b"\n"))),
        ("HS256 signed with the public key's DER", forge({"alg": "HS256"}, claims("alice"), key=pem_der)),
        ("HS256 with the PEM, kid of the PEM key", forge({"alg": "HS256", "kid": "herald-pem-0"}, claims("alice"), key=pem)),
        ("expired beyond the leeway (HS256)", h.mint_jwt("a", "alice", exp=now - 90)),
        ("expired beyond the leeway (RS256)", h.mint_jwt("a", "alice", alg="RS256", exp=now - 90)),
        ("nbf in the future beyond the leeway", h.mint_jwt("a", "alice", nbf=now + 90)),
        ("no exp", h.mint_jwt("a", "alice", exp=0)),
        ("empty sub", h.mint_jwt("a", "")),
        ("signed with app b's secret, X-Herald-App a", h.mint_jwt("b", "alice")),
        ("signed with app b's RSA key, X-Herald-App a", h.mint_jwt("b", "alice", alg="RS256")),
        ("valid token with the payload changed (sub bob)", used(f"{header_b64}.{tampered_payload}.{signature_b64}")),
        ("valid token with the signature cut", used(f"{header_b64}.{payload_b64}.")),
        ("RS256 signed by another RSA key", h.mint_jwt("a", "alice", alg="RS256", key=rsa.generate_private_key(65537, 2048))),
        ("garbage a.b.c", "a.b.c"),
        ("garbage", "not-a-token"),
        ("the channel-credential shape", f"hch_a.{s['inst_A']}.AAAA"),
        ("app b's server key named as a JWT", w.b.server_key + ".x.y"),
    ]
    raw_headers = [
        ("empty Bearer", {"Authorization": "Bearer "}),
        ("Bearer without credential", {"Authorization": "Bearer"}),
        ("another scheme with a valid token", {"Authorization": f"Token {valid}"}),
        ("Basic with the server key", {"Authorization": "Basic " + base64.b64encode(f"{w.a.server_key}:".encode()).decode()}),
        ("no Authorization", {}),
    ]
    all_cases = [(name, {"Authorization": f"Bearer {token}", "X-Herald-App": "a"}) for name, token in cases]
    all_cases += [(name, {**headers, "X-Herald-App": "a"}) for name, headers in raw_headers]
    all_cases.append(("app a's valid token named as app b's (X-Herald-App: b)", {"Authorization": f"Bearer {valid}", "X-Herald-App": "b"}))

    before = count_installations(h, "a")
    for name, headers in all_cases:
        token = apns_token()
        results = {
            "POST /v1/installations": call(h, "POST", "/v1/installations", headers, {"platform": "ios", "token": token}),
            "GET /v1/installations": call(h, "GET", "/v1/installations", headers),
            f"GET /v1/installations/{{A}}": call(h, "GET", f"/v1/installations/{s['inst_A']}", headers),
            "GET /api/v1/devices": call(h, "GET", "/api/v1/devices", headers),
            "POST /api/v1/push/mobile/register": call(h, "POST", "/api/v1/push/mobile/register", headers,
                                                      {"device_id": str(uuid.uuid4()), "platform": "ios", "device_token": token}),
        }
        aovis = call(h, "POST", "/api/internal/push/register", headers, {"platform": "ios", "token": token})
        problems = [f"{route}: {describe(answer)}" for route, answer in results.items()
                    if answer.status != 401 or err_code(answer) != "unauthorized"]
        if aovis.status != 401 or jbody(aovis) != {"error": "invalid_session"}:
            problems.append(f"AOVIS register: {describe(aovis)}")
        R.check(f"credential refused: {name} (401 unauthorized / AOVIS invalid_session)", not problems, "; ".join(problems))
    after = count_installations(h, "a")
    R.check("refused credentials stored nothing", before == after, f"installations of app a: {before} -> {after}")

    # Controls: the same routes accept valid tokens (the refusals above are not vacuous).
    good = {"HS256": h.mint_jwt("a", "alice"), "RS256": h.mint_jwt("a", "alice", alg="RS256"),
            "HS256 expired within the leeway": h.mint_jwt("a", "alice", exp=now - 20)}
    for name, token in good.items():
        answer = call(h, "GET", "/api/v1/devices", {"Authorization": f"Bearer {token}", "X-Herald-App": "a"})
        R.check(f"control: a valid {name} token is accepted", answer.status == 200, describe(answer))

    # Issuer and audience (app c).
    c_cases = {
        "wrong iss": dict(iss="https://evil.example", aud=AUDIENCE),
        "no iss": dict(aud=AUDIENCE),
        "wrong aud": dict(iss=ISSUER, aud="someone-else"),
        "aud list without ours": dict(iss=ISSUER, aud=["x", "y"]),
        "no aud": dict(iss=ISSUER),
    }
    for name, extra in c_cases.items():
        for alg in ("HS256", "RS256"):
            token = h.mint_jwt("c", "alice", alg=alg, **extra)
            answer = call(h, "GET", "/api/v1/devices", {"Authorization": f"Bearer {token}", "X-Herald-App": "c"})
            plain = call(h, "POST", "/v1/installations", {"Authorization": f"Bearer {token}"}, {"platform": "ios", "token": apns_token()})
            R.check(f"app with issuer/audience refuses {name} ({alg})",
                    answer.status == 401 and err_code(answer) == "unauthorized" and plain.status == 401,
                    f"{describe(answer)}; without X-Herald-App: {describe(plain)}")
    token = h.mint_jwt("c", "alice", iss=ISSUER, aud=[AUDIENCE, "other"])
    answer = call(h, "GET", "/api/v1/devices", {"Authorization": f"Bearer {token}", "X-Herald-App": "c"})
    R.check("control: app c accepts its issuer and audience", answer.status == 200, describe(answer))

    # Keys: client key on server-key operations, user tokens on server-key operations.
    client = w.key("a", "client")
    user = s["A"]
    server_ops = [
        ("GET", "/v1/installations", None),
        ("GET", f"/v1/installations/{s['inst_A']}", None),
        ("GET", f"/v1/installations/{s['inst_A']}/preferences", None),
        ("PUT", f"/v1/installations/{s['inst_A']}/preferences", {"sound_enabled": False}),
        ("POST", f"/v1/installations/{s['inst_A']}/channel-credential", None),
        ("POST", "/v1/notifications", {"target": {"all": True}, "payload": {"title": "x"}}),
        ("GET", "/v1/notifications", None),
        ("GET", f"/v1/notifications/{s['notif_a']}", None),
        ("DELETE", f"/v1/notifications/{s['notif_a']}", None),
        ("GET", f"/v1/notifications/{s['notif_a']}/deliveries", None),
        ("DELETE", "/v1/users/bob/installations", None),
        ("GET", "/console/api/overview", None),
        ("GET", f"/console/api/installations/{s['inst_A']}/history", None),
        ("POST", "/api/internal/devices", {"name": "x"}),
        ("GET", f"/api/internal/devices/{s['cam_B']}", None),
        ("PUT", f"/api/internal/devices/{s['cam_B']}/owners/alice", {"status": "ACTIVE"}),
        ("POST", "/api/internal/events", {"eventId": "x", "deviceId": s["cam_B"], "classifyEventType": "person", "classifySummaryShort": "x"}),
        ("GET", f"/api/internal/events/{s['event_a']}", None),
        ("POST", "/api/v1/push/mobile/events", {"event_id": "e", "camera_id": "c", "camera_name": "n", "smart_detection_type": "person", "description": "d"}),
        ("GET", "/api/v1/devices", None),
        ("PATCH", f"/api/v1/devices/{s['argus_id_B']}", {"name": "x"}),
        ("DELETE", f"/api/v1/devices/{s['argus_id_B']}", None),
    ]
    user_allowed = {"GET /v1/installations", f"GET /v1/installations/{s['inst_A']}",
                    f"GET /v1/installations/{s['inst_A']}/preferences", f"PUT /v1/installations/{s['inst_A']}/preferences",
                    f"POST /v1/installations/{s['inst_A']}/channel-credential", "GET /api/v1/devices",
                    f"PATCH /api/v1/devices/{s['argus_id_B']}", f"DELETE /api/v1/devices/{s['argus_id_B']}"}
    before = (snapshot_installation(h, "a", s["inst_A"]), snapshot_installation(h, "a", s["inst_B"]),
              jbody(h.request("GET", f"/api/internal/devices/{s['cam_B']}", w.key("a"))),
              notification_state(h, w, s["notif_a"])["status"])
    for label, headers in (("client key", client), ("user token", user)):
        problems = []
        for method, path, body in server_ops:
            if label == "user token" and f"{method} {path}" in user_allowed:
                continue
            answer = call(h, method, path, headers, body)
            if answer.status != 403 or err_code(answer) != "forbidden":
                problems.append(f"{method} {path}: {describe(answer)}")
        R.check(f"{label} gets 403 forbidden on every server-key route", not problems, "; ".join(problems))
    after = (snapshot_installation(h, "a", s["inst_A"]), snapshot_installation(h, "a", s["inst_B"]),
             jbody(h.request("GET", f"/api/internal/devices/{s['cam_B']}", w.key("a"))),
             notification_state(h, w, s["notif_a"])["status"])
    R.check("forbidden calls changed nothing", before == after, f"{short(json.dumps(before), 500)} -> {short(json.dumps(after), 500)}")
    answer = call(h, "GET", "/v1/installations", {**w.key("b"), "X-Herald-App": "a"})
    ids = [item.get("id") for item in (jbody(answer) or {}).get("data", [])]
    R.check("app b's server key with X-Herald-App: a still acts on app b", answer.status == 200
            and s["inst_A"] not in ids and s["inst_B"] not in ids, describe(answer))


def count_installations(h, app: str) -> int:
    total, cursor = 0, None
    while True:
        path = "/v1/installations?limit=1000" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
        answer = h.request("GET", path, h.key_headers(app))
        body = jbody(answer)
        total += len(body["data"])
        cursor = body.get("next_cursor") or body.get("next")
        if not cursor:
            return total


# --- BOLA: native ---------------------------------------------------------------------------------

def native_bola(w: World, s: dict) -> None:
    h = w.h
    A, vic, miss = s["A"], s["inst_B"], missing_like(s["inst_B"])
    snap = lambda: snapshot_installation(h, "a", vic)  # noqa: E731
    like_missing("native: user A GET B's installation", lambda i: call(h, "GET", f"/v1/installations/{i}", A), vic, miss, snap)
    like_missing("native: user A PATCH B's installation", lambda i: call(h, "PATCH", f"/v1/installations/{i}", A, {"badge": 7, "channels": ["pwned"]}), vic, miss, snap)
    like_missing("native: user A DELETE B's installation", lambda i: call(h, "DELETE", f"/v1/installations/{i}", A), vic, miss, snap)
    like_missing("native: user A GET B's preferences", lambda i: call(h, "GET", f"/v1/installations/{i}/preferences", A), vic, miss, snap)
    like_missing("native: user A PUT B's preferences", lambda i: call(h, "PUT", f"/v1/installations/{i}/preferences", A, {"sound_enabled": True, "enabled_categories": None}), vic, miss, snap)
    like_missing("native: user A POST B's channel-credential", lambda i: call(h, "POST", f"/v1/installations/{i}/channel-credential", A), vic, miss, snap)
    endpoints_b = lambda: (jbody(call(h, "GET", f"/v1/installations/{vic}/push-endpoints", w.key("a"))) or {}).get("data")  # noqa: E731
    like_missing("unifiedpush: user A POST B's push-endpoints", lambda i: call(h, "POST", f"/v1/installations/{i}/push-endpoints", A), vic, miss, lambda: [snap(), endpoints_b()])
    like_missing("unifiedpush: user A GET B's push-endpoints", lambda i: call(h, "GET", f"/v1/installations/{i}/push-endpoints", A), vic, miss, snap)
    # B's endpoint, revoked through A's own installation: unknown there, and still live.
    b_endpoint = jbody(call(h, "POST", f"/v1/installations/{vic}/push-endpoints", s["B"])) or {}
    b_url = urllib.parse.urlparse(b_endpoint.get("endpoint", "")).path
    answer = call(h, "DELETE", f"/v1/installations/{s['inst_A']}/push-endpoints/{b_endpoint.get('id')}", A)
    R.check("unifiedpush: user A revoking B's endpoint id on A's installation is 404", answer.status == 404, describe(answer))
    answer = call(h, "GET", b_url, {})
    R.check("unifiedpush: B's endpoint is still live", answer.status == 200, describe(answer))
    made_up = "/up/" + b64url(os.urandom(32))
    for method in ("GET", "POST"):
        unknown, malformed = call(h, method, made_up, {"TTL": "60"}, b""), call(h, method, "/up/x", {"TTL": "60"}, b"")
        R.check(f"unifiedpush: {method} on a made-up secret answers like a malformed one (404)",
                unknown.status == malformed.status == 404 and jbody(unknown) == jbody(malformed),
                f"{describe(unknown)} | {describe(malformed)}")
    # Only the open count: the notification's delivery goes on meanwhile (its provider is a closed
    # port, so its sent / retried / rate-limited counts move by themselves).
    opened = lambda: notification_state(h, w, s["notif_a"])["opened"]  # noqa: E731
    like_missing("native: user A reports an open for B's installation",
                 lambda i: call(h, "POST", "/v1/opens", A, {"notification_id": s["notif_a"], "installation_id": i}),
                 vic, miss, lambda: [snap(), opened()])
    # Lists.
    for path in ("/v1/installations", "/v1/installations?user_id=bob", "/v1/installations?channel=news",
                 "/v1/installations?limit=1000&valid=true"):
        answer = call(h, "GET", path, A)
        body = jbody(answer) or {}
        others = [item for item in body.get("data", []) if item.get("user_id") != "alice"]
        R.check(f"native: user A's list {path} shows only A's", answer.status in (200, 400) and not others
                and s["tok_B"][-8:] not in answer.body.decode(), describe(answer))
    # Registering with bob's device id (the identity (app, device_id, service)) as alice.
    before = snapshot_installation(h, "a", vic)
    answer = call(h, "POST", "/v1/installations", A, {"platform": "ios", "token": apns_token(), "device_id": "bob-phone-1"})
    after = snapshot_installation(h, "a", vic)
    leaked = [field for field in ("bob-private-attribute", '"news"', "de-DE", '"person"') if field in answer.body.decode()]
    R.check("native: user A registering with B's device_id neither reads nor takes B's installation",
            (after[1] or {}).get("user_id") == "bob" and not leaked,
            f"POST /v1/installations as alice {{platform ios, new token, device_id: bob's}} -> {describe(answer)}; "
            f"bob's installation afterwards: user_id={(after[1] or {}).get('user_id')!r}, bob's own GET answers "
            f"{h.request('GET', f'/v1/installations/{vic}', s['B']).status}; "
            f"bob's data in alice's answer: {leaked}; bob's preferences now alice's to read: "
            f"{short(json.dumps(jbody(h.request('GET', f'/v1/installations/{vic}/preferences', A))), 200)}")
    if before != snapshot_installation(h, "a", vic):  # put bob's installation back for the later checks
        call(h, "POST", "/v1/installations", s["B"], {"platform": "ios", "token": s["tok_B"], "device_id": "bob-phone-1",
                                                      "channels": ["news"], "attributes": {"home": "bob-private-attribute"}})
        call(h, "PUT", f"/v1/installations/{vic}/preferences", s["B"], {"enabled_categories": ["person"], "sound_enabled": False})
    # PATCH of A's own installation to B's device id: a conflict only B's device id can cause.
    own = s["inst_A"]
    on_victim = call(h, "PATCH", f"/v1/installations/{own}", A, {"device_id": "bob-phone-1"})
    on_missing = call(h, "PATCH", f"/v1/installations/{own}", A, {"device_id": "nobody-" + secrets.token_hex(4)})
    call(h, "PATCH", f"/v1/installations/{own}", A, {"device_id": None})
    if on_victim.status != on_missing.status:
        R.warn("native: user A learns that B's device_id exists (PATCH own installation)",
               f"PATCH /v1/installations/{{A's}} {{device_id: bob's}} -> {describe(on_victim)} | an unused device_id -> "
               f"{on_missing.status}: device ids are unique per (app, service), across users")
    else:
        R.check("native: PATCH to B's device_id answers like an unused one", True)

    # Cross-app: app b's server key, client key and user token on app a's objects.
    target = s["inst_A"]
    miss_a = missing_like(target)
    snap_a = lambda: snapshot_installation(h, "a", target)  # noqa: E731
    for label, headers in (("app b's server key", w.key("b")), ("app b's client key", w.key("b", "client")),
                           ("app b's user token", w.user("b", "alice"))):
        for method, suffix, body in (("GET", "", None), ("PATCH", "", {"badge": 3}), ("DELETE", "", None),
                                     ("GET", "/preferences", None), ("PUT", "/preferences", {"sound_enabled": False}),
                                     ("POST", "/channel-credential", None), ("POST", "/push-endpoints", None),
                                     ("GET", "/push-endpoints", None)):
            answer_probe = call(h, method, f"/v1/installations/{miss_a}{suffix}", headers, body)
            if label == "app b's client key" and answer_probe.status == 403:
                continue  # the client key may not use this route at all (checked with the keys)
            like_missing(f"native cross-app: {label} {method} a's installation{suffix}",
                         lambda i, m=method, x=suffix, b=body, hd=headers: call(h, m, f"/v1/installations/{i}{x}", hd, b),
                         target, miss_a, snap_a)
    key_b = w.key("b")
    notif, miss_n = s["notif_a"], missing_like(s["notif_a"])
    snap_n = lambda: notification_state(h, w, notif)  # noqa: E731
    for method, suffix in (("GET", ""), ("GET", "/deliveries"), ("DELETE", "")):
        like_missing(f"native cross-app: app b's server key {method} a's notification{suffix}",
                     lambda i, m=method, x=suffix: call(h, m, f"/v1/notifications/{i}{x}", key_b), notif, miss_n, snap_n)
    answer = call(h, "GET", "/v1/notifications?limit=1000", key_b)
    R.check("native cross-app: app b's notification list has none of a's", notif not in answer.body.decode(), describe(answer))
    like_missing("native cross-app: app b's server key DELETE /v1/users/{a's user}/installations",
                 lambda u: call(h, "DELETE", f"/v1/users/{u}/installations", key_b), "alice", "nobody-" + secrets.token_hex(4),
                 lambda: [snapshot_installation(h, "a", s["inst_A"]), snapshot_installation(h, "a", s["argus_id_A"])])
    for label, headers in (("app b's server key", key_b), ("app b's client key", w.key("b", "client"))):
        like_missing(f"native cross-app: {label} reports an open on a's notification",
                     lambda n, hd=headers: call(h, "POST", "/v1/opens", hd, {"notification_id": n, "installation_id": s["inst_B"]}),
                     notif, miss_n, lambda: [opened()])
    answer = call(h, "POST", "/v1/notifications", key_b, {"target": {"installation_ids": [s["inst_A"]]}, "payload": {"title": "x"}, "dry_run": True})
    body = jbody(answer) or {}
    R.check("native cross-app: app b cannot target a's installation (dry run counts 0)",
            answer.status in (400, 404) or (answer.status == 200 and body.get("targeted") == 0), describe(answer))
    for target in ({"user_ids": ["alice", "bob"]}, {"channels": ["news", "lc"]}, {"where": {"user_id": {"$in": ["alice", "bob"]}}},
                   {"where": {"home": "bob-private-attribute"}}, {"tokens": [s["tok_B"]], "service": "apns"}):
        if "tokens" in target:
            continue  # raw tokens are sent without registration: nothing of a's to reach
        answer = call(h, "POST", "/v1/notifications", key_b, {"target": target, "payload": {"title": "x"}, "dry_run": True})
        R.check(f"native cross-app: app b's dry run to {json.dumps(target)} counts none of a's",
                answer.status == 200 and (jbody(answer) or {}).get("targeted") == 0, describe(answer))
    # A cursor taken from the server key's listing does not widen a user's list.
    page = jbody(h.request("GET", "/v1/installations?limit=1", w.key("a"))) or {}
    cursor = page.get("next_cursor")
    if cursor:
        answer = call(h, "GET", f"/v1/installations?limit=1000&cursor={urllib.parse.quote(cursor)}", A)
        others = [item for item in (jbody(answer) or {}).get("data", []) if item.get("user_id") != "alice"]
        R.check("native: a server-key cursor used by user A still lists only A's", answer.status in (200, 400) and not others,
                describe(answer))
    # Idempotency keys, event ids and CloudEvent ids are per app: app b reusing a's gets its own, learns nothing.
    if s.get("idem_a"):
        # (APNs targets only: an FCM send waits ~30 s on the unreachable OAuth endpoint and holds up shutdown)
        answer = call(h, "POST", "/v1/notifications", key_b, {"target": {"installation_ids": [s["inst_b"]]},
                                                              "payload": {"title": "x"}, "idempotency_key": s["idem_a"]})
        R.check("native cross-app: app b reusing a's idempotency key gets its own notification (202), not a's",
                answer.status == 202 and notif not in answer.body.decode(), describe(answer))
    else:
        R.check("native: the idempotency key is readable back for the cross-app check", False, "GET /v1/notifications/{id} has no idempotency_key")
    # Opens: alice reporting an open of a notification that was sent only to bob, for her own installation.
    before_counts = opened()
    answer = call(h, "POST", "/v1/opens", A, {"notification_id": notif, "installation_id": s["inst_A"]})
    if answer.status in (200, 201):
        R.warn("native: user A can count an open of a notification sent only to B (for A's own installation)",
               f"POST /v1/opens {{notification_id: one targeted at bob only, installation_id: alice's}} -> {describe(answer)}; "
               f"counts.opened {before_counts} -> {opened()}")
    else:
        R.check("native: user A cannot report an open of a notification not sent to A", True, describe(answer))
    # A device credential is not an API credential.
    answer = call(h, "POST", f"/v1/installations/{s['inst_A']}/channel-credential", A)
    credential = used((jbody(answer) or {}).get("credential", ""))
    s["hch_A"] = credential
    answer = call(h, "GET", f"/v1/installations/{s['inst_A']}", {"Authorization": f"Bearer {credential}"})
    R.check("native: A's channel credential is not an API credential (401)", answer.status == 401, describe(answer))


# --- BOLA: direct channel (WebSocket) ------------------------------------------------------------

def channel_bola(w: World, s: dict) -> None:
    try:
        from websockets.sync.client import connect
    except ImportError:
        R.check("channel: WebSocket checks", False, "python package websockets is not installed (scripts/test installs it)")
        return
    h = w.h
    url = f"ws://{h.host}:{h.port}/api/websocket"

    def session(credential: str, webhook: str | None):
        with connect(url, open_timeout=5, close_timeout=1) as ws:
            json.loads(ws.recv(timeout=5))
            ws.send(json.dumps({"type": "auth", "access_token": credential}))
            auth = json.loads(ws.recv(timeout=5))
            if auth.get("type") != "auth_ok" or webhook is None:
                return auth, None
            ws.send(json.dumps({"id": 1, "type": "mobile_app/push_notification_channel", "webhook_id": webhook,
                                "support_confirm": True}))
            return auth, json.loads(ws.recv(timeout=5))

    credential = s["hch_A"]
    auth, own = session(credential, s["inst_A"])
    R.check("channel: A's credential opens A's own channel (control)", auth.get("type") == "auth_ok" and own and own.get("success") is True,
            f"{auth} {own}")
    jwt_a = w.h.mint_jwt("a", "alice")
    for label, cred in (("A's channel credential", credential), ("A's user token", jwt_a)):
        _, theirs = session(cred, s["inst_B"])
        _, missing = session(cred, missing_like(s["inst_B"]))
        R.check(f"channel: {label} cannot subscribe to B's installation", theirs is not None and theirs.get("success") is False,
                f"{theirs}")
        if theirs and missing and theirs.get("error") != missing.get("error"):
            R.warn(f"channel: {label} learns that B's webhook id exists",
                   f"B's: {theirs.get('error')} vs missing: {missing.get('error')} (docs/direct-channel.md documents Home Assistant's "
                   "'User not linked to this webhook ID' for another user's id)")
        else:
            R.check(f"channel: {label} on B's webhook id answers like a missing one", True)
    from websockets.exceptions import InvalidStatus
    parts = credential.split(".")
    forged = used(f"hch_a.{s['inst_B']}.{parts[-1]}")
    for label, header in (("A's own credential (control)", credential), ("A's MAC on B's installation id", forged),
                          ("the server key", w.a.server_key), ("an alg none token", forge({"alg": "none"}, claims("alice")))):
        try:
            with connect(f"ws://{h.host}:{h.port}/v1/channel", additional_headers={"Authorization": f"Bearer {header}"},
                         open_timeout=5, close_timeout=1) as ws:
                outcome = f"upgraded: {ws.recv(timeout=5)}"
        except InvalidStatus as error:
            outcome = error.response.status_code
        if "control" in label:
            R.check(f"channel: {label} in the upgrade's Authorization upgrades with auth_ok", "auth_ok" in str(outcome), str(outcome))
        else:
            R.check(f"channel: {label} in the upgrade's Authorization refuses the upgrade (4xx)",
                    isinstance(outcome, int) and 400 <= outcome < 500, str(outcome))
    cross = used(f"hch_b.{s['inst_A']}.{parts[-1]}")
    for label, cred in (("A's MAC on B's installation id", forged), ("A's MAC under app b", cross),
                        ("the server key", w.a.server_key), ("the client key", w.a.client_key),
                        ("an expired user token", w.h.mint_jwt("a", "alice", exp=int(time.time()) - 600))):
        auth, _ = session(cred, None)
        R.check(f"channel: {label} is refused (auth_invalid)", auth.get("type") == "auth_invalid", f"{auth}")


# --- BOLA: ArgusAI ---------------------------------------------------------------------------------

def argus_bola(w: World, s: dict) -> None:
    h = w.h
    A = s["A"]
    dev, miss_dev = s["argus_dev_B"], str(uuid.uuid4())
    inst, miss_inst = s["argus_id_B"], missing_like(s["argus_id_B"])
    snap = lambda: [snapshot_installation(h, "a", inst), jbody(h.request("POST", "/api/v1/push/mobile/preferences", s["B"], {"device_id": dev}))]  # noqa: E731
    like_missing("ArgusAI: A PUT tokens/{B's device_id}", lambda d: call(h, "PUT", f"/api/v1/push/mobile/tokens/{d}", A, {"device_token": apns_token()}), dev, miss_dev, snap)
    like_missing("ArgusAI: A DELETE tokens/{B's device_id}", lambda d: call(h, "DELETE", f"/api/v1/push/mobile/tokens/{d}", A), dev, miss_dev, snap)
    like_missing("ArgusAI: A POST preferences {B's device_id} (read)", lambda d: call(h, "POST", "/api/v1/push/mobile/preferences", A, {"device_id": d}), dev, miss_dev, snap)
    like_missing("ArgusAI: A POST preferences {B's device_id, members} (write)", lambda d: call(h, "POST", "/api/v1/push/mobile/preferences", A, {"device_id": d, "sound_enabled": True, "enabled_cameras": None}), dev, miss_dev, snap)
    like_missing("ArgusAI: A PUT preferences {B's device_id}", lambda d: call(h, "PUT", "/api/v1/push/mobile/preferences", A, {"device_id": d, "quiet_hours_enabled": True, "quiet_hours_start": "01:00", "quiet_hours_end": "02:00"}), dev, miss_dev, snap)
    like_missing("ArgusAI: A PATCH devices/{B's id}", lambda i: call(h, "PATCH", f"/api/v1/devices/{i}", A, {"name": "pwned"}), inst, miss_inst, snap)
    like_missing("ArgusAI: A DELETE devices/{B's id}", lambda i: call(h, "DELETE", f"/api/v1/devices/{i}", A), inst, miss_inst, snap)
    # The native installation id of B's native registration through the dialect too.
    like_missing("ArgusAI: A PATCH devices/{B's native installation}", lambda i: call(h, "PATCH", f"/api/v1/devices/{i}", A, {"name": "x"}), s["inst_B"], missing_like(s["inst_B"]),
                 lambda: snapshot_installation(h, "a", s["inst_B"]))
    answer = call(h, "GET", "/api/v1/devices", A)
    listed = json.dumps(jbody(answer))
    R.check("ArgusAI: A's device list has none of B's", answer.status == 200 and inst not in listed and s["inst_B"] not in listed
            and dev not in listed, describe(answer))
    # Events are deduplicated per app: app b's event with a's event_id is b's own.
    event = {"event_id": "sec-argus-" + secrets.token_hex(4), "camera_id": "cam-9", "camera_name": "Gate",
             "smart_detection_type": "person", "description": "someone", "user_ids": ["bob"]}
    first = call(h, "POST", "/api/v1/push/mobile/events", w.key("a"), event)
    again = call(h, "POST", "/api/v1/push/mobile/events", w.key("b"), event)
    a_id = (jbody(first) or {}).get("notification_id")
    R.check("ArgusAI cross-app: app b's event with a's event_id is b's own (202), not a's notification",
            first.status == 202 and again.status == 202 and a_id and a_id not in again.body.decode(),
            f"a: {describe(first)}; b: {describe(again)}")
    B_b = w.user("b", "bob")
    like_missing("ArgusAI cross-app: app b's user bob PATCH a's bob's device", lambda i: call(h, "PATCH", f"/api/v1/devices/{i}", B_b, {"name": "x"}), inst, miss_inst, snap)
    like_missing("ArgusAI cross-app: app b's user bob DELETE tokens/{a's bob's device_id}", lambda d: call(h, "DELETE", f"/api/v1/push/mobile/tokens/{d}", B_b), dev, miss_dev, snap)


# --- BOLA: AOVIS ----------------------------------------------------------------------------------

def aovis_bola(w: World, s: dict) -> None:
    h = w.h
    cam = s["cam_B"]
    snap_cam = lambda: jbody(h.request("GET", f"/api/internal/devices/{cam}", w.key("a")))  # noqa: E731
    like_missing("AOVIS: A registers with B's ACTIVE camera (like an unknown camera)",
                 lambda c: call(h, "POST", "/api/internal/push/register", s["A"], {"platform": "ios", "token": apns_token(), "deviceId": c}),
                 cam, missing_like(cam), snap_cam)
    key_b = w.key("b")
    like_missing("AOVIS cross-app: app b's key GET a's camera", lambda c: call(h, "GET", f"/api/internal/devices/{c}", key_b), cam, missing_like(cam), snap_cam)
    like_missing("AOVIS cross-app: app b's key PUT an owner on a's camera", lambda c: call(h, "PUT", f"/api/internal/devices/{c}/owners/mallory", key_b, {"status": "ACTIVE"}), cam, missing_like(cam), snap_cam)
    like_missing("AOVIS cross-app: app b's key revokes bob on a's camera", lambda c: call(h, "PUT", f"/api/internal/devices/{c}/owners/bob", key_b, {"status": "REVOKED"}), cam, missing_like(cam), snap_cam)
    like_missing("AOVIS cross-app: app b's key GET a's event by its CloudEvent id",
                 lambda e: call(h, "GET", f"/api/internal/events/{e}", key_b), s["cloud_id_a"], "ce-" + secrets.token_hex(6))
    for label, body in (("a's eventId", {"eventId": s["event_key_a"]}), ("a's CloudEvent id", {"eventId": "b-" + secrets.token_hex(4), "id": s["cloud_id_a"]})):
        answer = call(h, "POST", "/api/internal/devices", key_b, {"name": "b's camera"})
        cam_b = (jbody(answer) or {}).get("id")
        answer = call(h, "POST", "/api/internal/events", key_b, {**body, "deviceId": cam_b, "classifyEventType": "pet",
                                                                  "classifySummaryShort": "b's own"})
        R.check(f"AOVIS cross-app: app b's event with {label} is b's own (201), not a's event or 409",
                answer.status == 201 and s["event_a"] not in answer.body.decode(), describe(answer))
    event = s["event_a"]
    like_missing("AOVIS cross-app: app b's key GET a's event", lambda e: call(h, "GET", f"/api/internal/events/{e}", key_b), event, missing_like(event))
    notifications = lambda: len((jbody(h.request("GET", "/v1/notifications?limit=1000", w.key("a"))) or {}).get("data", []))  # noqa: E731
    like_missing("AOVIS cross-app: app b's key posts an event for a's camera",
                 lambda c: call(h, "POST", "/api/internal/events", key_b, {"eventId": "x-" + secrets.token_hex(4), "deviceId": c, "classifyEventType": "person", "classifySummaryShort": "x"}),
                 cam, missing_like(cam), lambda: [snap_cam(), notifications()])


# --- BOLA: LeanCloud ------------------------------------------------------------------------------

def leancloud_bola(w: World, s: dict) -> None:
    h = w.h
    obj, miss = s["lc_obj"], missing_like(s["lc_obj"])
    snap = lambda: jbody(h.request("GET", f"/1.1/installations/{obj}", h.leancloud_headers("a", master=True)))  # noqa: E731
    for label, headers in (("app b's app key", lambda: h.leancloud_headers("b")), ("app b's master key", lambda: h.leancloud_headers("b", master=True)),
                           ("app b's X-LC-Key", lambda: h.leancloud_headers("b", sign=False))):
        for base in ("/1.1/installations", "/1.1/classes/_Installation"):
            for method, body in (("GET", None), ("PUT", {"channels": {"__op": "AddUnique", "objects": ["pwned"]}, "badge": 9}), ("DELETE", None)):
                like_missing(f"LeanCloud cross-app: {label} {method} {base}/{{a's}}",
                             lambda i, m=method, b=body, bs=base, hd=headers: call(h, m, f"{bs}/{i}", hd(), b), obj, miss, snap)
    # Same app, another dialect: the LeanCloud app key (shipped in apps) names bob's native installation.
    answer = call(h, "GET", f"/1.1/installations/{s['inst_B']}", h.leancloud_headers("a"))
    if answer.status == 200:
        R.warn("LeanCloud: app a's app key reads any installation of app a by id, a native user's too (whole token)",
               f"GET /1.1/installations/{{bob's native installation}} with the LeanCloud app key -> {describe(answer)}; "
               "docs/dialects/leancloud.md: 'the app key creates, updates, reads and deletes the installation it names' (the native "
               "client key may not read, and user A may not see B's)")
    else:
        R.check("LeanCloud: the app key cannot read a native user's installation", True, describe(answer))
    # Saving with a's token under app b creates b's own object; a's is unchanged.
    before = snap()
    answer = call(h, "POST", "/1.1/installations?fetchWhenSave=true", h.leancloud_headers("b"), {"deviceType": "ios", "deviceToken": s["lc_tok"]})
    R.check("LeanCloud cross-app: app b saving a's deviceToken neither returns nor changes a's object",
            obj not in answer.body.decode() and "secretField" not in answer.body.decode() and snap() == before, describe(answer))
    # Queries.
    master_b = h.leancloud_headers("b", master=True)
    for where in ({"objectId": obj}, {"deviceToken": s["lc_tok"]}, {"channels": "lc"}, {"secretField": "keep"},
                  {"objectId": {"$in": [obj]}}, {"$or": [{"objectId": obj}, {"deviceType": "ios"}]}):
        path = "/1.1/installations?count=1&where=" + urllib.parse.quote(json.dumps(where))
        answer = call(h, "GET", path, master_b)
        R.check(f"LeanCloud cross-app: b's master where={json.dumps(where)} never returns a's",
                answer.status in (200, 400) and obj not in answer.body.decode() and "secretField" not in answer.body.decode(),
                describe(answer))
    for path in ("/1.1/installations", "/1.1/classes/_Installation", "/1.1/installations?where=" + urllib.parse.quote(json.dumps({"objectId": obj})),
                 "/1.1/classes/_Notification", "/1.1/users/" + s["lc_user"], "/1.1/classes/_User/" + s["lc_user"]):
        answer = call(h, "GET", path, h.leancloud_headers("a"))
        R.check(f"LeanCloud: app key GET {path.split('?')[0]}{'?where' if '?' in path else ''} is the master key's (403 119)",
                answer.status == 403 and (jbody(answer) or {}).get("code") == 119, describe(answer))
    answer = call(h, "POST", "/1.1/users", h.leancloud_headers("a"), {"username": "x"})
    R.check("LeanCloud: app key POST /1.1/users is the master key's (403 119)", answer.status == 403 and (jbody(answer) or {}).get("code") == 119, describe(answer))
    user, miss_user = s["lc_user"], secrets.token_hex(12)
    snap_user = lambda: jbody(h.request("GET", f"/1.1/users/{user}", h.leancloud_headers("a", master=True)))  # noqa: E731
    for method, body in (("GET", None), ("PUT", {"username": "pwned"}), ("DELETE", None)):
        like_missing(f"LeanCloud cross-app: b's master {method} a's _User", lambda i, m=method, b=body: call(h, m, f"/1.1/users/{i}", master_b, b), user, miss_user, snap_user)
    push, miss_push = s["lc_push"], missing_like(s["lc_push"])
    for path in ("/1.1/tables/Notifications/{}", "/1.1/classes/_Notification/{}"):
        for label, headers in (("app key", lambda: h.leancloud_headers("b")), ("master", lambda: master_b)):
            like_missing(f"LeanCloud cross-app: b's {label} GET {path.format('{a push}')}", lambda i, p=path, hd=headers: call(h, "GET", p.format(i), hd()), push, miss_push)
    answer = call(h, "GET", "/1.1/classes/_Notification?where=" + urllib.parse.quote(json.dumps({"objectId": push})), master_b)
    R.check("LeanCloud cross-app: b's master _Notification query never returns a's push", push not in answer.body.decode(), describe(answer))
    # Batch.
    like_missing("LeanCloud cross-app: b's batch GET a's installation",
                 lambda i: call(h, "POST", "/1.1/batch", master_b, {"requests": [{"method": "GET", "path": f"/1.1/installations/{i}"}]}), obj, miss, snap)
    like_missing("LeanCloud cross-app: b's batch DELETE a's installation",
                 lambda i: call(h, "POST", "/1.1/batch", master_b, {"requests": [{"method": "DELETE", "path": f"/1.1/classes/_Installation/{i}"}]}), obj, miss, snap)
    answer = call(h, "POST", "/1.1/batch", h.leancloud_headers("a"), {"requests": [{"method": "GET", "path": "/1.1/installations"}]})
    body = jbody(answer)
    R.check("LeanCloud: an app-key batch cannot list installations (119 inside)", isinstance(body, list) and body and "error" in body[0]
            and body[0]["error"].get("code") == 119, describe(answer))
    # A push of app b aimed at a's object reaches nothing of a.
    answer = call(h, "POST", "/1.1/push", master_b, {"data": {"alert": "x"}, "where": {"objectId": obj}})
    push_b = (jbody(answer) or {}).get("objectId")
    devices = None
    for _ in range(20):
        status = jbody(h.request("GET", f"/1.1/classes/_Notification/{push_b}", master_b)) or {}
        devices = status.get("devices")
        if status.get("status") not in ("scheduled", "in queue", None):
            break
        time.sleep(0.1)
    R.check("LeanCloud cross-app: b's push where objectId=a's reaches no device", answer.status == 200 and not devices,
            f"{describe(answer)} status devices={devices}")
    answer = call(h, "POST", "/1.1/push", master_b, {"data": {"alert": "x"}, "where": {"deviceType": "ios"},
                                                     "notification_id": s["lc_notification_id"]})
    R.check("LeanCloud cross-app: app b reusing a's notification_id gets its own push, not a's",
            answer.status == 200 and push not in answer.body.decode(), describe(answer))
    # Client push off for app b.
    answer = call(h, "POST", "/1.1/push", h.leancloud_headers("b"), {"data": {"alert": "x"}})
    R.check("LeanCloud: client_push off: the app key cannot push (403 119)", answer.status == 403 and (jbody(answer) or {}).get("code") == 119, describe(answer))
    answer = call(h, "POST", "/1.1/installations", h.leancloud_headers("a"), {"deviceType": "ios", "deviceToken": apns_token(), "valid": False})
    R.check("LeanCloud: the app key cannot set valid (master only, 119)", answer.status == 403 and (jbody(answer) or {}).get("code") == 119, describe(answer))


# --- BOLA: Home Assistant relay --------------------------------------------------------------------

def ntfy_bola(w: World, s: dict) -> None:
    h = w.h
    a, b = h.app("a"), h.app("b")
    # A device of app b on the channel "alerts": app a's keys never reach it.
    token = used(apns_token())
    call(h, "POST", "/v1/installations", w.key("b"), {"platform": "ios", "token": token, "channels": ["alerts"]})
    sent = call(h, "POST", "/alerts", {"Authorization": f"Bearer {used(a.publish_key)}"}, b"for a's alerts")
    notification = jbody(h.request("GET", f"/v1/notifications/{(jbody(sent) or {}).get('id')}", w.key("b")))
    R.check("ntfy: app a's publish key publishes in app a only (app b's key cannot even read it)",
            sent.status == 200 and (notification or {}).get("error", {}).get("code") == "not_found", describe(sent))
    answer = call(h, "POST", "/news", {"Authorization": f"Bearer {used(a.alerts_publish_key)}"}, b"x")
    R.check("ntfy: a key bound to the channel alerts cannot publish to another (403 40301)",
            answer.status == 403 and (jbody(answer) or {}).get("code") == 40301, describe(answer))
    for label, headers in [("the server key", w.key("a")), ("the client key", h.key_headers("a", "client")),
                           ("a user token", s["A"]), ("app b's server key", w.key("b"))]:
        answer = call(h, "POST", "/alerts", headers, b"x")
        R.check(f"ntfy: {label} is not a publish key (401 40101)",
                answer.status == 401 and (jbody(answer) or {}).get("code") == 40101, describe(answer))
    for method, path in [("GET", "/v1/installations"), ("POST", "/v1/notifications"), ("GET", "/v1/notifications")]:
        answer = call(h, method, path, {"Authorization": f"Bearer {a.publish_key}"},
                      {"target": {"all": True}, "payload": {"title": "x"}} if method == "POST" else None)
        R.check(f"ntfy: a publish key is refused on the native {method} {path} (401)", answer.status == 401,
                describe(answer))


def gotify_bola(w: World, s: dict) -> None:
    h = w.h
    a = h.app("a")
    sent = call(h, "POST", "/message", {"X-Gotify-Key": used(a.alerts_publish_key)}, {"message": "for a's alerts"})
    herald_id = ((jbody(sent) or {}).get("extras") or {}).get("herald::notification", {}).get("id")
    mine = jbody(h.request("GET", f"/v1/notifications/{herald_id}", w.key("a"))) or {}
    theirs = jbody(h.request("GET", f"/v1/notifications/{herald_id}", w.key("b"))) or {}
    R.check("Gotify: a key bound to the channel alerts sends to app a's alerts only, invisible to app b",
            sent.status == 200 and (mine.get("target") or {}).get("channels") == ["alerts"]
            and (theirs.get("error") or {}).get("code") == "not_found", f"{describe(sent)} | {short(json.dumps(mine))}")
    for label, place in [("app a's server key as X-Gotify-Key", {"X-Gotify-Key": h.app("a").server_key}),
                         ("app b's server key as a Bearer token", w.key("b"))]:
        answer = call(h, "POST", "/message", place, {"message": "x"})
        R.check(f"Gotify: {label} is refused (401, Gotify's body)",
                answer.status == 401 and (jbody(answer) or {}).get("errorCode") == 401, describe(answer))


def matrix_bola(w: World, s: dict) -> None:
    h = w.h

    def notify(app_id: str, pushkey: str):
        used(pushkey)
        return call(h, "POST", "/_matrix/push/v1/notify", {}, {"notification": {
            "event_id": "$e", "room_id": "!r:localhost", "type": "m.room.message", "sender": "@x:localhost",
            "content": {"msgtype": "m.text", "body": "hi"}, "counts": {"unread": 1},
            "devices": [{"app_id": app_id, "pushkey": pushkey, "data": {}}]}})

    def snapshot_b():
        return jbody(h.request("GET", f"/v1/installations/{s['inst_b']}", w.key("b")))

    def count_a():
        return len((jbody(h.request("GET", "/v1/installations?limit=1000", w.key("a"))) or {}).get("data", []))

    before_b = snapshot_b()
    answer = notify("org.herald.a.ios", s["tok_b"])
    listed = jbody(h.request("GET", "/v1/notifications?limit=1", w.key("a"))) or {}
    R.check("Matrix: app a's app id with app b's token is queued in app a (a device of a's), never b's",
            answer.status == 200 and (jbody(answer) or {}).get("rejected") == [] and s["inst_b"] not in json.dumps(listed)
            and snapshot_b() == before_b, describe(answer))
    before = count_a()
    answer = notify("org.unknown.app", apns_token())
    R.check("Matrix: an app id no app lists is rejected and registers nothing",
            answer.status == 200 and len((jbody(answer) or {}).get("rejected", [])) == 1 and count_a() == before,
            describe(answer))


def relay_bola(w: World, s: dict) -> None:
    h = w.h
    token_x = s["tok_A"]
    token_y = s["tok_B"]

    def limits(token):
        return (jbody(call(h, "POST", "/ha/push/rate_limits", {}, {"push_token": token})) or {}).get("rateLimits")

    def push(token, message="hello"):
        return call(h, "POST", "/ha/push", {}, {"message": message, "push_token": token,
                                               "registration_info": {"app_id": "io.robbie.HomeAssistant", "app_version": "1", "webhook_id": "w1"}})

    before_x = limits(token_x)
    answer = push(token_y)
    message = (jbody(answer) or {}).get("messageId")
    R.check("HA relay: a push with B's token is accepted (control)", answer.status == 201, describe(answer))
    notification = jbody(h.request("GET", f"/v1/notifications/{message}", w.key("a"))) or {}
    text = json.dumps(notification)
    R.check("HA relay: B's push targets only B's installation", s["inst_A"] not in text and s["inst_B"] in text,
            short(text, 600))
    R.check("HA relay: B's pushes do not count against A's token", limits(token_x) == before_x, f"{before_x} -> {limits(token_x)}")
    # App b has the relay off: its token answers like an unknown one.
    like_missing("HA relay: rate_limits of a relay-off app's token answer like an unknown token",
                 lambda t: call(h, "POST", "/ha/push/rate_limits", {}, {"push_token": t}), s["tok_b"], apns_token())
    # The relay apps are open (they register tokens they have never seen, as the document's relay forwards any): a
    # relay-off app's token is one they have never seen. Several apps relay here and none lists Companion app ids
    # (app_ids), so it is refused as UnknownApp; with one relay app it would be registered there. Either way app b's
    # installation is never reached.
    def snapshot_b():
        return jbody(h.request("GET", f"/v1/installations/{s['inst_b']}", w.key("b")))
    before_b = snapshot_b()
    answer = push(s["tok_b"], "for b")
    message = (jbody(answer) or {}).get("messageId")
    notification = jbody(h.request("GET", f"/v1/notifications/{message}", w.key("a"))) if message else None
    relayed_elsewhere = answer.status == 201 and notification is not None and s["inst_b"] not in json.dumps(notification)
    refused = answer.status == 404 and (jbody(answer) or {}).get("errorType") == "UnknownApp"
    R.check("HA relay: a relay-off app's token never reaches app b's device (a new token of a relay app, or UnknownApp)",
            (relayed_elsewhere or refused) and snapshot_b() == before_b,
            f"{describe(answer)}; {short(json.dumps(notification), 400)}")


# --- BOLA: SNS-compatible API ----------------------------------------------------------------------

def sns_bola(w: World, s: dict) -> None:
    h = w.h
    ep, app, topic, sub = s["sns_ep"], s["sns_app"], s["sns_topic"], s["sns_sub"]
    def snap_ep():
        answer = sns(h, "a", {"Action": "GetEndpointAttributes", "EndpointArn": ep})
        return [answer.status, answer.body.decode().split("<ResponseMetadata>")[0],
                snapshot_installation(h, "a", ep.rsplit("/", 1)[-1])]

    snap_app = lambda: [sns(h, "a", {"Action": "GetPlatformApplicationAttributes", "PlatformApplicationArn": app}).body.decode().split("<ResponseMetadata>")[0],
                        sns(h, "a", {"Action": "ListEndpointsByPlatformApplication", "PlatformApplicationArn": app}).body.decode().split("<ResponseMetadata>")[0]]  # noqa: E731
    snap_topic = lambda: sns(h, "a", {"Action": "ListSubscriptionsByTopic", "TopicArn": topic}).body.decode().split("<ResponseMetadata>")[0]  # noqa: E731
    miss_ep, miss_app = sns_arn_with_id(ep), app + "-" + secrets.token_hex(3)
    miss_topic, miss_sub = topic + "-" + secrets.token_hex(3), sns_arn_with_id(sub)
    cases = [
        ("GetEndpointAttributes", lambda a: {"Action": "GetEndpointAttributes", "EndpointArn": a}, ep, miss_ep, snap_ep),
        ("SetEndpointAttributes", lambda a: {"Action": "SetEndpointAttributes", "EndpointArn": a, "Attributes.entry.1.key": "CustomUserData", "Attributes.entry.1.value": "pwned"}, ep, miss_ep, snap_ep),
        ("SetEndpointAttributes Token", lambda a: {"Action": "SetEndpointAttributes", "EndpointArn": a, "Attributes.entry.1.key": "Token", "Attributes.entry.1.value": apns_token()}, ep, miss_ep, snap_ep),
        ("DeleteEndpoint", lambda a: {"Action": "DeleteEndpoint", "EndpointArn": a}, ep, miss_ep, snap_ep),
        ("Publish TargetArn", lambda a: {"Action": "Publish", "TargetArn": a, "Message": "hi"}, ep, miss_ep, snap_ep),
        ("GetPlatformApplicationAttributes", lambda a: {"Action": "GetPlatformApplicationAttributes", "PlatformApplicationArn": a}, app, miss_app, snap_app),
        ("SetPlatformApplicationAttributes", lambda a: {"Action": "SetPlatformApplicationAttributes", "PlatformApplicationArn": a, "Attributes.entry.1.key": "ApplePlatformBundleID", "Attributes.entry.1.value": "evil"}, app, miss_app, snap_app),
        ("ListEndpointsByPlatformApplication", lambda a: {"Action": "ListEndpointsByPlatformApplication", "PlatformApplicationArn": a}, app, miss_app, snap_app),
        ("CreatePlatformEndpoint in a's application", lambda a: {"Action": "CreatePlatformEndpoint", "PlatformApplicationArn": a, "Token": s["sns_tok"]}, app, miss_app, snap_app),
        ("DeletePlatformApplication", lambda a: {"Action": "DeletePlatformApplication", "PlatformApplicationArn": a}, app, miss_app, snap_app),
        ("ListSubscriptionsByTopic", lambda a: {"Action": "ListSubscriptionsByTopic", "TopicArn": a}, topic, miss_topic, snap_topic),
        ("Publish TopicArn", lambda a: {"Action": "Publish", "TopicArn": a, "Message": "hi"}, topic, miss_topic, snap_topic),
        ("Subscribe b's endpoint to a's topic", lambda a: {"Action": "Subscribe", "TopicArn": a, "Protocol": "application", "Endpoint": s["sns_ep_b"]}, topic, miss_topic, snap_topic),
        ("Subscribe a's endpoint to b's topic", lambda a: {"Action": "Subscribe", "TopicArn": s["sns_topic_b"], "Protocol": "application", "Endpoint": a}, ep, miss_ep, snap_ep),
        ("Unsubscribe", lambda a: {"Action": "Unsubscribe", "SubscriptionArn": a}, sub, miss_sub, snap_topic),
        ("DeleteTopic", lambda a: {"Action": "DeleteTopic", "TopicArn": a}, topic, miss_topic, snap_topic),
    ]
    answer = sns(h, "b", {"Action": "CreateTopic", "Name": "sec-topic-b-" + secrets.token_hex(3)})
    s["sns_topic_b"] = xml(answer, "TopicArn")
    for name, params, victim, missing, snap in cases:
        like_missing(f"SNS cross-app: app b's key {name} on a's ARN", lambda a, p=params: sns(h, "b", p(a)), victim, missing, snap)
    for action, element in (("ListPlatformApplications", s["sns_app_name"]), ("ListTopics", topic)):
        answer = sns(h, "b", {"Action": action})
        R.check(f"SNS cross-app: app b's {action} has none of a's", element not in answer.body.decode(), describe(answer))


# --- BOLA: console --------------------------------------------------------------------------------

def webhooks_bola(w: World, s: dict) -> None:
    """Another app's server key sees and changes nothing of app a's webhook endpoints; client and publish keys
    reach none (docs/webhooks.md)."""
    h = w.h
    created = call(h, "POST", "/v1/webhooks", w.key("a"), {"url": "https://hooks.example.com/a", "events": ["*"]})
    if not R.check("webhooks: app a's server key adds an endpoint", created.status == 201, describe(created)):
        return
    victim = jbody(created)["id"]
    miss = missing_like(victim)

    def snapshot():
        view = jbody(h.request("GET", f"/v1/webhooks/{victim}", w.key("a")))
        return {key: value for key, value in view.items() if key != "backlog"} if isinstance(view, dict) else view

    attempts = [
        ("GET", "", None), ("PATCH", "", {"url": "https://evil.example.com/x", "enabled": False}), ("DELETE", "", None),
        ("POST", "/rotate-secret", None), ("POST", "/test", None), ("GET", "/deliveries", None),
        ("POST", "/replay", {"since": "2020-01-01T00:00:00Z"}),
    ]
    for method, suffix, body in attempts:
        like_missing(f"webhooks: app b's server key {method} a's endpoint{suffix}",
                     lambda i, m=method, x=suffix, b=body: call(h, m, f"/v1/webhooks/{i}{x}", w.key("b"), b),
                     victim, miss, snapshot)
    listing = call(h, "GET", "/v1/webhooks", w.key("b"))
    R.check("webhooks: app b's list holds none of a's", listing.status == 200 and victim.encode() not in listing.body,
            describe(listing))
    before = len(jbody(h.request("GET", "/v1/webhooks", w.key("a"))).get("data", []))
    for kind in ("client", "publish"):
        for method, path, body in [("GET", "/v1/webhooks", None),
                                   ("POST", "/v1/webhooks", {"url": "https://evil.example.com/x", "events": ["*"]}),
                                   ("DELETE", f"/v1/webhooks/{victim}", None),
                                   ("POST", f"/v1/webhooks/{victim}/rotate-secret", None)]:
            answer = call(h, method, path, w.key("a", kind), body)
            R.check(f"webhooks: app a's {kind} key {method} {path.replace(victim, '{id}')} is refused",
                    answer.status in (401, 403), describe(answer))
    after = len(jbody(h.request("GET", "/v1/webhooks", w.key("a"))).get("data", []))
    R.check("webhooks: the refused keys created and deleted nothing", before == after, f"{before} -> {after}")


def templates_bola(w: World, s: dict) -> None:
    """Another app's server key reads, renders, replaces and deletes none of app a's templates, nor sends with
    them; client and publish keys reach none (docs/content.md, "Templates")."""
    h = w.h
    victim = "tpl-" + secrets.token_hex(4)
    saved = call(h, "PUT", f"/v1/templates/{victim}", w.key("a"), {"title": "Order {{order}}", "body": "a's words"})
    if not R.check("templates: app a's server key saves a template", saved.status == 201, describe(saved)):
        return
    miss = "tpl-" + secrets.token_hex(4)

    def snapshot():
        return jbody(h.request("GET", f"/v1/templates/{victim}", w.key("a")))

    for method, suffix, body in [("GET", "", None), ("DELETE", "", None), ("POST", "/render", {"variables": {"order": 1}})]:
        like_missing(f"templates: app b's server key {method} a's template{suffix}",
                     lambda i, m=method, x=suffix, b=body: call(h, m, f"/v1/templates/{i}{x}", w.key("b"), b),
                     victim, miss, snapshot)
    # Names are per app: b's save of the same name is b's own first revision, and a's is untouched.
    own = call(h, "PUT", f"/v1/templates/{victim}", w.key("b"), {"title": "b's words"})
    R.check("templates: app b's save of a's name makes b's own", own.status == 201 and jbody(own).get("revision") == 1
            and snapshot().get("title") == "Order {{order}}", describe(own))
    call(h, "DELETE", f"/v1/templates/{victim}", w.key("b"))
    listing = call(h, "GET", "/v1/templates", w.key("b"))
    R.check("templates: app b's list holds none of a's", listing.status == 200 and victim.encode() not in listing.body,
            describe(listing))
    answer = call(h, "POST", "/v1/notifications", w.key("b"), {"target": {"all": True}, "template": {"name": victim}})
    R.check("templates: app b cannot send with a's template", answer.status == 400
            and err_code(answer) == "template_not_found", describe(answer))
    for kind in ("client", "publish"):
        for method, path, body in [("GET", "/v1/templates", None), ("PUT", f"/v1/templates/{victim}", {"title": "x"}),
                                   ("DELETE", f"/v1/templates/{victim}", None)]:
            answer = call(h, method, path, w.key("a", kind), body)
            R.check(f"templates: app a's {kind} key {method} {path.replace(victim, '{name}')} is refused",
                    answer.status in (401, 403), describe(answer))
    R.check("templates: a's template is unchanged", snapshot().get("revision") == 1, str(snapshot()))


def revisions_bola(w: World, s: dict) -> None:
    """Another app's server key changes and removes none of app a's updatable notifications, through the native
    API or ntfy's sequence ids; client and publish keys reach none (docs/content.md, "Updating and deleting")."""
    h = w.h
    sent = call(h, "POST", "/v1/notifications", w.key("a"),
                {"target": {"all": True}, "updatable": True, "payload": {"title": "a's words"}})
    victim = (jbody(sent) or {}).get("id")
    if not R.check("revisions: app a's server key sends an updatable notification", sent.status == 202 and victim,
                   describe(sent)):
        return
    miss = missing_like(victim)

    def snapshot():
        return notification_state(h, w, victim)

    def settled(notification_id: str) -> None:
        """Waits until the notification's delivery is over, so that its record holds still."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = notification_state(h, w, notification_id)
            if isinstance(state, dict) and state.get("status") not in ("queued or sending", "scheduled"):
                return
            time.sleep(0.1)

    settled(victim)

    like_missing("revisions: app b's server key PATCH a's notification",
                 lambda i: call(h, "PATCH", f"/v1/notifications/{i}", w.key("b"), {"payload": {"title": "b's"}}),
                 victim, miss, snapshot)
    like_missing("revisions: app b's server key DELETE a's notification from the devices",
                 lambda i: call(h, "DELETE", f"/v1/notifications/{i}/delivered", w.key("b")), victim, miss, snapshot)
    for kind in ("client", "publish"):
        for method, path, body in [("PATCH", f"/v1/notifications/{victim}", {"payload": {"title": "x"}}),
                                   ("DELETE", f"/v1/notifications/{victim}/delivered", None)]:
            answer = call(h, method, path, w.key("a", kind), body)
            R.check(f"revisions: app a's {kind} key {method} {path.replace(victim, '{id}')} is refused",
                    answer.status in (401, 403), describe(answer))
    # ntfy: app a's sequence; app b's publish key finds none of it (its own sequence of the name is b's).
    a, b = h.app("a"), h.app("b")
    sequence = "seq-" + secrets.token_hex(4)
    first = call(h, "PUT", f"/alerts/{sequence}", {"Authorization": f"Bearer {used(a.publish_key)}"}, b"a's message")
    first_id = (jbody(first) or {}).get("id")
    if not R.check("revisions: app a's publish key starts a sequence", first.status == 200 and first_id,
                   describe(first)):
        return

    def sequence_state():
        return notification_state(h, w, first_id)

    settled(first_id)
    before = sequence_state()
    for method, path in [("DELETE", f"/alerts/{sequence}"), ("PUT", f"/alerts/{sequence}/clear")]:
        answer = call(h, method, path, {"Authorization": f"Bearer {used(b.publish_key)}"})
        R.check(f"revisions: app b's publish key {method} {path.replace(sequence, '{sequence}')} finds nothing (404 40401)",
                answer.status == 404 and (jbody(answer) or {}).get("code") == 40401, describe(answer))
    other = call(h, "PUT", f"/alerts/{sequence}", {"Authorization": f"Bearer {used(b.publish_key)}"}, b"b's message")
    R.check("revisions: app b's publish of the same sequence id is b's own message",
            other.status == 200 and (jbody(other) or {}).get("id") != first_id, describe(other))
    R.check("revisions: app a's sequence is unchanged", sequence_state() == before, str(sequence_state()))
    answer = call(h, "DELETE", f"/alerts/{sequence}", {"Authorization": f"Bearer {used(a.alerts_publish_key)}"})
    R.check("revisions: app a's own key (bound to alerts) deletes its sequence", answer.status == 200
            and (jbody(answer) or {}).get("event") == "message_delete", describe(answer))


def live_activities_bola(w: World, s: dict) -> None:
    """Another app's server key reaches none of app a's Live Activities, channels or tokens; another user's
    token none of a user's installation's tokens; client, user and publish keys start nothing
    (docs/live-activities.md)."""
    h = w.h
    ann = used_headers(h.user_headers("a", "la-ann-" + secrets.token_hex(3)))
    bob = used_headers(h.user_headers("a", "la-bob-" + secrets.token_hex(3)))
    answer = call(h, "POST", "/v1/installations", ann, {"platform": "ios", "token": apns_token()})
    if not R.check("live activities: A registers an iPhone", answer.status in (200, 201), describe(answer)):
        return
    phone = jbody(answer)["id"]
    put = call(h, "PUT", f"/v1/installations/{phone}/live-activities/push-to-start/Score", ann, {"token": used(apns_token())})
    R.check("live activities: A stores its push-to-start token", put.status == 200, describe(put))
    activity = "la-" + secrets.token_hex(4)
    put = call(h, "PUT", f"/v1/installations/{phone}/live-activities/{activity}", ann,
               {"attributes_type": "Score", "token": used(apns_token())})
    R.check("live activities: A reports an activity token", put.status == 200, describe(put))

    def tokens():
        return jbody(h.request("GET", f"/v1/installations/{phone}/live-activities", w.key("a")))

    for name, headers in (("user B", bob), ("app b's server key", w.key("b"))):
        for method, suffix, body in [("GET", "", None), ("PUT", "/push-to-start/Score", {"token": apns_token()}),
                                     ("DELETE", "/push-to-start/Score", None),
                                     ("PUT", f"/{activity}", {"attributes_type": "Score", "token": apns_token()}),
                                     ("DELETE", f"/{activity}", None)]:
            like_missing(f"live activities: {name} {method} A's installation's tokens{suffix.replace(activity, '{id}')}",
                         lambda i, m=method, x=suffix, b=body, hd=headers: call(
                             h, m, f"/v1/installations/{i}/live-activities{x}", hd, b),
                         phone, missing_like(phone), tokens)

    def record():
        return jbody(h.request("GET", f"/v1/live-activities/{activity}", w.key("a")))

    for method, suffix, body in [("GET", "", None),
                                 ("POST", "/updates", {"event": "update", "content_state": {"home": 9}})]:
        like_missing(f"live activities: app b's server key {method} a's activity{suffix}",
                     lambda i, m=method, x=suffix, b=body: call(h, m, f"/v1/live-activities/{i}{x}", w.key("b"), b),
                     activity, missing_like(activity), record)
    listing = call(h, "GET", "/v1/live-activities/channels", w.key("b"))
    R.check("live activities: app b's channel list is its own", listing.status == 200, describe(listing))
    start = {"target": {"installation_ids": [phone]}, "attributes_type": "Score", "content_state": {"home": 0},
             "alert": {"title": "Kick-off"}}
    for kind, headers in (("client", w.key("a", "client")), ("publish", w.key("a", "publish")), ("user", ann)):
        for method, path, body in [("POST", "/v1/live-activities", start),
                                   ("POST", f"/v1/live-activities/{activity}/updates", {"event": "end"}),
                                   ("GET", "/v1/live-activities/channels", None),
                                   ("POST", "/v1/live-activities/channels", {"id": "x"})]:
            answer = call(h, method, path, headers, body)
            R.check(f"live activities: app a's {kind} credential {method} {path.replace(activity, '{id}')} is refused",
                    answer.status in (401, 403), describe(answer))
    R.check("live activities: the refused credentials changed nothing", record().get("revision") == 1,
            json.dumps(record()))


def console_sign_in(h, key: str):
    answer = call(h, "POST", "/console/session", {"Content-Type": "application/json"}, {"server_key": key})
    cookie = (answer.headers.get("Set-Cookie") or "").split(";")[0]
    csrf = (jbody(answer) or {}).get("csrf_token", "")
    used(cookie)
    used(cookie.split("=", 1)[-1])
    used(csrf)
    return answer, {"Cookie": cookie, "X-CSRF-Token": csrf}


def console_bola(w: World, s: dict) -> None:
    h = w.h
    answer, session = console_sign_in(h, w.a.server_key)
    R.check("console: app a's server key signs in (control)", answer.status == 200 and session["Cookie"].startswith("herald_console="), describe(answer))
    victim, miss = s["inst_b"], missing_like(s["inst_b"])
    snap = lambda: snapshot_installation(h, "b", victim)  # noqa: E731
    like_missing("console: a's session GET history of b's installation", lambda i: call(h, "GET", f"/console/api/installations/{i}/history", session), victim, miss, snap)
    for method, suffix, body in (("GET", "", None), ("PATCH", "", {"badge": 5}), ("DELETE", "", None), ("GET", "/preferences", None)):
        like_missing(f"console: a's session {method} /v1/installations/{{b's}}{suffix}",
                     lambda i, m=method, x=suffix, b=body: call(h, m, f"/v1/installations/{i}{x}", session, b), victim, miss, snap)
    answer = call(h, "GET", "/console/api/overview", session)
    R.check("console: a's overview names nothing of b", answer.status == 200 and victim not in answer.body.decode()
            and s["inst_b_srv"] not in answer.body.decode(), describe(answer))
    answer = call(h, "GET", "/v1/installations?limit=1000", session)
    R.check("console: a's session lists only a's installations", answer.status == 200 and victim not in answer.body.decode()
            and all(item.get("app_id") == "a" for item in (jbody(answer) or {}).get("data", [])), describe(answer))
    value = session["Cookie"].split("=", 1)[1]
    tampered = dict(session, Cookie="herald_console=b" + value[1:])
    answer = call(h, "GET", "/console/api/overview", tampered)
    R.check("console: a cookie whose app is changed to b is refused (401)", answer.status == 401, describe(answer))
    parts = value.split(".")
    longer = dict(session, Cookie="herald_console=" + ".".join([parts[0], str(int(parts[1]) + 86400 * 365), *parts[2:]]))
    answer = call(h, "GET", "/console/api/overview", longer)
    R.check("console: a cookie with its expiry pushed out is refused (401)", answer.status == 401, describe(answer))
    answer = call(h, "GET", "/console/api/overview", {"Cookie": session["Cookie"]})
    R.check("console: a session call without X-CSRF-Token is refused (403)", answer.status == 403, describe(answer))


def console_limiter(w: World) -> None:
    h = w.h
    answers = [call(h, "POST", "/console/session", {"Content-Type": "application/json"}, {"server_key": "hsk_wrong-" + secrets.token_hex(8)})
               for _ in range(SIGN_IN_LIMIT)]
    last, _ = console_sign_in(h, w.a.server_key)
    ok = all(a.status == 401 for a in answers) and last.status == 429 and (last.headers.get("Retry-After") or "").isdigit() \
        and err_code(last) == "rate_limited" and "Set-Cookie" not in last.headers
    R.check(f"console: {SIGN_IN_LIMIT} failed sign-ins, then even the right key gets 429 rate_limited + Retry-After", ok,
            f"{[a.status for a in answers]} then {describe(last)} Retry-After={last.headers.get('Retry-After')}")


# --- LeanCloud signatures -------------------------------------------------------------------------

def leancloud_signatures(w: World, s: dict) -> None:
    h = w.h
    obj = s["lc_obj"]
    now_ms = int(time.time() * 1000)
    path = f"/1.1/installations/{obj}"

    def get(headers, p=path):
        for value in headers.values():
            used(value)
        return call(h, "GET", p, headers)

    cases = [
        ("app-key sign 2 min old (skew 60 s)", h.leancloud_headers("a", timestamp_ms=now_ms - 120_000), 401, "Request signature expired."),
        ("app-key sign 2 min ahead", h.leancloud_headers("a", timestamp_ms=now_ms + 120_000), 401, "Request signature expired."),
        ("master sign 2 min old", h.leancloud_headers("a", master=True, timestamp_ms=now_ms - 120_000), 401, "Request signature expired."),
        ("wrong signature", h.leancloud_headers("a", key="not-the-app-key"), 401, None),
        ("app key signed, claiming master", {**h.leancloud_headers("a"), "X-LC-Sign": h.leancloud_headers("a")["X-LC-Sign"] + ",master"}, 401, None),
        ("app b's signature under a's X-LC-Id", {**h.leancloud_headers("b"), "X-LC-Id": w.a.lc_app_id}, 401, None),
        ("a's signature under b's X-LC-Id", {**h.leancloud_headers("a"), "X-LC-Id": w.b.lc_app_id}, 401, None),
        ("master key without ,master", {"X-LC-Id": w.a.lc_app_id, "X-LC-Key": w.a.lc_master_key}, 401, None),
        ("legacy Request-Sign 2 min old", {"X-AVOSCloud-Application-Id": w.a.lc_app_id,
                                           "X-AVOSCloud-Request-Sign": h.leancloud_headers("a", timestamp_ms=now_ms - 120_000)["X-LC-Sign"]}, 401, "Request signature expired."),
        ("unsigned timestamp garbage", {"X-LC-Id": w.a.lc_app_id, "X-LC-Sign": "0" * 32 + ",abc"}, 401, None),
        ("empty X-LC-Key", {"X-LC-Id": w.a.lc_app_id, "X-LC-Key": ""}, 401, None),
    ]
    for name, headers, status, message in cases:
        answer = get(headers)
        body = jbody(answer) or {}
        ok = answer.status == status and body.get("code") == 401 and (message is None or body.get("error") == message)
        R.check(f"LeanCloud: {name} refused ({status}, code 401{', ' + repr(message) if message else ''})", ok, describe(answer))
        deleted = call(h, "DELETE", path, headers)
        R.check(f"LeanCloud: {name} cannot DELETE", deleted.status == 401 and get(h.leancloud_headers("a", master=True)).status == 200, describe(deleted))
    for name, headers in (("app-key sign 30 s old", h.leancloud_headers("a", timestamp_ms=now_ms - 30_000)),
                          ("app-key sign 30 s ahead", h.leancloud_headers("a", timestamp_ms=now_ms + 30_000)),
                          ("master sign 50 s old", h.leancloud_headers("a", master=True, timestamp_ms=now_ms - 50_000))):
        answer = get(headers)
        R.check(f"LeanCloud: {name} (within skew) accepted", answer.status == 200, describe(answer))
    answer = get(h.leancloud_headers("a", master=True), "/1.1/installations?limit=1")
    R.check("LeanCloud: master sign may list (200)", answer.status == 200, describe(answer))
    answer = get(h.leancloud_headers("a"), "/1.1/installations?limit=1")
    R.check("LeanCloud: app-key sign may not list (403 119)", answer.status == 403 and (jbody(answer) or {}).get("code") == 119, describe(answer))
    answer = call(h, "GET", path, h.leancloud_headers("a"))
    replay = h.leancloud_headers("a", timestamp_ms=now_ms - 120_000)
    R.check("LeanCloud: a signature captured 2 min ago cannot be replayed", get(replay).status == 401, "")


# --- SigV4 ----------------------------------------------------------------------------------------

def sigv4(w: World) -> None:
    h = w.h
    now = dt.datetime.now(dt.timezone.utc)
    name = "sec-sigv4-" + secrets.token_hex(3)

    def create(label, **sign):
        return sns(h, "a", {"Action": "CreateTopic", "Name": f"{name}-{label}"}, **sign)

    cases = [
        ("signed 20 min in the past", dict(date=now - dt.timedelta(minutes=20)), 403, "SignatureDoesNotMatch", "expired"),
        ("signed 20 min in the future", dict(date=now + dt.timedelta(minutes=20)), 403, "SignatureDoesNotMatch", "expired"),
        ("a wrong secret", dict(secret_access_key="x" * 40), 403, "SignatureDoesNotMatch", None),
        ("app b's secret with a's key id", dict(secret_access_key=w.b.sns_secret_access_key), 403, "SignatureDoesNotMatch", None),
        ("a wrong region", dict(region="eu-west-1"), 403, "SignatureDoesNotMatch", None),
        ("an unknown access key", dict(access_key_id="AKIA" + secrets.token_hex(8).upper()), 403, "InvalidClientTokenId", None),
    ]
    for index, (label, sign, status, code, message) in enumerate(cases):
        answer = create(str(index), **sign)
        text = answer.body.decode(errors="replace")
        ok = answer.status == status and xml(answer, "Code") == code and (message is None or message in text.lower())
        R.check(f"SigV4: {label} -> {status} {code}", ok, describe(answer))
    body, headers = h.sns_request_parts("a", {"Action": "CreateTopic", "Name": f"{name}-tampered"})
    answer = call(h, "POST", "/sns", headers, body.replace(b"tampered", b"tampere2"))
    R.check("SigV4: a body changed after signing -> SignatureDoesNotMatch", answer.status == 403 and xml(answer, "Code") == "SignatureDoesNotMatch", describe(answer))
    answer = call(h, "POST", "/sns", {"Content-Type": "application/x-www-form-urlencoded"}, f"Action=CreateTopic&Name={name}-anon&Version=2010-03-31")
    R.check("SigV4: no Authorization -> MissingAuthenticationToken", answer.status == 403 and xml(answer, "Code") == "MissingAuthenticationToken", describe(answer))
    answer = sns(h, "a", {"Action": "ListTopics"})
    R.check("SigV4: refused requests created nothing", answer.status == 200 and name not in answer.body.decode(), describe(answer))
    answer = create("ok14", date=now - dt.timedelta(minutes=14))
    R.check("SigV4: signed 14 min in the past is accepted (200)", answer.status == 200, describe(answer))
    answer = create("ok")
    R.check("SigV4: correctly signed -> 200", answer.status == 200, describe(answer))


# --- rate limits ----------------------------------------------------------------------------------

def argus_rate_limit(w: World) -> None:
    h = w.h
    headers = w.user("a", "rate-" + secrets.token_hex(3))
    answers = []
    for _ in range(ARGUS_LIMIT + 1):
        token = apns_token()
        answers.append(call(h, "POST", "/api/v1/push/mobile/register", headers,
                            {"device_id": str(uuid.uuid4()), "platform": "ios", "device_token": token}))
        TOKENS[token] = "ArgusAI (rate limit)"
    last = answers[-1]
    ok = all(a.status == 201 for a in answers[:-1]) and last.status == 429 and err_code(last) == "rate_limited" \
        and (last.headers.get("Retry-After") or "").isdigit() and int(last.headers["Retry-After"]) >= 1
    R.check(f"ArgusAI: register_rate_limit {ARGUS_LIMIT}: {ARGUS_LIMIT} accepted, the next 429 rate_limited + Retry-After", ok,
            f"{[a.status for a in answers]}; last {describe(last)} Retry-After={last.headers.get('Retry-After')}")
    other = call(h, "POST", "/api/v1/push/mobile/register", w.user("a", "rate-other-" + secrets.token_hex(3)),
                 {"device_id": str(uuid.uuid4()), "platform": "ios", "device_token": apns_token()})
    R.check("ArgusAI: another user is not limited by the first one's registrations", other.status == 201, describe(other))


def relay_rate_limit(w: World) -> None:
    h = w.h
    _, token = native_register(h, w.key("a"), "HA limit", user_id="ha-user")
    _, other = native_register(h, w.key("a"), "HA other", user_id="ha-user-2")
    answers = [call(h, "POST", "/ha/push", {}, {"message": f"m{i}", "push_token": token,
                                               "registration_info": {"app_id": "x", "app_version": "1", "webhook_id": "w"}})
               for i in range(RELAY_LIMIT + 1)]
    last, third = answers[-1], answers[-2]
    limits = (jbody(last) or {}).get("rateLimits") or {}
    ok = all(a.status == 201 for a in answers[:-1]) and (jbody(third) or {}).get("rateLimits", {}).get("remaining") == 0 \
        and last.status == 429 and (jbody(last) or {}).get("errorType") == "RateLimited" and limits.get("remaining") == 0 \
        and limits.get("maximum") == RELAY_LIMIT and (jbody(last) or {}).get("message") \
        and 0 <= limits.get("successful", -1) <= RELAY_LIMIT and limits.get("errors", 0) >= 1
    R.check(f"HA relay: max_per_day {RELAY_LIMIT}: the {RELAY_LIMIT}rd accepted (remaining 0), the next 429 RateLimited with rateLimits",
            ok, f"{[a.status for a in answers]}; last {describe(last)}")
    answer = call(h, "POST", "/ha/push", {}, {"message": "m", "push_token": other,
                                            "registration_info": {"app_id": "x", "app_version": "1", "webhook_id": "w"}})
    R.check("HA relay: another token still has its own allowance", answer.status == 201, describe(answer))


# --- registration and refused-credential limits ------------------------------------------------------

def limit_checks() -> list[Herald]:
    """A server of its own with app.<id>.registrations_per_minute and http.auth_failures_per_minute at LIMIT_N:
    each allowance to its boundary, the next request 429 rate_limited with Retry-After, what stays open."""
    extra = {"http": {"auth_failures_per_minute": LIMIT_N},
             "app": {"a": {"registrations_per_minute": LIMIT_N}, "b": {"registrations_per_minute": LIMIT_N}}}
    h = Herald(apps=("a", "b"), extra_config=extra)
    h.start()
    for label, app, headers in (("client key", "a", h.key_headers("a", "client")), ("user token", "b", h.user_headers("b", "reg-user"))):
        used_headers(headers)
        answers = []
        for _ in range(LIMIT_N + 1):
            answers.append(call(h, "POST", "/v1/installations", headers, {"platform": "ios", "token": apns_token()}))
        last = answers[-1]
        ok = all(a.status in (200, 201) for a in answers[:-1]) and last.status == 429 and err_code(last) == "rate_limited" \
            and (last.headers.get("Retry-After") or "").isdigit()
        R.check(f"registrations_per_minute {LIMIT_N} ({label}): {LIMIT_N} accepted, the next 429 rate_limited + Retry-After", ok,
                f"{[a.status for a in answers]}; last {describe(last)} Retry-After={last.headers.get('Retry-After')}")
        server = call(h, "POST", "/v1/installations", h.key_headers(app), {"platform": "ios", "token": apns_token()})
        R.check(f"registrations_per_minute: the server key still registers after the {label} limit", server.status in (200, 201), describe(server))
    answers = [call(h, "GET", "/v1/installations", {"Authorization": f"Bearer hsk_wrong-{i}-{secrets.token_hex(6)}"})
               for i in range(LIMIT_N + 1)]
    last = answers[-1]
    ok = all(a.status == 401 for a in answers[:-1]) and last.status == 429 and err_code(last) == "rate_limited" \
        and (last.headers.get("Retry-After") or "").isdigit()
    R.check(f"auth_failures_per_minute {LIMIT_N}: {LIMIT_N} failures answered 401, the next 429 rate_limited + Retry-After", ok,
            f"{[a.status for a in answers]}; last {describe(last)}")
    right = call(h, "GET", "/v1/installations", h.key_headers("a"))
    R.check("auth_failures_per_minute: while limited, the right key is refused too (no oracle for guesses)",
            right.status == 429, describe(right))
    health = call(h, "GET", "/healthz", {})
    R.check("auth_failures_per_minute: public routes stay open to a limited address", health.status == 200, describe(health))
    return [h]


# --- tokens at rest -------------------------------------------------------------------------------

def webpush_subscription() -> dict:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    point = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return {"endpoint": "https://push.example.net/wpush/v2/" + secrets.token_urlsafe(32),
            "keys": {"p256dh": b64url(point), "auth": b64url(os.urandom(16))}}


def register_everywhere(h: Herald, label: str) -> dict[str, str]:
    """Registers a fresh token through every dialect of app a; returns token -> where."""
    tokens: dict[str, str] = {}
    key, user = h.key_headers("a"), used_headers(h.user_headers("a", "rest-user-" + secrets.token_hex(3)))

    def keep(token, where, answer):
        ok = answer.status in (200, 201)
        R.check(f"at rest ({label}): registered {where}", ok, describe(answer))
        if ok:
            tokens[token] = where
        return answer

    t = apns_token(); keep(t, "native APNs (client key)", call(h, "POST", "/v1/installations", h.key_headers("a", "client"), {"platform": "ios", "token": t}))
    t = fcm_token(); keep(t, "native FCM (user)", call(h, "POST", "/v1/installations", user, {"platform": "android", "token": t}))
    t = "direct-" + secrets.token_hex(16); keep(t, "native direct", call(h, "POST", "/v1/installations", key, {"platform": "android", "service": "direct", "token": t}))
    subscription = webpush_subscription()
    answer = call(h, "POST", "/v1/installations", key, {"platform": "web", "subscription": subscription})
    keep(subscription["endpoint"], "native Web Push endpoint", answer)
    if answer.status in (200, 201):
        tokens[subscription["keys"]["auth"]] = "native Web Push auth secret"
        tokens[subscription["keys"]["p256dh"]] = "native Web Push p256dh"
    t = apns_token(); keep(t, "ArgusAI APNs", call(h, "POST", "/api/v1/push/mobile/register", user, {"device_id": str(uuid.uuid4()), "platform": "ios", "device_token": t}))
    t = fcm_token(); keep(t, "ArgusAI FCM", call(h, "POST", "/api/v1/push/mobile/register", user, {"device_id": str(uuid.uuid4()), "platform": "android", "device_token": t}))
    t = apns_token(); keep(t, "AOVIS APNs", call(h, "POST", "/api/internal/push/register", user, {"platform": "ios", "token": t}))
    t = fcm_token(); keep(t, "AOVIS FCM", call(h, "POST", "/api/internal/push/register", user, {"platform": "android", "token": t}))
    t = apns_token(); keep(t, "LeanCloud deviceToken", call(h, "POST", "/1.1/installations", h.leancloud_headers("a"), {"deviceType": "ios", "deviceToken": t, "marker": MARKER}))
    t = fcm_token(); keep(t, "LeanCloud registrationId", call(h, "POST", "/1.1/classes/_Installation", h.leancloud_headers("a"), {"deviceType": "android", "vendor": "fcm", "registrationId": t}))
    credential = "sns-platform-credential-" + secrets.token_hex(16)
    answer = sns(h, "a", {"Action": "CreatePlatformApplication", "Name": "rest-" + secrets.token_hex(3), "Platform": "GCM",
                          "Attributes.entry.1.key": "PlatformCredential", "Attributes.entry.1.value": used(credential)})
    application = xml(answer, "PlatformApplicationArn")
    keep(credential, "SNS PlatformCredential", answer)
    t = fcm_token(); keep(t, "SNS endpoint Token", sns(h, "a", {"Action": "CreatePlatformEndpoint", "PlatformApplicationArn": application, "Token": t}))
    t = apns_token()
    if keep(t, "native APNs used with the HA relay", call(h, "POST", "/v1/installations", key, {"platform": "ios", "token": t})).status in (200, 201):
        call(h, "POST", "/ha/push", {}, {"message": "m", "push_token": t, "registration_info": {"app_id": "x", "app_version": "1", "webhook_id": "w"}})
    # Live Activity tokens: sealed at rest like the installation's own.
    answer = call(h, "POST", "/v1/installations", key, {"platform": "ios", "token": apns_token()})
    if answer.status in (200, 201):
        phone = jbody(answer)["id"]
        t = apns_token(); keep(t, "push-to-start token", call(h, "PUT", f"/v1/installations/{phone}/live-activities/push-to-start/Rest", key, {"token": t}))
        t = apns_token(); keep(t, "activity token", call(h, "PUT", f"/v1/installations/{phone}/live-activities/rest-{secrets.token_hex(3)}", key, {"attributes_type": "Rest", "token": t}))
    # A webhook endpoint's signing secret: sealed at rest like a token (the text, and its key's base64).
    answer = call(h, "POST", "/v1/webhooks", key, {"url": "https://hooks.example.com/rest", "events": ["*"]})
    secret = jbody(answer).get("secret", "") if answer.status == 201 else ""
    if keep(secret, "webhook signing secret", answer).status == 201:
        tokens[secret.removeprefix("whsec_")] = "webhook signing secret's key"
    for token in tokens:
        used(token)
    return tokens


def variants(secret: str) -> list[bytes]:
    forms = {secret, secret.lower(), secret.upper()}
    return [form.encode() for form in forms if len(form) >= 8]


def scan_sqlite(label: str, database: Path, tokens: dict[str, str]) -> None:
    blobs = {}
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(database) + suffix)
        if path.exists():
            blobs[path.name] = path.read_bytes()
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
        blobs["sqlite3 dump"] = "\n".join(connection.iterdump()).encode()
        connection.close()
    except sqlite3.Error as error:
        R.check(f"at rest ({label}): the database opens with sqlite3", False, str(error))
    found = []
    for token, where in tokens.items():
        for name, blob in blobs.items():
            if any(form in blob for form in variants(token)):
                found.append(f"{where} ({short(token, 40)}) in {name}")
    size = {name: len(blob) for name, blob in blobs.items()}
    R.check(f"at rest ({label}): control: a plain attribute is found by the same scan",
            any(MARKER.encode() in blob for blob in blobs.values()), f"sizes {size}")
    sns_found = [f for f in found if "PlatformCredential" in f]
    R.check(f"at rest ({label}): no push token in clear in {', '.join(size)}", not [f for f in found if f not in sns_found],
            "; ".join(f for f in found if f not in sns_found) + f" (sizes {size})")
    if any("PlatformCredential" in where for where in tokens.values()):
        R.check(f"at rest ({label}): the SNS PlatformCredential is not stored in clear", not sns_found, "; ".join(sns_found))


def postgres_at_rest() -> Herald | None:
    url = os.environ.get("HERALD_TEST_POSTGRES")
    if not url:
        R.skip("at rest (PostgreSQL)", "HERALD_TEST_POSTGRES is not set (scripts/postgres prints a cluster URL)")
        return None
    parsed = urllib.parse.urlsplit(url)
    name = "herald_sec_" + secrets.token_hex(4)
    admin = urllib.parse.urlunsplit(parsed._replace(query=""))
    created = subprocess.run(["psql", admin, "-qAtc", f"CREATE DATABASE {name}"], capture_output=True, text=True, timeout=30)
    if created.returncode != 0:
        R.check("at rest (PostgreSQL): a fresh database", False, created.stderr)
        return None
    database = urllib.parse.urlunsplit(parsed._replace(path="/" + name, query="sslmode=disable"))
    h = Herald(apps=("a",), extra_config={"database": database})
    try:
        h.start()
        tokens = register_everywhere(h, "PostgreSQL")
        TOKENS.update(tokens)
        dump = subprocess.run(["pg_dump", "--data-only", "--inserts", database.split("?")[0]], capture_output=True, timeout=60)
        R.check("at rest (PostgreSQL): pg_dump", dump.returncode == 0, dump.stderr.decode(errors="replace")[-300:])
        R.check("at rest (PostgreSQL): control: a plain attribute is found in the dump", MARKER.encode() in dump.stdout,
                f"{len(dump.stdout)} bytes")
        found = [f"{where} ({short(token, 40)})" for token, where in tokens.items() if any(form in dump.stdout for form in variants(token))]
        plain = [f for f in found if "PlatformCredential" not in f]
        R.check("at rest (PostgreSQL): no push token in clear in pg_dump", not plain, "; ".join(plain))
        R.check("at rest (PostgreSQL): the SNS PlatformCredential is not in clear", len(found) == len(plain), "; ".join(found))
    finally:
        h.stop(remove=False)
        subprocess.run(["psql", admin, "-qAtc", f"DROP DATABASE IF EXISTS {name}"], capture_output=True, timeout=30)
    return h


# --- logs ----------------------------------------------------------------------------------------

def secret_candidates(servers: list[Herald]) -> set[str]:
    candidates = set(USED) | set(TOKENS)
    for h in servers:
        candidates |= set(h.secrets)
        for app_id in h.apps:
            app = h.app(app_id)
            candidates |= {app.server_key, app.client_key, app.jwt_secret, app.lc_app_key, app.lc_master_key,
                           app.sns_secret_access_key}
    extra = set()
    for value in candidates:
        if value.count(".") == 2 and len(value) > 40:  # a JWT: its signature alone is a secret too
            signature = value.rsplit(".", 1)[-1]
            if len(signature) >= 16:
                extra.add(signature)
    not_secret = {"AWS4-HMAC-SHA256", "application/json", "application/x-www-form-urlencoded"}
    candidates = {value for value in candidates | extra if value and len(value) >= 12 and value not in not_secret}
    candidates |= {value.replace("/", "\\/") for value in candidates if "/" in value}
    return candidates


def metrics_check(text: str, servers: list[Herald]) -> None:
    hits = sorted(value for value in secret_candidates(servers) if value in text)
    R.check(f"/metrics ({len(text)} bytes) names no secret, token or credential", not hits,
            ", ".join(short(v, 40) for v in hits[:10]))


def log_check(servers: list[Herald]) -> None:
    candidates = secret_candidates(servers)
    for h in servers:
        text = h.log_text()
        by_message: dict[str, tuple[set[str], str]] = {}
        for line in text.splitlines():
            found = {value for value in candidates if value in line}
            if found:
                match = re.search(r'"msg":"([^"]*)"', line)
                message = match.group(1) if match else line[:80]
                values, first = by_message.get(message, (set(), line))
                by_message[message] = (values | found, first)
        total = set().union(*(values for values, _ in by_message.values())) if by_message else set()
        master = [s for s in h.secrets[:1] if s in total]  # the harness registers secret_key first
        detail = f"{len(total)} distinct secrets{' (the master secret_key among them)' if master else ''} in "
        detail += f"{len(by_message)} kinds of log line:"
        for message, (values, line) in by_message.items():
            rank = {value: index for index, value in enumerate(h.secrets)}  # secret_key, then each app's keys
            ordered = sorted(values, key=lambda v: (rank.get(v, len(rank)), v))
            detail += (f"\n      {message!r}: {len(values)} secrets, e.g. "
                       + ", ".join(short(v, 24) for v in ordered[:4]) + f"\n        line: {short(line, 240)}")
        R.check(f"logs ({Path(h.log_path).parent.name}, {len(text.splitlines())} lines, level "
                f"{h.config.get('log', {}).get('level', 'info')}): no secret, token, JWT, signature or cookie",
                not by_message, detail)


# --- opaque session tokens (introspection, app d) ---------------------------------------------------

class Introspection:
    """A stand-in OAuth 2.0 introspection endpoint (RFC 7662) for app d: `sess-ok-*` is active for
    user ivan, `sess-exp-*` active but expired, `sess-slow-*` answers after the timeout, the rest inactive."""

    def __init__(self) -> None:
        import http.server
        import threading
        self.client_id, self.client_secret = "herald-c", used("introspection-secret-" + secrets.token_hex(12))
        self.seen: list[str] = []
        self.bad_auth = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                token = urllib.parse.parse_qs(body).get("token", [""])[0]
                outer.seen.append(token)
                expected = "Basic " + base64.b64encode(f"{outer.client_id}:{outer.client_secret}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    outer.bad_auth += 1
                if token.startswith("sess-slow-"):
                    time.sleep(3.0)
                if token.startswith("sess-ok-"):
                    answer = {"active": True, "sub": "ivan", "exp": int(time.time()) + 600}
                elif token.startswith("sess-exp-"):
                    answer = {"active": True, "sub": "ivan", "exp": int(time.time()) - 600}
                else:
                    answer = {"active": False}
                data = json.dumps(answer).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/introspect"

    def config(self) -> dict:
        return {"url": self.url, "client_id": self.client_id, "client_secret": self.client_secret,
                "timeout_ms": 1000, "cache_seconds": 60, "negative_cache_seconds": 10}

    def close(self) -> None:
        self.server.shutdown()


def session_checks(w: World, s: dict, mock: Introspection) -> None:
    h = w.h
    good = used("sess-ok-" + secrets.token_hex(16))
    answer = call(h, "GET", "/api/v1/devices", {"Authorization": f"Bearer {good}", "X-Herald-App": "d"})
    R.check("session: an active opaque session of app d is accepted (control)", answer.status == 200, describe(answer))
    R.check("session: Herald sent its client credentials (HTTP Basic) to the auth service", mock.bad_auth == 0 and good in mock.seen,
            f"bad auth {mock.bad_auth}, seen {len(mock.seen)}")
    for label, token in (("an inactive session", "sess-no-" + secrets.token_hex(16)),
                         ("an active answer whose exp is past", "sess-exp-" + secrets.token_hex(16)),
                         ("an auth service that does not answer in time", "sess-slow-" + secrets.token_hex(16))):
        used(token)
        headers = {"Authorization": f"Bearer {token}", "X-Herald-App": "d"}
        native = call(h, "GET", "/api/v1/devices", headers)
        aovis = call(h, "POST", "/api/internal/push/register", headers, {"platform": "ios", "token": apns_token()})
        R.check(f"session: {label} -> 401 invalid_session (AOVIS: its body)",
                native.status == 401 and err_code(native) == "invalid_session" and aovis.status == 401
                and jbody(aovis) == {"error": "invalid_session"}, f"{describe(native)}; AOVIS {describe(aovis)}")
    seen = len(mock.seen)
    other = used("sess-ok-" + secrets.token_hex(16))
    answer = call(h, "GET", "/api/v1/devices", {"Authorization": f"Bearer {other}", "X-Herald-App": "a"})
    R.check("session: an opaque token named for app a (which does not introspect) is refused and sent nowhere",
            answer.status == 401 and len(mock.seen) == seen, f"{describe(answer)}; auth service calls {len(mock.seen) - seen}")
    # Without X-Herald-App the one introspecting app (d) takes it: its user never reaches app a's objects.
    headers = {"Authorization": f"Bearer {good}"}
    like_missing("session: app d's session user on a's installation (no X-Herald-App)",
                 lambda i: call(h, "GET", f"/v1/installations/{i}", headers), s["inst_A"], missing_like(s["inst_A"]),
                 lambda: snapshot_installation(h, "a", s["inst_A"]))
    # What reaches app d's auth service: credentials meant for app a, sent without X-Herald-App.
    fresh, _ = native_register(h, s["A"], "alice (channel credential)")
    channel = used((jbody(call(h, "POST", f"/v1/installations/{fresh}/channel-credential", s["A"])) or {}).get("credential", ""))
    expired_a = h.mint_jwt("a", "alice", exp=int(time.time()) - 600)
    for label, credential in (("app a's (valid) channel credential", channel),
                              ("an expired user token of app a", expired_a),
                              ("a mistyped server key of app a", w.a.server_key[:-1] + "x")):
        used(credential)
        seen = len(mock.seen)
        answer = call(h, "GET", "/v1/installations", {"Authorization": f"Bearer {credential}"})
        forwarded = credential in mock.seen[seen:]
        detail = (f"GET /v1/installations with it as Bearer, no X-Herald-App -> {describe(answer)}; app d's introspection "
                  "endpoint received it (docs/api.md: 'a token is sent to an auth service only when its app is known: named by "
                  "X-Herald-App, or the only app that introspects')")
        R.check(f"session: {label} is never disclosed to app d's auth service", not forwarded and answer.status == 401, detail)


# --- main ----------------------------------------------------------------------------------------

def main() -> int:
    started = time.monotonic()
    mock = Introspection()
    h = Herald(apps=("a", "b", "c", "d"), extra_config={
        "console": {"sign_in_attempts": SIGN_IN_LIMIT, "sign_in_window_seconds": 300},
        "app": {
            "a": {"argus": {"register_rate_limit": ARGUS_LIMIT}, "home_assistant": {"max_per_day": RELAY_LIMIT},
                  "leancloud": {"signature_skew_seconds": SKEW}},
            "b": {"home_assistant": {"relay": False}, "leancloud": {"client_push": False}},
            "c": {"jwt": {"issuer": ISSUER, "audience": AUDIENCE}},
            "d": {"introspection": mock.config()},
        },
    })
    servers = [h]
    try:
        try:
            h.start()
        except Exception as error:  # noqa: BLE001
            R.check("the server starts", False, short(str(error), 3000))
            print(f"security: {R.passed} passed, {R.failed} failed, {R.skipped} skipped")
            return 1
        w = World(h)
        s = seed(w)
        sections = [
            ("credentials", credential_checks), ("native BOLA", native_bola), ("channel BOLA", channel_bola),
            ("ArgusAI BOLA", argus_bola), ("AOVIS BOLA", aovis_bola), ("LeanCloud BOLA", leancloud_bola),
            ("HA relay BOLA", relay_bola), ("Matrix BOLA", matrix_bola), ("ntfy BOLA", ntfy_bola), ("Gotify BOLA", gotify_bola), ("SNS BOLA", sns_bola), ("console BOLA", console_bola), ("webhooks BOLA", webhooks_bola), ("Live Activities BOLA", live_activities_bola), ("templates BOLA", templates_bola), ("revisions BOLA", revisions_bola),
            ("LeanCloud signatures", leancloud_signatures),
        ]
        for name, function in sections:
            print(f"== {name}  ({time.monotonic() - started:.1f} s)")
            R.run(name, function, w, s)
        print(f"== opaque session tokens  ({time.monotonic() - started:.1f} s)")
        R.run("session tokens", session_checks, w, s, mock)
        print(f"== SigV4  ({time.monotonic() - started:.1f} s)")
        R.run("SigV4", sigv4, w)
        print(f"== rate limits  ({time.monotonic() - started:.1f} s)")
        R.run("ArgusAI rate limit", argus_rate_limit, w)
        R.run("HA relay rate limit", relay_rate_limit, w)
        R.run("console sign-in limiter", console_limiter, w)
        print(f"== tokens at rest (SQLite)  ({time.monotonic() - started:.1f} s)")
        tokens = register_everywhere(h, "SQLite")
        TOKENS.update(tokens)
        database = Path(h.config["database"])
        R.run("at rest (SQLite, running)", scan_sqlite, "SQLite, running", database, dict(TOKENS))
        R.check("the server is still alive after every check", h.healthy(), h.log_tail(5))
        METRICS.append(h.request("GET", "/metrics").body.decode(errors="replace"))
    finally:
        stopping = time.monotonic()
        code = h.stop(remove=False)
    R.check("the server exits 0 on SIGTERM, within 15 s", code == 0,
            f"exit status {code} after {time.monotonic() - stopping:.1f} s; log ends: {short(h.log_tail(8), 1500)}")
    try:
        R.run("at rest (SQLite, stopped)", scan_sqlite, "SQLite, after shutdown", Path(h.config["database"]), dict(TOKENS))
        print(f"== registration and refused-credential limits  ({time.monotonic() - started:.1f} s)")
        extra_servers: list[Herald] = []
        try:
            extra_servers = limit_checks()
        except Exception as error:  # noqa: BLE001
            R.check("limits", False, f"{type(error).__name__}: {error}")
        finally:
            for server in extra_servers:
                server.stop(remove=False)
        servers += extra_servers
        print(f"== PostgreSQL  ({time.monotonic() - started:.1f} s)")
        try:
            pg = postgres_at_rest()
            if pg:
                servers.append(pg)
        except Exception as error:  # noqa: BLE001
            R.check("at rest (PostgreSQL)", False, f"{type(error).__name__}: {error}")
        print(f"== logs  ({time.monotonic() - started:.1f} s)")
        R.check("no 5xx answer to any request", not FIVE_XX, "\n      ".join(FIVE_XX[:10]))
        if METRICS:
            R.run("metrics", metrics_check, METRICS[0], servers)
        R.run("logs", log_check, servers)
    finally:
        mock.close()
        for server in servers:
            server.cleanup()
    elapsed = time.monotonic() - started
    total = R.passed + R.failed + R.skipped
    print(f"\n{total} checks in {elapsed:.1f} s, {R.warned} warnings")
    if R.failures:
        print("failed: " + "; ".join(R.failures[:40]))
    print(f"security: {R.passed} passed, {R.failed} failed, {R.skipped} skipped")
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
