"""Fuzzes every dialect route of Herald in the dialect's own shapes, with valid credentials.

What it proves: for ArgusAI (/api/v1/push/mobile/*, /api/v1/devices*), AOVIS (/api/internal/*),
LeanCloud (/1.1/*), the Home Assistant relay (/ha/push*), the SNS Query API (POST /sns) and a few
native routes, requests shaped like the documented ones (docs/api.md, docs/dialects/ and the specification documents) but with
mutated field types and values, missing and unknown fields, unicode, huge strings, out-of-range
numbers, arrays for objects, broken JSON and form encodings, all sent past authentication (user
JWTs HS256/RS256, server keys, LeanCloud X-LC-Sign / X-LC-Key with the app or master key, SigV4),
never get a 5xx; every 4xx is in the dialect's documented error shape (native
{"error":{"code","message","field"}}, AOVIS's {"error":"invalid_body"|...}, LeanCloud's
{"code":<int>,"error":<str>}, SNS's XML <ErrorResponse>, Home Assistant's
{"errorType","errorMessage","message"}) with the documented content type; and the server still
answers GET /healthz after every route.

    .python/tools/bin/python3 scripts/dialect_fuzz.py   (or scripts/dialect-fuzz, which runs the abuse probes too)

Environment: HERALD_DIALECT_FUZZ_SEED (default 20261125), HERALD_DIALECT_FUZZ_EXAMPLES (cases per
route, default 50: about 30 s on two cores with the debug binary), HERALD_DIALECT_FUZZ_VERBOSE=1
(each route's answer statuses, and every failure instead of one of each kind per route),
HERALD_BINARY (default .build/debug/herald). Needs `hypothesis` (installed with schemathesis) and
`cryptography`, both in .python/tools (scripts/bootstrap). Prints the failing requests and answers (one of each kind per route, then how many
more), then `dialect-fuzz: R routes, C cases, F failures`; exits 1 on any failure.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import sys
import time
import urllib.parse
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Callable

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from herald_harness import Herald, Response  # noqa: E402

SEED = int(os.environ.get("HERALD_DIALECT_FUZZ_SEED", "20261125"))
EXAMPLES = int(os.environ.get("HERALD_DIALECT_FUZZ_EXAMPLES", "50"))
VERBOSE = os.environ.get("HERALD_DIALECT_FUZZ_VERBOSE") == "1"
USER = "fuzz-user"

# --- the documented error shapes ------------------------------------------------------------

SNS_NAMESPACE = "{http://sns.amazonaws.com/doc/2010-03-31/}"
SNS_ERRORS = {"InvalidParameter": 400, "InvalidAction": 400, "EndpointDisabled": 400,
              "AuthorizationError": 403, "SignatureDoesNotMatch": 403, "InvalidClientTokenId": 403,
              "MissingAuthenticationToken": 403, "NotFound": 404, "RequestEntityTooLarge": 413}
# LeanCloud codes (docs/dialects/leancloud.md, and 104 "Missing objectId." of LeanCloudFailure)
LEANCLOUD_CODES = {401: {401}, 403: {119}, 404: {101},
                   400: {107, 102, 104, 105, 111, 112, 114, 116, 135}, 413: {116}}
HA_ERRORS = {400: "InvalidRequest", 404: "UnknownToken", 410: "InvalidToken", 413: "PayloadTooLarge",
             429: "RateLimited"}
AOVIS_ERRORS = {400: "invalid_body", 401: "invalid_session", 413: "invalid_body"}
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _json(answer: Response):
    try:
        return json.loads(answer.body)
    except (ValueError, UnicodeDecodeError):
        return None


def shape_problems(shape: str, answer: Response) -> list[str]:
    """What is wrong with `answer` from a route whose errors have `shape` (`native`, `aovis`,
    `leancloud`, `ha`, `sns`): a 5xx, a 4xx outside the shape, a body that is not the dialect's
    JSON or well-formed XML, a content type not the dialect's."""
    status, problems = answer.status, []
    if status >= 500:
        problems.append(f"server error {status}")
    content_type = (answer.headers.get("Content-Type") or "").lower()
    if status == 204 or (status < 400 and not answer.body):
        return problems
    wanted = "xml" if shape == "sns" else "application/json"
    if wanted not in content_type:
        problems.append(f"content type {content_type or 'none'!r}, not {wanted}")
    if shape == "sns":
        try:
            root = ET.fromstring(answer.body)
        except ET.ParseError as error:
            return problems + [f"the answer is not well-formed XML ({error})"]
        if status < 400:
            return problems
        code = root.findtext(f"{SNS_NAMESPACE}Error/{SNS_NAMESPACE}Code")
        if not (root.tag == f"{SNS_NAMESPACE}ErrorResponse" and code and root.findtext(f"{SNS_NAMESPACE}RequestId")
                and root.findtext(f"{SNS_NAMESPACE}Error/{SNS_NAMESPACE}Message") is not None):
            return problems + ["not an SNS <ErrorResponse> with Error/Code, Error/Message and RequestId"]
        if SNS_ERRORS.get(code) != status:
            problems.append(f"SNS code {code} with status {status} (documented: {SNS_ERRORS.get(code)})")
        return problems
    body = _json(answer)
    if body is None:
        return problems + ["the answer is not JSON"]
    if status < 400:
        return problems
    if shape == "native":
        error = body.get("error") if isinstance(body, dict) else None
        if not (isinstance(error, dict) and isinstance(error.get("code"), str) and SNAKE.match(error["code"])
                and isinstance(error.get("message"), str) and "field" in error
                and (error["field"] is None or isinstance(error["field"], str))):
            problems.append('not the native {"error":{"code","message","field"}}')
    elif shape == "aovis":
        if not (isinstance(body, dict) and set(body) == {"error"} and body["error"] == AOVIS_ERRORS.get(status)):
            problems.append(f'not the guide\'s {{"error":"{AOVIS_ERRORS.get(status, "?")}"}} for {status}')
    elif shape == "leancloud":
        if not (isinstance(body, dict) and set(body) == {"code", "error"} and type(body["code"]) is int
                and isinstance(body["error"], str)):
            problems.append('not LeanCloud\'s {"code":<int>,"error":<str>}')
        elif body["code"] not in LEANCLOUD_CODES.get(status, set()):
            problems.append(f"LeanCloud code {body['code']} with status {status}")
    elif shape == "ntfy":
        if not (isinstance(body, dict) and type(body.get("code")) is int and body.get("http") == status
                and isinstance(body.get("error"), str) and body["code"] // 100 == status):
            problems.append('not ntfy\'s {"code":<status><nn>,"http":<status>,"error":<str>}')
    elif shape == "gotify":
        if not (isinstance(body, dict) and body.get("errorCode") == status and isinstance(body.get("error"), str)
                and isinstance(body.get("errorDescription"), str)):
            problems.append('not Gotify\'s {"error":<str>,"errorCode":<status>,"errorDescription":<str>}')
    elif shape == "matrix":
        if not (isinstance(body, dict) and isinstance(body.get("errcode"), str) and body["errcode"].startswith("M_")
                and isinstance(body.get("error"), str)):
            problems.append('not Matrix\'s {"errcode":"M_…","error":<str>}')
        elif body["errcode"] not in MATRIX_ERRORS.get(status, set()):
            problems.append(f"Matrix errcode {body['errcode']} with status {status}")
    elif shape == "ha":
        keys = {"errorType", "message"} | ({"target", "rateLimits"} if status == 429 else {"errorMessage"})
        if not (isinstance(body, dict) and keys <= set(body)
                and all(isinstance(body[k], str) for k in ("errorType", "message"))):
            problems.append(f"not Home Assistant's error body (needs {sorted(keys)})")
        elif body["errorType"] != HA_ERRORS.get(status):
            problems.append(f"errorType {body['errorType']} with status {status}")
    return problems


# --- value strategies -----------------------------------------------------------------------

HEX64 = st.text("0123456789abcdef", min_size=64, max_size=64)
IDENT = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=24)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), min_size=1, max_size=40)
HUGE = st.sampled_from([300, 300, 5000, 5000, 70000]).map(lambda n: "\U0001F600x" * (n // 2))
UNICODE = st.text(max_size=40) | st.sampled_from(
    ["", "\u0000", "\u202e\u0301", "\ufeff", "é" * 300, "𝕳𝖊𝖗𝖆𝖑𝖉", "../../etc/passwd", "' OR 1=1 --", "%00", "\r\n"])
NUMBER = st.sampled_from([0, -1, 2**31, 2**53 + 1, 2**63, -(2**63) - 1, 10**30, 1e308, -0.0, 0.5])
SCALAR = st.none() | st.booleans() | NUMBER | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | UNICODE
ANY_JSON = st.recursive(SCALAR | HUGE, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


def mostly(valid: st.SearchStrategy, other: st.SearchStrategy, tenths: int = 8) -> st.SearchStrategy:
    """`valid` `tenths` times in ten, else `other`."""
    return st.integers(0, 9).flatmap(lambda n: valid if n < tenths else other)


# How a documented body is changed: "valid" keeps it (a member is still dropped or added only by
# the other kinds), the rest break one member or the whole body.
MUTATIONS = ["valid"] * 4 + ["drop", "retype", "unicode", "number", "array", "huge", "add", "whole"]


@st.composite
def mutated(draw, base: dict, extras: dict | None = None) -> object:
    """A documented body: `base` (a dict of strategies of valid values) and some of `extras` (optional
    members), then, more often than not, one mutation: a member dropped, its value replaced by
    another type, hostile unicode or an out-of-range number, wrapped in an array or made huge, an
    unknown member added, or the whole body replaced by something else."""
    body = {key: draw(value) for key, value in base.items()}
    for key, value in (extras or {}).items():
        if draw(st.booleans()):
            body[key] = draw(value)
    kind = draw(st.sampled_from(MUTATIONS))
    keys = sorted(body)
    pick = (lambda: draw(st.sampled_from(keys))) if keys else (lambda: draw(UNICODE))
    if kind == "drop" and keys:
        body.pop(pick())
    elif kind in ("retype", "unicode", "number", "huge"):
        body[pick()] = draw({"retype": ANY_JSON, "unicode": UNICODE, "number": NUMBER, "huge": HUGE}[kind])
    elif kind == "array" and keys:
        key = pick()
        body[key] = [body[key]]
    elif kind == "add":
        body[draw(UNICODE)] = draw(ANY_JSON)
    elif kind == "whole":
        return draw(ANY_JSON | st.just([body]))
    return body


RAW_JSON = st.sampled_from([
    b"", b"{", b"[", b"null", b"{}", b"[]", b'"x"', b"1e999", b"NaN", b'{"a":1,}', b"{'a':1}",
    b'{"s":"\\ud800"}', b'{"s":"\xff\xfe"}', b"\xef\xbb\xbf{}", b'{"a":1}{"a":2}', b"[" * 600 + b"]" * 600,
    b'{"a":' * 300 + b"1" + b"}" * 300, b'{"x":"\\u0000"}', b"\x00" * 16])


@st.composite
def json_bytes(draw, value: object) -> bytes:
    """`value` as JSON (ASCII-escaped or UTF-8), sometimes instead raw broken JSON."""
    if draw(st.integers(0, 9)) == 0:
        return draw(RAW_JSON)
    return json.dumps(value, ensure_ascii=draw(st.booleans())).encode()


def path_segment(known: list[str]) -> st.SearchStrategy[str]:
    """A path parameter: a seeded id most of the time, else a random or hostile one (%-encoded)."""
    hostile = st.sampled_from(["", "..", "%", "null", "0" * 300, "a/b", "é", "\x00", "x" * 5000]) | UNICODE
    return mostly(st.sampled_from(known), st.builds(lambda: str(uuid.uuid4()).upper()) | hostile.map(
        lambda s: urllib.parse.quote(s, safe="") or "%20"), 7)


# --- routes ---------------------------------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    body: bytes | None = None


@dataclass
class Route:
    dialect: str
    method: str
    template: str
    shape: str
    requests: Callable[["Fuzz"], st.SearchStrategy[Request]]

    @property
    def name(self) -> str:
        return f"{self.dialect} {self.method} {self.template}"


@dataclass
class Fuzz:
    """The server, the objects seeded on it, and the results."""

    h: Herald
    seeds: dict = field(default_factory=dict)
    cases: int = 0
    failures: list = field(default_factory=list)
    statuses: dict = field(default_factory=dict)  # route name -> {status: count}

    # valid credentials of each kind the route takes
    def user(self) -> st.SearchStrategy[dict]:
        return st.sampled_from(["HS256", "RS256"]).map(
            lambda alg: {"Authorization": f"Bearer {self.h.mint_jwt(None, USER, alg=alg)}"})

    def server(self) -> st.SearchStrategy[dict]:
        return st.just(self.h.key_headers())

    def leancloud(self, master_only: bool = False) -> st.SearchStrategy[dict]:
        return st.tuples(st.booleans() if not master_only else st.just(True), st.booleans()).map(
            lambda t: self.h.leancloud_headers(master=t[0], sign=t[1]))

    def send(self, route: Route, request: Request) -> None:
        headers = dict(request.headers)
        if request.body is not None and route.shape != "sns":
            headers.setdefault("Content-Type", "application/json")
        try:
            answer = self.h.request(request.method, request.path, headers, request.body, timeout=15)
            problems = shape_problems(route.shape, answer)
        except OSError as error:
            answer, problems = None, [f"no answer: {error!r}"]
        self.cases += 1
        counts = self.statuses.setdefault(route.name, {})
        counts[answer.status if answer else None] = counts.get(answer.status if answer else None, 0) + 1
        if problems:
            self.failures.append((route, request, answer, problems))


def _json_route(dialect, method, template, shape, auth, path, body=None, query=None) -> Route:
    """A route taking JSON: `auth` a strategy of headers, `path` of the path, `body` of the body's
    value (None: no body), `query` of a query string."""

    def requests(fz: Fuzz) -> st.SearchStrategy[Request]:
        @st.composite
        def build(draw):
            target = draw(path(fz)) if callable(path) else path
            if query is not None:
                target += "?" + draw(query(fz))
            payload = draw(json_bytes(draw(body(fz)))) if body is not None else None
            return Request(method, target, draw(auth(fz)), payload)

        return build()

    return Route(dialect, method, template, shape, requests)


def _paths(template: str, **params: Callable[[Fuzz], list[str]]):
    """The path strategy of `template` whose `{name}`s come from `params[name](fz)` (seeded ids)."""

    def strategy(fz: Fuzz):
        return st.fixed_dictionaries({name: path_segment(ids(fz)) for name, ids in params.items()}).map(
            lambda values: template.format(**values))

    return strategy


USER_AUTH = lambda fz: fz.user()  # noqa: E731
SERVER_AUTH = lambda fz: fz.server()  # noqa: E731
NO_AUTH = lambda fz: st.just({})  # noqa: E731
TIME = mostly(st.sampled_from(["22:00", "07:00", "23:59", "00:00"]), st.sampled_from(["24:00", "7:00", "", "noon"]))
TZ = mostly(st.sampled_from(["Europe/Paris", "America/New_York", "UTC", "Asia/Shanghai"]),
            st.sampled_from(["Mars/Olympus", "", "+01:00"]))
APPLE = st.sampled_from(["ios", "ipados", "watchos", "tvos", "macos"])
SMALL = st.integers(0, 99)
DATE = mostly(st.sampled_from(["2026-12-24T09:00:00Z", "2026-11-25T12:00:00+01:00"]),
              st.sampled_from(["yesterday", "2026-13-40T99:99:99Z", "", "0"]))
FCM_TOKEN = st.tuples(IDENT, HEX64).map(lambda t: f"{t[0]}:{t[1]}")
UUID = st.builds(lambda: str(uuid.uuid4()).upper())


def argus_routes() -> list[Route]:
    device = lambda fz: [fz.seeds["argus_device"]]  # noqa: E731
    extras = {"token_type": st.sampled_from(["sandbox", "production"]), "device_model": st.just("iPhone15,2"),
              "os_version": st.just("17.4"), "app_version": st.just("1.0.3"), "app_bundle_id": st.just("com.example.argus"),
              "device_name": TEXT}
    registration = lambda fz: (  # noqa: E731
        mutated({"device_token": HEX64, "platform": APPLE, "device_id": UUID}, {**extras, "push_service": st.just("apns")})
        | mutated({"device_token": FCM_TOKEN, "platform": st.just("android"), "device_id": UUID},
                  {**extras, "push_service": st.just("fcm")}))
    preferences = lambda fz: mutated(  # noqa: E731
        {"device_id": st.sampled_from(device(fz))},
        {"enabled_cameras": st.none() | st.lists(IDENT, max_size=5), "enabled_object_types": st.none() | st.lists(IDENT),
         "quiet_hours_enabled": st.booleans(), "quiet_hours_start": TIME, "quiet_hours_end": TIME,
         "timezone": TZ, "sound_enabled": st.booleans()})
    event = lambda fz: mutated(  # noqa: E731
        {"event_id": IDENT, "camera_id": IDENT, "camera_name": TEXT,
         "smart_detection_type": st.sampled_from(["person", "vehicle", "animal"]), "description": TEXT},
        {"timestamp": DATE, "user_ids": st.lists(st.just(USER) | IDENT, min_size=1, max_size=3)})
    return [
        _json_route("ArgusAI", "POST", "/api/v1/push/mobile/register", "native", USER_AUTH,
                    "/api/v1/push/mobile/register", registration),
        _json_route("ArgusAI", "PUT", "/api/v1/push/mobile/tokens/{device_id}", "native", USER_AUTH,
                    _paths("/api/v1/push/mobile/tokens/{device_id}", device_id=device),
                    lambda fz: mutated({"device_token": HEX64})),
        _json_route("ArgusAI", "POST", "/api/v1/push/mobile/preferences", "native", USER_AUTH,
                    "/api/v1/push/mobile/preferences", preferences),
        _json_route("ArgusAI", "PUT", "/api/v1/push/mobile/preferences", "native", USER_AUTH,
                    "/api/v1/push/mobile/preferences", preferences),
        _json_route("ArgusAI", "POST", "/api/v1/push/mobile/events", "native", SERVER_AUTH,
                    "/api/v1/push/mobile/events", event),
        _json_route("ArgusAI", "GET", "/api/v1/devices", "native", USER_AUTH, "/api/v1/devices"),
        _json_route("ArgusAI", "PATCH", "/api/v1/devices/{id}", "native", USER_AUTH,
                    _paths("/api/v1/devices/{id}", id=lambda fz: [fz.seeds["argus_id"]]),
                    lambda fz: mutated({"name": st.none() | TEXT})),
        _json_route("ArgusAI", "DELETE", "/api/v1/push/mobile/tokens/{device_id}", "native", USER_AUTH,
                    _paths("/api/v1/push/mobile/tokens/{device_id}", device_id=lambda fz: [fz.seeds["argus_spare_device"]])),
        _json_route("ArgusAI", "DELETE", "/api/v1/devices/{id}", "native", USER_AUTH,
                    _paths("/api/v1/devices/{id}", id=lambda fz: [fz.seeds["argus_spare_id"]])),
    ]


def aovis_routes() -> list[Route]:
    camera = lambda fz: [fz.seeds["camera"], fz.seeds["camera_alias"]]  # noqa: E731
    return [
        _json_route("AOVIS", "POST", "/api/internal/push/register", "aovis", USER_AUTH, "/api/internal/push/register",
                    lambda fz: st.one_of(*(mutated(
                        {"platform": st.just(platform), "token": token},
                        {"deviceId": st.sampled_from(camera(fz)), "locale": st.sampled_from(["en", "zh_Hans_CN", "fr-FR"]),
                         "timezone": TZ}) for platform, token in (("ios", HEX64), ("android", FCM_TOKEN))))),
        _json_route("AOVIS", "POST", "/api/internal/devices", "native", SERVER_AUTH, "/api/internal/devices",
                    lambda fz: mutated({}, {"id": IDENT, "alias": IDENT.map(lambda s: "aovis-n4k-" + s), "name": TEXT})),
        _json_route("AOVIS", "GET", "/api/internal/devices/{id}", "native", SERVER_AUTH,
                    _paths("/api/internal/devices/{id}", id=camera)),
        _json_route("AOVIS", "PUT", "/api/internal/devices/{id}/owners/{user_id}", "native", SERVER_AUTH,
                    _paths("/api/internal/devices/{id}/owners/{user_id}", id=camera, user_id=lambda fz: [USER]),
                    lambda fz: mutated({"status": mostly(st.just("ACTIVE"), st.sampled_from(["REVOKED", "active", ""]))})),
        _json_route("AOVIS", "POST", "/api/internal/events", "native", SERVER_AUTH, "/api/internal/events",
                    lambda fz: mutated(
                        {"eventId": IDENT, "deviceId": st.sampled_from(camera(fz)),
                         "classifyEventType": st.sampled_from(["person", "vehicle", "pet", "package", "other"]),
                         "classifySummaryShort": TEXT},
                        {"id": IDENT, "thumbnailS3Key": IDENT, "occurredAt": DATE})),
        _json_route("AOVIS", "GET", "/api/internal/events/{id}", "native", SERVER_AUTH,
                    _paths("/api/internal/events/{id}", id=lambda fz: [fz.seeds["event"]])),
    ]


LC_KINDS = st.sampled_from([
    {"deviceType": "ios", "deviceToken": None}, {"deviceType": "android", "registrationId": None, "vendor": "fcm"},
    {"deviceType": "android", "installationId": None}])


@st.composite
def lc_installation(draw) -> object:
    """A LeanCloud installation (ios + deviceToken, android + fcm registrationId, android +
    installationId only), mutated."""
    kind = dict(draw(LC_KINDS))
    for key, value in kind.items():
        if value is None:
            kind[key] = draw(HEX64 if key == "deviceToken" else FCM_TOKEN if key == "registrationId" else
                             st.builds(lambda: uuid.uuid4().hex))
    return draw(mutated({key: st.just(value) for key, value in kind.items()}, {
        "channels": st.lists(IDENT, max_size=3), "badge": SMALL | st.just({"__op": "Increment", "amount": 1}),
        "timeZone": TZ, "apnsTopic": st.just("com.example.lc"), "appVersion": st.just("1.2"), "appName": TEXT,
        "owner": st.just({"__type": "Pointer", "className": "_User", "objectId": "x"})}))


LC_WHERE = st.fixed_dictionaries({}, optional={
    "channels": st.sampled_from(["news", {"$in": ["news"]}, {"$all": ["news"]}, {"$regex": "^n", "$options": "i"}]),
    "deviceType": st.sampled_from(["ios", {"$ne": "android"}, {"$exists": True}]),
    "createdAt": st.sampled_from([{"$gt": {"__type": "Date", "iso": "2020-01-01T00:00:00.000Z"}}]),
    "location": st.sampled_from([{"$nearSphere": {"__type": "GeoPoint", "latitude": 48.8, "longitude": 2.3},
                                  "$maxDistanceInKilometers": 10},
                                 {"$within": {"$box": [{"__type": "GeoPoint", "latitude": 0, "longitude": 0},
                                                       {"__type": "GeoPoint", "latitude": 1, "longitude": 1}]}}]),
    "$or": st.lists(st.just({"badge": {"$gte": 1}}), min_size=1, max_size=3),
    "owner": st.sampled_from([{"$inQuery": {"where": {"username": "fuzz"}, "className": "_User"}}]),
})


def lc_where() -> st.SearchStrategy:
    return st.builds(lambda w, broken: {**w, **broken}, LC_WHERE, mostly(st.just({}), st.fixed_dictionaries({}, optional={
        "badge": st.sampled_from([{"$bogus": 1}, {"$in": 1}, {"$regex": "("}, {"$gt": []}]),
        "$and": ANY_JSON, "location": st.just({"$nearSphere": {"__type": "GeoPoint", "latitude": 91, "longitude": 0}})})))


def leancloud_routes() -> list[Route]:
    object_ids = lambda fz: [fz.seeds["lc_installation"]]  # noqa: E731
    installation = lambda fz: lc_installation()  # noqa: E731
    data = mutated({"alert": TEXT}, {
        "title": TEXT, "badge": st.sampled_from([1, "Increment"]), "sound": st.just("default"),
        "content-available": st.just(1), "mutable-content": st.just(1), "category": IDENT, "action": IDENT,
        "custom": TEXT, "ios": st.just({"alert": {"title": "t", "body": "b"}, "badge": 2}),
        "android": st.just({"title": "t", "alert": "a"})})
    push = lambda fz: mutated(  # noqa: E731
        {"data": data},
        {"channels": st.lists(IDENT, min_size=1, max_size=3), "where": lc_where(),
         "prod": st.sampled_from(["dev", "prod"]),
         "push_time": st.sampled_from(["2026-12-24T00:00:00.000Z", {"__type": "Date", "iso": "2026-12-24T00:00:00.000Z"}]),
         "expiration_interval": st.integers(1, 86400), "notification_id": IDENT}) | mutated(
        {"data": data, "cql": mostly(st.sampled_from([
            "select * from _Installation where badge > 1", "select * from _Installation where channels in ('news')",
            "select * from _Installation where near geopoint(1, 2) max 3 km"]),
            st.sampled_from(["select from", "select * from _User", "select * from _Installation where ((("]))})
    list_query = lambda fz: st.fixed_dictionaries({}, optional={  # noqa: E731
        "where": mostly(lc_where().map(json.dumps), UNICODE), "order": st.sampled_from(["-createdAt", "badge", "-updatedAt"]),
        "skip": mostly(st.sampled_from(["0", "5"]), st.sampled_from(["-1", "99999999999999999999", "x"])),
        "limit": mostly(st.sampled_from(["1", "1000"]), st.sampled_from(["1001", "-5", "x"])),
        "keys": st.sampled_from(["badge,channels", "deviceType"]), "count": st.sampled_from(["1", "0"])}).map(urllib.parse.urlencode)
    user_body = lambda fz: mutated({}, {"username": TEXT, "location": mostly(  # noqa: E731
        st.just({"__type": "GeoPoint", "latitude": 48.8, "longitude": 2.3}),
        st.sampled_from([{"__type": "GeoPoint", "latitude": "x"}, {"__op": "Delete"}, {"__type": "Bogus"}])), "age": SMALL})
    batch = lambda fz: mutated({"requests": st.lists(st.fixed_dictionaries({  # noqa: E731
        "method": mostly(st.sampled_from(["POST", "PUT", "GET"]), st.sampled_from(["DELETE", "PATCH", ""])),
        "path": mostly(st.sampled_from(["/1.1/installations", f"/1.1/installations/{fz.seeds['lc_installation']}",
                                        "/1.1/classes/_Installation"]),
                       st.sampled_from(["/1.1/push", "/1.1/batch", "/2/x", "installations", "/1.1/installations/none"])),
    }, optional={"body": lc_installation()}), min_size=1, max_size=4)})
    master = lambda fz: fz.leancloud(master_only=True)  # noqa: E731
    either = lambda fz: fz.leancloud()  # noqa: E731
    routes = []
    for base in ("/1.1/installations", "/1.1/classes/_Installation"):
        one = base + "/{objectId}"
        routes += [
            _json_route("LeanCloud", "POST", base, "leancloud", either, base, installation,
                        query=lambda fz: st.sampled_from(["fetchWhenSave=true", "", "fetchWhenSave=x"])),
            _json_route("LeanCloud", "GET", base, "leancloud", master, base, query=list_query),
            _json_route("LeanCloud", "GET", one, "leancloud", either, _paths(one, objectId=object_ids),
                        query=lambda fz: st.sampled_from(["keys=badge", "keys=", ""])),
            _json_route("LeanCloud", "PUT", one, "leancloud", either, _paths(one, objectId=object_ids), installation),
        ]
    for base in ("/1.1/users", "/1.1/classes/_User"):
        one = base + "/{objectId}"
        routes += [
            _json_route("LeanCloud", "POST", base, "leancloud", master, base, user_body),
            _json_route("LeanCloud", "GET", one, "leancloud", master, _paths(one, objectId=lambda fz: [fz.seeds["lc_user"]])),
            _json_route("LeanCloud", "PUT", one, "leancloud", master,
                        _paths(one, objectId=lambda fz: [fz.seeds["lc_user"]]), user_body),
        ]
    notification = lambda fz: [fz.seeds["lc_push"]]  # noqa: E731
    routes += [
        _json_route("LeanCloud", "POST", "/1.1/push", "leancloud", either, "/1.1/push", push),
        _json_route("LeanCloud", "POST", "/1.1/batch", "leancloud", either, "/1.1/batch", batch),
        _json_route("LeanCloud", "GET", "/1.1/tables/Notifications/{objectId}", "leancloud", either,
                    _paths("/1.1/tables/Notifications/{objectId}", objectId=notification)),
        _json_route("LeanCloud", "GET", "/1.1/classes/_Notification/{objectId}", "leancloud", either,
                    _paths("/1.1/classes/_Notification/{objectId}", objectId=notification)),
        _json_route("LeanCloud", "GET", "/1.1/classes/_Notification", "leancloud", master,
                    "/1.1/classes/_Notification", query=list_query),
    ]
    for base, spare in (("/1.1/installations", "lc_spare_installations"), ("/1.1/classes/_Installation", "lc_spare_installations"),
                        ("/1.1/users", "lc_spare_users"), ("/1.1/classes/_User", "lc_spare_users")):
        routes.append(_json_route("LeanCloud", "DELETE", base + "/{objectId}", "leancloud", master,
                                  _paths(base + "/{objectId}", objectId=lambda fz, spare=spare: fz.seeds[spare])))
    return routes


def ha_routes() -> list[Route]:
    tokens = lambda fz: mostly(st.sampled_from(fz.seeds["ha_tokens"]), IDENT | HEX64, 9)  # noqa: E731
    data = mutated({}, {
        "push": st.fixed_dictionaries({}, optional={"badge": SMALL, "sound": st.sampled_from(["default", "none"]),
                                                    "interruption-level": st.sampled_from(["time-sensitive", "critical", "passive"]),
                                                    "category": IDENT}),
        "tag": IDENT, "group": IDENT, "channel": IDENT, "image": st.just("/media/local/cam.jpg"), "url": st.just("/lovelace/0"),
        "subtitle": TEXT, "priority": st.sampled_from(["high", "normal"]), "ttl": st.integers(0, 86400),
        "actions": st.lists(st.fixed_dictionaries({"action": IDENT, "title": TEXT}, optional={"uri": st.just("/x")}), max_size=3),
        "apns_headers": st.just({"apns-collapse-id": "door"}), "android": st.just({"priority": "high"}),
        "apns": st.just({"payload": {"aps": {"badge": 1}}, "headers": {"apns-priority": "5"}}),
        "data": st.dictionaries(IDENT, TEXT, max_size=2), "entity_id": st.just("camera.door"),
        "sound": st.just({"name": "default", "critical": 1, "volume": 1.0})})
    push = lambda fz: mutated(  # noqa: E731
        {"message": mostly(TEXT, st.sampled_from(["request_location_update", "clear_badge", "command_dnd", "remove_channel"])),
         "push_token": tokens(fz),
         "registration_info": mutated({"app_id": st.sampled_from(["io.robbie.HomeAssistant", "io.homeassistant.companion.android"]),
                                       "app_version": st.just("2024.11.1")},
                                      {"webhook_id": IDENT, "os_version": st.just("17.1")})},
        {"title": TEXT, "data": data})
    return [
        _json_route("HomeAssistant", "POST", "/ha/push", "ha", NO_AUTH, "/ha/push", push),
        _json_route("HomeAssistant", "POST", "/ha/push/rate_limits", "ha", NO_AUTH, "/ha/push/rate_limits",
                    lambda fz: mutated({"push_token": tokens(fz)})),
    ]


SNS_ACTIONS = [  # the deleting ones last, so the others find the seeded objects
    "CreatePlatformApplication", "GetPlatformApplicationAttributes", "SetPlatformApplicationAttributes",
    "ListPlatformApplications", "CreatePlatformEndpoint", "GetEndpointAttributes", "SetEndpointAttributes",
    "ListEndpointsByPlatformApplication", "CreateTopic", "ListTopics", "Subscribe", "ListSubscriptionsByTopic", "Publish",
    "Unsubscribe", "DeleteEndpoint", "DeleteTopic", "DeletePlatformApplication"]


def sns_routes() -> list[Route]:
    """POST /sns: one route per action, parameters as the Query API encodes them, always signed."""

    def requests_for(action: str):
        def requests(fz: Fuzz):
            arn = lambda kind: mostly(st.sampled_from(fz.seeds[kind]), UNICODE | st.just(  # noqa: E731
                "arn:aws:sns:us-east-1:123456789012:app/APNS/none"))
            attributes = st.lists(st.tuples(st.sampled_from(["Enabled", "Token", "CustomUserData", "PlatformCredential",
                                                             "ApplePlatformBundleID", "Bogus", ""]),
                                            mostly(st.sampled_from(["true", "false"]) | HEX64 | TEXT, UNICODE)), max_size=3)
            message = st.sampled_from([
                "hello", json.dumps({"default": "d", "APNS": json.dumps({"aps": {"alert": "a"}})}),
                json.dumps({"default": "d", "GCM": json.dumps({"fcmV1Message": {"message": {"data": {"a": "b"}}}})}),
                json.dumps({"APNS": "{"}), "{", json.dumps({"default": 1, "GCM": {"x": 1}})]) | TEXT | HUGE
            pools = {
                "Name": mostly(IDENT, UNICODE), "Platform": mostly(st.sampled_from(["APNS", "APNS_SANDBOX", "GCM"]),
                                                                   st.sampled_from(["ADM", "", "apns"])),
                "PlatformApplicationArn": arn("sns_apps"), "EndpointArn": arn("sns_endpoints"),
                "TopicArn": arn("sns_topics"), "TargetArn": arn("sns_endpoints"),
                "SubscriptionArn": arn("sns_subscriptions"), "Token": mostly(HEX64, UNICODE), "CustomUserData": mostly(TEXT, UNICODE),
                "Protocol": mostly(st.just("application"), st.sampled_from(["email", ""])), "Endpoint": arn("sns_endpoints"),
                "Message": message, "MessageStructure": st.sampled_from(["json", "text", ""]), "Subject": mostly(TEXT, UNICODE),
                "NextToken": st.sampled_from(["", "x", "AAAA"]) | UNICODE,
            }
            needed = {
                "CreatePlatformApplication": ["Name", "Platform"], "CreatePlatformEndpoint": ["PlatformApplicationArn", "Token"],
                "GetPlatformApplicationAttributes": ["PlatformApplicationArn"], "SetPlatformApplicationAttributes": ["PlatformApplicationArn"],
                "DeletePlatformApplication": ["PlatformApplicationArn"], "ListEndpointsByPlatformApplication": ["PlatformApplicationArn"],
                "GetEndpointAttributes": ["EndpointArn"], "SetEndpointAttributes": ["EndpointArn"], "DeleteEndpoint": ["EndpointArn"],
                "CreateTopic": ["Name"], "DeleteTopic": ["TopicArn"], "ListSubscriptionsByTopic": ["TopicArn"],
                "Subscribe": ["TopicArn", "Protocol", "Endpoint"], "Unsubscribe": ["SubscriptionArn"], "Publish": ["Message"],
            }.get(action, [])

            @st.composite
            def build(draw):
                params = [("Action", action)] + [(name, draw(pools[name])) for name in needed]
                if action == "Publish":
                    kind = draw(st.sampled_from(["TargetArn", "TopicArn"]))
                    params.append((kind, draw(arn("sns_endpoints" if kind == "TargetArn" else "sns_topics"))))
                    if draw(st.booleans()):
                        params.append(("MessageStructure", draw(pools["MessageStructure"])))
                    for n, (name, value) in enumerate(draw(st.lists(st.tuples(
                            st.sampled_from(["AWS.SNS.MOBILE.APNS.PUSH_TYPE", "AWS.SNS.MOBILE.APNS.TTL",
                                             "AWS.SNS.MOBILE.FCM.TTL", "AWS.SNS.MOBILE.APNS.PRIORITY", "x"]),
                            st.sampled_from(["alert", "background", "-1", "99999999999999999999", "x"])), max_size=2)), 1):
                        params += [(f"MessageAttributes.entry.{n}.Name", name),
                                   (f"MessageAttributes.entry.{n}.Value.DataType", draw(st.sampled_from(["String", "Number", "Binary", "x"]))),
                                   (f"MessageAttributes.entry.{n}.Value.StringValue", value)]
                for n, (key, value) in enumerate(draw(attributes), 1):
                    params += [(f"Attributes.entry.{n}.key", key), (f"Attributes.entry.{n}.value", value)]
                mutation = draw(st.sampled_from(["valid", "valid", "drop", "dup", "retype", "huge", "version"]))
                if mutation == "drop" and len(params) > 1:
                    params.pop(draw(st.integers(1, len(params) - 1)))
                elif mutation == "dup":
                    params.append(draw(st.sampled_from(params)))
                elif mutation == "retype" and len(params) > 1:
                    index = draw(st.integers(1, len(params) - 1))
                    params[index] = (params[index][0], draw(UNICODE | HUGE))
                elif mutation == "version":
                    params.append(("Version", draw(st.sampled_from(["2010-03-31", "2099-01-01", ""]))))
                body = urllib.parse.urlencode(params).encode()
                if draw(st.integers(0, 9)) == 0:
                    body = draw(st.sampled_from([b"", b"Action", b"Action=%FF%FE", b"Action=Publish&Message=\xff\xfe",
                                                 b"%%%", b"Action=ListTopics&&&==", b"Action=" + b"x" * 3000]))
                return Request("POST", "/sns", fz.h.sns_sign(None, body), body)

            return build()

        return requests

    return [Route("SNS", "POST", f"/sns Action={action}", "sns", requests_for(action)) for action in SNS_ACTIONS]


def native_routes() -> list[Route]:
    """A few native routes, briefly (scripts/schemathesis fuzzes them all from the OpenAPI document)."""
    extras = {"user_id": IDENT, "device_id": IDENT, "channels": st.lists(IDENT, max_size=3),
              "locale": st.sampled_from(["en", "zh_Hans_CN", "fr-FR"]), "timezone": TZ, "badge": SMALL,
              "attributes": st.dictionaries(IDENT, TEXT | SMALL, max_size=3)}
    installation = lambda fz: (  # noqa: E731
        mutated({"platform": APPLE, "token": HEX64}, extras)
        | mutated({"platform": st.just("android"), "token": FCM_TOKEN}, extras))
    notification = lambda fz: mutated(  # noqa: E731
        {"target": st.sampled_from([{"user_ids": [USER]}, {"channels": ["news"]}, {"where": {"badge": {"$gt": 1}}},
                                    {"installation_ids": [fz.seeds["native_installation"]]}]),
         "payload": mutated({"title": TEXT}, {"body": TEXT, "badge": st.sampled_from([1, "increment"]),
                                               "data": st.dictionaries(IDENT, TEXT, max_size=3), "sound": st.just("default")})},
        {"dry_run": st.booleans(), "push_time": DATE, "idempotency_key": IDENT, "source": IDENT, "category": IDENT})
    one = lambda fz: [fz.seeds["native_installation"]]  # noqa: E731
    return [
        _json_route("native", "POST", "/v1/installations", "native", SERVER_AUTH, "/v1/installations", installation),
        _json_route("native", "PATCH", "/v1/installations/{id}", "native", SERVER_AUTH, _paths("/v1/installations/{id}", id=one),
                    lambda fz: mutated({}, {"channels": st.lists(IDENT), "badge": SMALL, "timezone": TZ, "locale": st.just("en")})),
        _json_route("native", "PUT", "/v1/installations/{id}/preferences", "native", SERVER_AUTH,
                    _paths("/v1/installations/{id}/preferences", id=one),
                    lambda fz: mutated({}, {"enabled_sources": st.lists(IDENT), "sound_enabled": st.booleans(),
                                            "quiet_hours": st.fixed_dictionaries({"start": TIME, "end": TIME}),
                                            "muted_until": DATE})),
        _json_route("native", "POST", "/v1/notifications", "native", SERVER_AUTH, "/v1/notifications", notification),
        _json_route("native", "GET", "/v1/installations", "native", SERVER_AUTH, "/v1/installations",
                    query=lambda fz: st.fixed_dictionaries({}, optional={
                        "limit": mostly(st.sampled_from(["1", "1000"]), st.sampled_from(["0", "1001", "x"])),
                        "cursor": UNICODE, "platform": APPLE}).map(urllib.parse.urlencode)),
        _json_route("native", "POST", "/v1/opens", "native", SERVER_AUTH, "/v1/opens",
                    lambda fz: mutated({"notification_id": st.just(fz.seeds["native_notification"]),
                                        "installation_id": st.sampled_from(one(fz))}, {"opened_at": DATE})),
    ]


MATRIX_ERRORS = {400: {"M_NOT_JSON", "M_BAD_JSON"}, 413: {"M_TOO_LARGE"}, 429: {"M_LIMIT_EXCEEDED"},
                 503: {"M_UNKNOWN"}}


def matrix_routes() -> list[Route]:
    """POST /_matrix/push/v1/notify as homeservers send it (Synapse's shapes), mutated: events,
    event_id_only, badge-only updates, known and unknown app ids, pushkeys of every shape."""
    app_ids = lambda fz: mostly(st.sampled_from([f"org.herald.{fz.h.app().id}.ios", f"org.herald.{fz.h.app().id}.android"]),  # noqa: E731
                                st.sampled_from(["org.unknown", ""]) | UNICODE)
    device = lambda fz: mutated(  # noqa: E731
        {"app_id": app_ids(fz), "pushkey": mostly(HEX64, FCM_TOKEN | IDENT | UNICODE)},
        {"pushkey_ts": SMALL, "data": st.sampled_from([{}, {"format": "event_id_only"},
                                                       {"default_payload": {"aps": {"mutable-content": 1}}}]),
         "tweaks": st.sampled_from([{}, {"sound": "default"}, {"highlight": True}])})
    notification = lambda fz: mutated(  # noqa: E731
        {"devices": st.lists(device(fz), min_size=1, max_size=3)},
        {"event_id": IDENT, "room_id": IDENT, "type": st.sampled_from(["m.room.message", "m.room.member", "m.room.encrypted"]),
         "sender": IDENT, "sender_display_name": TEXT, "room_name": TEXT, "prio": st.sampled_from(["high", "low"]),
         "content": st.fixed_dictionaries({"msgtype": st.just("m.text"), "body": TEXT | HUGE}),
         "counts": st.fixed_dictionaries({}, optional={"unread": SMALL, "missed_calls": SMALL})})
    return [_json_route("Matrix", "POST", "/_matrix/push/v1/notify", "matrix", NO_AUTH, "/_matrix/push/v1/notify",
                        lambda fz: mutated({"notification": notification(fz)}))]


NTFY_PRIORITY = mostly(st.sampled_from(["1", "2", "3", "4", "5", "min", "low", "default", "high", "max", "urgent"]),
                       st.sampled_from(["0", "6", "x", "", "u=1"]))
NTFY_DELAY = mostly(st.sampled_from(["30min", "2h", "1d", "10s", "1h30m"]), st.sampled_from(["5s", "9d", "tomorrow", "-1", "1e9"]))


def ntfy_routes() -> list[Route]:
    """ntfy's publishing: the JSON form to / and the topic form to /<topic> with ntfy's header fields, with
    publish keys (any channel, or bound to "alerts") in ntfy's forms, and the keys of other kinds."""

    def auth(fz: Fuzz):
        app = fz.h.app()
        keys = mostly(st.sampled_from([app.publish_key, app.alerts_publish_key]),
                      st.sampled_from([app.server_key, "hpk_not-a-key-0000000000"]))
        return keys.flatmap(lambda key: st.sampled_from([
            {"Authorization": f"Bearer {key}"},
            {"Authorization": "Basic " + base64.b64encode(f"user:{key}".encode()).decode()},
            {"Authorization": "Basic " + base64.b64encode(f":{key}".encode()).decode()}]))

    # Printable ASCII: what an HTTP client lets through as a header value.
    printable = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
    headers = st.fixed_dictionaries({}, optional={
        "Title": printable, "X-Priority": NTFY_PRIORITY, "p": NTFY_PRIORITY, "Tags": st.just("warning,skull"),
        "ta": IDENT, "Click": mostly(st.just("https://example.com/x"), printable), "X-Delay": NTFY_DELAY,
        "Attach": mostly(st.just("https://example.com/a.jpg"), st.just("ftp://x")), "Markdown": st.just("yes"),
        "Icon": mostly(st.just("https://example.com/i.png"), st.just("file:///x")),
        "Actions": st.just("view, Open, https://example.com/")})
    topic = mostly(st.sampled_from(["alerts", "news", "phil_alerts"]), st.sampled_from(["a b", "x" * 65, "%00", "v1"]))

    def json_requests(fz: Fuzz):
        @st.composite
        def build(draw):
            body = draw(mutated({"topic": topic}, {
                "message": TEXT | HUGE, "title": TEXT, "tags": st.lists(IDENT, max_size=3),
                "priority": mostly(st.integers(1, 5), st.sampled_from([0, 6, "x", 3.5])), "click": st.just("https://x.example"),
                "attach": mostly(st.just("https://x.example/a.png"), st.just("nope")), "delay": NTFY_DELAY,
                "actions": st.sampled_from([[{"action": "view", "label": "Open", "url": "https://x.example"}], "x"]),
                "markdown": st.booleans()}))
            return Request(draw(st.sampled_from(["POST", "PUT"])), "/", draw(auth(fz)) | draw(headers),
                           draw(json_bytes(body)))
        return build()

    def topic_requests(fz: Fuzz):
        @st.composite
        def build(draw):
            message = draw(st.binary(max_size=64) | st.text(max_size=200).map(str.encode)
                           | st.binary(min_size=4090, max_size=4100))
            return Request(draw(st.sampled_from(["POST", "PUT"])), "/" + urllib.parse.quote(draw(topic), safe="%"),
                           draw(auth(fz)) | draw(headers), message)
        return build()

    return [Route("ntfy", "POST", "/", "ntfy", json_requests), Route("ntfy", "POST", "/{topic}", "ntfy", topic_requests)]


def gotify_routes() -> list[Route]:
    """Gotify's POST /message: JSON, URL-encoded and multipart bodies, the token in each of its places."""

    def requests(fz: Fuzz):
        app = fz.h.app()

        @st.composite
        def build(draw):
            key = draw(mostly(st.sampled_from([app.publish_key, app.alerts_publish_key]),
                              st.sampled_from([app.server_key, "AnUnknownToken1"])))
            place = draw(st.sampled_from(["query", "header", "bearer"]))
            headers = {"X-Gotify-Key": key} if place == "header" else (
                {"Authorization": f"Bearer {key}"} if place == "bearer" else {})
            path = "/message" + (f"?token={urllib.parse.quote(key)}" if place == "query" else "")
            fields = draw(mutated({"message": TEXT | HUGE}, {
                "title": TEXT, "priority": mostly(st.integers(0, 10), st.sampled_from([-1, 99, "x", 1.5, "5"])),
                "extras": st.sampled_from([{"client::display": {"contentType": "text/markdown"}},
                                           {"client::notification": {"click": {"url": "https://x.example"}}}, "x"])}))
            kind = draw(st.sampled_from(["json", "form", "multipart"]))
            if kind == "json" or not isinstance(fields, dict):
                return Request("POST", path, headers | {"Content-Type": "application/json"}, draw(json_bytes(fields)))
            text = {k: str(v) for k, v in fields.items() if k != "extras"}
            if kind == "form":
                return Request("POST", path, headers | {"Content-Type": "application/x-www-form-urlencoded"},
                               urllib.parse.urlencode(text).encode())
            boundary = "fuzzboundary" + draw(IDENT)
            body = b"".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n".encode()
                            for k, v in text.items()) + f"--{boundary}--\r\n".encode()
            if draw(st.integers(0, 5)) == 0:
                body = body[: draw(st.integers(0, len(body)))]
            return Request("POST", path, headers | {"Content-Type": f"multipart/form-data; boundary={boundary}"}, body)

        return build()

    return [Route("Gotify", "POST", "/message", "gotify", requests)]


def unifiedpush_routes() -> list[Route]:
    """RFC 8030 push messages: opaque bytes, with mutated TTL, Urgency and Topic header fields, to the
    seeded endpoint and to made-up ones (answers in the native error body)."""

    def requests(fz: Fuzz) -> st.SearchStrategy[Request]:
        @st.composite
        def build(draw):
            path = draw(mostly(st.just(fz.seeds["up_path"]), st.sampled_from(["/up/x", "/up/" + "A" * 43, "/up/%00"])))
            headers = draw(st.fixed_dictionaries({}, optional={
                "TTL": mostly(st.sampled_from(["0", "60", "2419200"]), st.sampled_from(["-1", "x", "", "1e9", "99999999999999999999"])),
                "Urgency": mostly(st.sampled_from(["very-low", "low", "normal", "high"]), IDENT),
                # Printable ASCII: what an HTTP client lets through as a header value.
                "Topic": mostly(st.sampled_from(["chat", "a-b_c"]),
                                st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=40)),
                "Content-Encoding": st.just("aes128gcm")}))
            body = draw(st.binary(max_size=64) | st.binary(min_size=4090, max_size=4100))
            return Request("POST", path, headers, body)

        return build()

    return [Route("UnifiedPush", "POST", "/up/{secret}", "native", requests)]


def all_routes() -> list[Route]:
    return (argus_routes() + aovis_routes() + leancloud_routes() + ha_routes() + sns_routes() + native_routes()
            + unifiedpush_routes() + matrix_routes() + ntfy_routes() + gotify_routes())


# --- seeding --------------------------------------------------------------------------------


def seed_objects(h: Herald) -> dict:
    """Objects for the routes' path parameters and references, one per dialect."""

    def call(method, path, headers, body=None, statuses=(200, 201, 202)):
        answer = h.request(method, path, headers, body)
        assert answer.status in statuses, f"seeding {method} {path}: {answer.status} {answer.body[:300]!r}"
        return answer

    def sns(params):
        body, headers = h.sns_request_parts(None, params)
        text = call("POST", "/sns", headers, body).body.decode()
        return re.findall(r"<(?:PlatformApplicationArn|EndpointArn|TopicArn|SubscriptionArn)>([^<]+)<", text)

    def argus_device():
        device = str(uuid.uuid4()).upper()
        answer = call("POST", "/api/v1/push/mobile/register", user,
                      {"device_token": os.urandom(32).hex(), "platform": "ios", "device_id": device})
        return device, answer.json()["id"]

    user, server = h.user_headers(None, USER), h.key_headers()
    seeds = {}
    seeds["argus_device"], seeds["argus_id"] = argus_device()
    seeds["argus_spare_device"], _ = argus_device()
    _, seeds["argus_spare_id"] = argus_device()
    camera = call("POST", "/api/internal/devices", server, {"id": "fuzz-camera", "alias": "aovis-n4k-f0f0f0", "name": "Door"}).json()
    seeds["camera"], seeds["camera_alias"] = camera["id"], camera["alias"]
    call("PUT", f"/api/internal/devices/{camera['id']}/owners/{USER}", server, {"status": "ACTIVE"})
    seeds["event"] = call("POST", "/api/internal/events", server, {
        "eventId": "fuzz-event", "id": "fuzz-cloud-event", "deviceId": camera["id"], "classifyEventType": "person",
        "classifySummaryShort": "A person"}).json()["id"]
    lc = h.leancloud_headers(master=True)
    seeds["lc_installation"] = call("POST", "/1.1/installations", lc,
                                    {"deviceType": "ios", "deviceToken": os.urandom(32).hex(), "channels": ["news"]}).json()["objectId"]
    seeds["lc_spare_installations"] = [
        call("POST", "/1.1/installations", lc, {"deviceType": "android", "installationId": uuid.uuid4().hex}).json()["objectId"]
        for _ in range(3)]
    seeds["lc_user"] = call("POST", "/1.1/users", lc, {"username": "fuzz"}).json()["objectId"]
    seeds["lc_spare_users"] = [call("POST", "/1.1/users", lc, {"username": f"spare{n}"}).json()["objectId"] for n in range(3)]
    seeds["lc_push"] = call("POST", "/1.1/push", lc, {"channels": ["none"], "data": {"alert": "x"}}).json()["objectId"]
    apns_token, fcm_token = os.urandom(32).hex(), "fuzz:" + os.urandom(20).hex()
    native = call("POST", "/v1/installations", server, {"platform": "ios", "token": apns_token, "user_id": USER,
                                                          "channels": ["news"]}).json()
    seeds["native_installation"] = native["id"]
    endpoint = call("POST", f"/v1/installations/{native['id']}/push-endpoints", server).json()["endpoint"]
    seeds["up_path"] = urllib.parse.urlparse(endpoint).path
    seeds["native_notification"] = call("POST", "/v1/notifications", server, {
        "target": {"installation_ids": [native["id"]]}, "payload": {"title": "Seed"}}).json()["id"]
    call("POST", "/v1/installations", h.key_headers(kind="client"), {"platform": "android", "token": fcm_token})
    seeds["ha_tokens"] = [apns_token, fcm_token]
    seeds["sns_apps"] = sns({"Action": "CreatePlatformApplication", "Name": "fuzz", "Platform": "APNS"}) + sns(
        {"Action": "CreatePlatformApplication", "Name": "fuzzgcm", "Platform": "GCM"})
    seeds["sns_endpoints"] = sns({"Action": "CreatePlatformEndpoint", "PlatformApplicationArn": seeds["sns_apps"][0],
                                  "Token": os.urandom(32).hex()})
    seeds["sns_topics"] = sns({"Action": "CreateTopic", "Name": "fuzztopic"})
    seeds["sns_subscriptions"] = sns({"Action": "Subscribe", "TopicArn": seeds["sns_topics"][0], "Protocol": "application",
                                      "Endpoint": seeds["sns_endpoints"][0]})
    return seeds


# --- running --------------------------------------------------------------------------------


def _show(data: bytes | None, limit: int = 600) -> str:
    if not data:
        return "(empty)"
    text = data[:limit].decode("utf-8", "backslashreplace")
    return text + (f"… ({len(data)} bytes)" if len(data) > limit else "")


def report_failure(route: Route, request: Request, answer: Response | None, problems: list[str]) -> None:
    print(f"FAIL {route.name}: {'; '.join(problems)}")
    shown = {k: (v[:40] + "…" if k.lower() == "authorization" and len(v) > 40 else v) for k, v in request.headers.items()}
    print(f"  request:  {request.method} {request.path[:300]} {shown}")
    print(f"            {_show(request.body)}")
    if answer is not None:
        print(f"  response: {answer.status} {answer.headers.get('Content-Type')} {_show(answer.body)}")


def fuzz_route(fz: Fuzz, route: Route, index: int) -> None:
    @seed(SEED + index)
    @settings(max_examples=EXAMPLES, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(route.requests(fz))
    def run(request: Request) -> None:
        if fz.h.alive():
            fz.send(route, request)

    run()


def main() -> int:
    started = time.monotonic()
    routes = all_routes()
    failures = 0
    with Herald(extra_config={"app": {"a": {"home_assistant": {"max_per_day": 1000000}}}}) as h:
        fz = Fuzz(h, seed_objects(h))
        for index, route in enumerate(routes):
            before = len(fz.failures)
            fuzz_route(fz, route, index)
            if not h.healthy():
                fz.failures.append((route, Request("GET", "/healthz", {}), None,
                                    ["the server no longer answers GET /healthz after this route"]))
            if VERBOSE:
                print(f"{route.name}: {dict(sorted(fz.statuses.get(route.name, {}).items(), key=str))}")
            seen: dict[tuple, int] = {}
            for failure in fz.failures[before:]:  # one example of each kind, then a count
                key = (failure[2].status if failure[2] else None, re.sub(r"\d+", "N", "; ".join(failure[3])))
                seen[key] = seen.get(key, 0) + 1
                if seen[key] == 1 or VERBOSE:
                    report_failure(*failure)
            for (status, problem), count in seen.items():
                if count > 1 and not VERBOSE:
                    print(f"  … and {count - 1} more like it ({status}: {problem})")
            if not h.alive():
                print(f"FAIL the server died during {route.name}; its log ends:\n{h.log_tail()}")
                break
        failures = len(fz.failures)
        # Not what this proves: a server with deliveries failing in the background can take half
        # a minute to stop gracefully, so it gets a few seconds and is then killed.
        h.stop(timeout=5)
        print(f"dialect-fuzz: {len(routes)} routes, {fz.cases} cases, {failures} failures "
              f"(seed {SEED}, {EXAMPLES} examples a route, {time.monotonic() - started:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the server is stopped on the way out
    sys.exit(main())
