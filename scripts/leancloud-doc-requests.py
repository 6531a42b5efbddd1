#!/usr/bin/env python3
"""Replays every curl request of LeanCloud's push guide (the seed document
/work/shared/seeds/003_8f774a6a03a8d631.txt) against Herald with urllib: the same method, path,
headers and body, byte for byte, only https://cn.avoscloud.com replaced by Herald's base URL and
{{appid}} / {{appkey}} by the app's id and key. They are the old AVOSCloud dialect:
X-AVOSCloud-Application-Id / X-AVOSCloud-Application-Key (the app key), /1.1/installations.

Environment: LEANCLOUD_API_SERVER (Herald's base URL, http://127.0.0.1:<port>), HERALD_LC_APP_ID,
HERALD_LC_APP_KEY.

Options:
  --json either|strict|lenient  Five of the fifteen bodies are not valid JSON (a comma is missing:
        requests 1, 6, 8, 9 and 15). strict: they must be refused as LeanCloud does, HTTP 400
        {"code": 107, "error": ...}; lenient: they must be accepted like the others; either (the
        default): one or the other, and "json" in the output says which the server did.
  --seed PATH   first checks that the requests below are still exactly the seed's curl requests.

What the server must answer (LeanCloud's REST documentation; the seed itself shows no answers):
  POST /1.1/installations -> 201 (or 200 for a device it already has) {"objectId", "createdAt"}
  PUT /1.1/installations/mrmBZvsErB -> 200 {"updatedAt"}, or, as no installation has that id,
      an error {"code": 101, ...} (HTTP 404); "outcome" says which
  POST /1.1/push -> 200 (or 201) {"objectId", "createdAt"}, and then
  GET /1.1/tables/Notifications/<objectId> with the same headers -> the _Notification, with its status
Every answer must be a JSON object. Exits non-zero at the first failed check (FAILED: ... on
stderr); otherwise prints one JSON object: per request its number, section, method, path, HTTP
status, outcome, answer, the notification read back, and "matches" — which of the document's own
installations ("ios": deviceToken abcdef01...89, "android": installationId 12345678-4312-...) the
request's target selects at that point of the replay (in document order), for the caller to check
what its mock APNs server received ("android" has no registrationId, so nothing can reach it but
a LeanCloud-own channel). Request 12 is already expired and 13 expires with push_time + 518400 s
(2013-12-04), so neither should be delivered although both select the devices ("expired": true;
the seed's own wording counts expiration_interval from the API call instead — "expired": "maybe").
"""

import json
import os
import re
import shlex
import sys
import urllib.error
import urllib.request

HOST = "https://cn.avoscloud.com"

# The seed's curl requests, in its order: -X method, URL path, every -H, the -d body verbatim.
REQUESTS = [
    {
        "section": "Android: push not shown in the notification bar, runs the app's action (自定义 Receiver)",
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"channels":[ "public"],\n"data": {\n"action": "com.avos.UPDATE_STATUS"\n"name": "avos cloud."\n}\n}',
        "matches": [],
    },
    {
        "section": 'REST installations: iOS DeviceToken',
        "method": 'POST', "path": '/1.1/installations',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"deviceType": "ios",\n"deviceToken": "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",\n"channels": [\n"public", "protected", "private"\n]\n}',
        "matches": None,
    },
    {
        "section": 'REST installations: Android installationId',
        "method": 'POST', "path": '/1.1/installations',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"deviceType": "android",\n"installationId": "12345678-4312-1234-1234-1234567890ab",\n"channels": [\n"public", "protected", "private"\n]\n}',
        "matches": None,
    },
    {
        "section": 'REST installations: subscribe mrmBZvsErB to Giants',
        "method": 'PUT', "path": '/1.1/installations/mrmBZvsErB',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"channels": [\n"Giants"\n]\n}',
        "matches": None,
    },
    {
        "section": 'REST push: to every device',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"data": {\n"alert": "Hello From AVOS Cloud."\n}\n}',
        "matches": ['ios', 'android'],
    },
    {
        "section": 'REST push: to the public channel with where $regex \\Qpublic\\E',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"where":{\n"channels":\n{"$regex":"\\\\Qpublic\\\\E"}\n}\n"data": {\n"alert": "Hello From AVOS Cloud."\n}\n}',
        "matches": ['ios', 'android'],
    },
    {
        "section": 'REST push: to the public channel, the simpler way (channels)',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"channels":[ "public"],\n"data": {\n"alert": "Hello From AVOS Cloud."\n}\n}',
        "matches": ['ios', 'android'],
    },
    {
        "section": 'REST push: to one installationId',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"where":{\n"installationId":"57234d4c-752f-4e78-81ad-a6d14048020d"\n}\n"data": {\n"alert": "Hello From AVOS Cloud."\n}\n}',
        "matches": [],
    },
    {
        "section": 'REST push: to inactive users (updatedAt $lt a 2013 Date)',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"where":{\n"updatedAt":{\n"$lt":{"__type":"Date","iso":"2013-06-29T11:33:53.323Z"}\n}\n}\n"data": {\n"alert": "Hello From AVOS Cloud."\n}\n}',
        "matches": [],
    },
    {
        "section": 'REST push: by a query (injuryReports true)',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"where": {\n"injuryReports": true\n},\n"data": {\n"alert": "Willie Hayes injured by own pop fly."\n}\n}',
        "matches": [],
    },
    {
        "section": 'REST push: by location (owner $inQuery location $nearSphere $maxDistanceInMiles)',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"where": {\n"owner": {\n"$inQuery": {\n"location": {\n"$nearSphere": {\n"__type": "GeoPoint",\n"latitude": 30.0,\n"longitude": -20.0\n},\n"$maxDistanceInMiles": 1.0\n}\n}\n}\n},\n"data": {\n"alert": "Free hotdogs at the avoscloud concession stand!"\n}\n}',
        "matches": [],
    },
    {
        "section": 'REST push: expiration_time, an absolute time (2013, past)',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"expiration_time": "2013-12-04T00:51:13Z",\n"data": {\n"alert": "Season tickets on sale until December 4, 2013"\n}\n}',
        "matches": ['ios', 'android'],
    },
    {
        "section": 'REST push: push_time with expiration_interval (2013, past)',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"push_time": "2013-11-28T00:51:13Z",\n"expiration_interval": 518400,\n"data": {\n"alert": "Season tickets on sale until December 4, 2013"\n}\n}',
        "matches": ['ios', 'android'],
    },
    {
        "section": 'REST push: badge Increment, sound, title to the Mets channel',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"channels": [\n"Mets"\n],\n"data": {\n"alert": "The Mets scored! The game is now tied 1-1.",\n"badge": "Increment",\n"sound": "cheering.caf",\n"title": "Mets Score!"\n}\n}',
        "matches": [],
    },
    {
        "section": 'REST push: Android silent action (com.avos.UPDATE_STATUS)',
        "method": 'POST', "path": '/1.1/push',
        "headers": ['X-AVOSCloud-Application-Id: {{appid}}', 'X-AVOSCloud-Application-Key: {{appkey}}', 'Content-Type: application/json'],
        "body": '{\n"channels":[ "public"],\n"data": {\n"action": "com.avos.UPDATE_STATUS"\n"name": "avos cloud."\n}\n}',
        "matches": ['ios', 'android'],
    },
]
REQUESTS[11]["expired"] = True
REQUESTS[12]["expired"] = "maybe"
INVALID_JSON = {1, 6, 8, 9, 15}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def seed_requests(path):
    text = open(path, encoding="utf-8").read()
    found = []
    for block in re.findall(r"curl -X .*?https://cn\.avoscloud\.com\S*", text, re.S):
        args = shlex.split(block.replace("\\\n", " "))
        headers = [args[i + 1] for i, a in enumerate(args) if a == "-H"]
        bodies = [args[i + 1] for i, a in enumerate(args) if a == "-d"]
        found.append((args[2], args[-1][len(HOST):], headers, bodies[0] if bodies else None))
    return found


def send(base, method, path, headers, body=None):
    request = urllib.request.Request(base + path, method=method,
                                     data=body.encode("utf-8") if body is not None else None)
    for header in headers:
        name, value = header.split(": ", 1)
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            status, raw, location = response.status, response.read(), response.headers.get("Location")
    except urllib.error.HTTPError as error:
        status, raw, location = error.code, error.read(), error.headers.get("Location")
    try:
        answer = json.loads(raw)
    except ValueError:
        check(False, f"{method} {path}: HTTP {status}, the answer is not JSON: {raw[:200]!r}")
    check(isinstance(answer, dict), f"{method} {path}: HTTP {status}, the answer is not a JSON object: {answer}")
    return status, answer, location


def created(n, status, answer, statuses):
    check(status in statuses, f"request {n}: HTTP {status}, not {' or '.join(map(str, statuses))}: {answer}")
    check("error" not in answer, f"request {n}: error in the answer: {answer}")
    check(isinstance(answer.get("objectId"), str) and answer["objectId"], f"request {n}: objectId in {answer}")
    check(ISO.match(str(answer.get("createdAt"))), f"request {n}: createdAt in {answer}")


def main():
    args = sys.argv[1:]
    mode = "either"
    if "--json" in args:
        mode = args[args.index("--json") + 1]
        check(mode in ("either", "strict", "lenient"), f"--json {mode}: either, strict or lenient")
    if "--seed" in args:
        wanted = [(r["method"], r["path"], r["headers"], r["body"]) for r in REQUESTS]
        check(seed_requests(args[args.index("--seed") + 1]) == wanted, "the requests are not the seed's curl requests")

    base = os.environ["LEANCLOUD_API_SERVER"].rstrip("/")
    values = {"{{appid}}": os.environ["HERALD_LC_APP_ID"], "{{appkey}}": os.environ["HERALD_LC_APP_KEY"]}
    results, seen_invalid = [], set()
    for n, request in enumerate(REQUESTS, 1):
        headers = [h.replace("{{appid}}", values["{{appid}}"]).replace("{{appkey}}", values["{{appkey}}"])
                   for h in request["headers"]]
        status, answer, location = send(base, request["method"], request["path"], headers, request["body"])
        result = {"n": n, "section": request["section"], "method": request["method"], "path": request["path"],
                  "status": status, "answer": answer}
        if n in INVALID_JSON and "error" in answer:
            check(mode != "lenient", f"request {n} (invalid JSON) refused, but --json lenient: HTTP {status} {answer}")
            check(status == 400 and answer.get("code") == 107,
                  f"request {n} (invalid JSON): refused with HTTP {status} {answer}, not 400 code 107")
            result["outcome"] = "refused-107"
            seen_invalid.add("strict")
            results.append(result)
            continue
        if n in INVALID_JSON:
            check(mode != "strict", f"request {n} (invalid JSON) accepted, but --json strict: HTTP {status} {answer}")
            seen_invalid.add("lenient")
        if request["path"] == "/1.1/installations":
            created(n, status, answer, (200, 201))
            result["outcome"] = "created" if status == 201 else "updated"
            result["location"] = location
        elif request["method"] == "PUT":
            if "error" in answer:
                check(answer.get("code") == 101 and status == 404,
                      f"request {n}: PUT of an unknown installation answered HTTP {status} {answer}, not 404 code 101")
                result["outcome"] = "not-found-101"
            else:
                check(status == 200 and ISO.match(str(answer.get("updatedAt"))),
                      f"request {n}: HTTP {status}, updatedAt in {answer}")
                result["outcome"] = "updated"
        else:
            created(n, status, answer, (200, 201))
            result["outcome"] = "pushed"
            status, notification, _ = send(base, "GET", f"/1.1/tables/Notifications/{answer['objectId']}", headers)
            check(status == 200 and "error" not in notification,
                  f"request {n}: GET /1.1/tables/Notifications/{answer['objectId']}: HTTP {status} {notification}")
            check(notification.get("objectId") == answer["objectId"], f"request {n}: the notification's objectId")
            check(isinstance(notification.get("status"), str), f"request {n}: the notification's status")
            result["notification"] = notification
            result["matches"] = request["matches"]
            if "expired" in request:
                result["expired"] = request["expired"]
        results.append(result)
    check(len(seen_invalid) == 1, f"the invalid-JSON requests were treated differently: {sorted(seen_invalid)}")
    print(json.dumps({"json": seen_invalid.pop(), "requests": results}, ensure_ascii=False))


if __name__ == "__main__":
    main()
