#!/usr/bin/env python3
"""Drives Herald's LeanCloud-compatible push API with LeanCloud's own Python SDK (leancloud 3.0.2,
in .python/leancloud, made by scripts/bootstrap), as an app server written for LeanCloud would:

  .python/leancloud/bin/python3 scripts/leancloud-sdk-test.py

Environment:
  LEANCLOUD_API_SERVER   Herald's base URL, e.g. http://127.0.0.1:<port> (the SDK appends /1.1/...)
  HERALD_LC_APP_ID       the app's id (X-LC-Id)
  HERALD_LC_APP_KEY      its app key
  HERALD_LC_MASTER_KEY   its master key
  HERALD_LC_FORBIDDEN_CODE  the error code for a master-only operation made with the app key (119)
  HERALD_LC_WAIT_SECONDS    how long to poll the pushes' notifications for "done" (20; the scheduled
                            push's 6 s come on top)

`--check` only imports the SDK (exit 0 when it can, for a test's availability check).

What it expects of the server, as LeanCloud answers (see the SDK's client.check_error: the HTTP
status is ignored, an answer is an error exactly when its JSON body has "error"):
  - every request signed with X-LC-Sign: md5(<ms timestamp><key>) hex, ",<timestamp>" and ",master"
    for the master key; no X-LC-Key is ever sent. A wrong key answers {"code": 401, "error": ...}.
  - POST /1.1/classes/_Installation?fetchWhenSave=false|true -> {"objectId", "createdAt"} (the whole
    object with fetchWhenSave=true); PUT /1.1/classes/_Installation/<id>?fetchWhenSave=... with
    AddUnique/Remove/Increment operations -> {"updatedAt"} (plus the changed fields with
    fetchWhenSave=true: the Increment check reads the badge from that answer); GET of the object;
    DELETE (with a "{}" body) -> {}.
  - GET /1.1/classes/_Installation?where=<json>&limit&skip&order&keys[&count=1] -> {"results": [...]}
    (and "count"); with the app key the listing is refused with HERALD_LC_FORBIDDEN_CODE.
  - POST /1.1/batch {"requests": [{"method", "path": "/1.1/classes/...", "body"}]} -> a JSON array of
    {"success": {...}} in order.
  - POST /1.1/push (master key) -> {"objectId", "createdAt"}; GET /1.1/tables/Notifications/<id> -> the
    _Notification, whose "status" is "in queue" until the push is finished (a push_time 6 s ahead
    too: every read before it says "in queue"), then "done", or an error message (a sentence, not one
    of those two words) for a push that expired; "subscribers" is the number of devices it reached.
  - POST /1.1/push with the app key while client push is off -> {"code": HERALD_LC_FORBIDDEN_CODE,
    "error": <a message naming the setting to turn on>}.
    GET /1.1/classes/_Notification?where&order&limit[&count=1] -> {"results": [...]} (and "count").

Exits non-zero at the first failed check (FAILED: ... on stderr). On success prints one JSON object:
the installations (object ids, APNs token, FCM registration id, installationId, the badge at the
end), and per push its notification id, the data sent, which installations must receive it
("expect": "ios", "android"), the APNs server it must go to ("apns": "development" for prod "dev",
else "production": the SDK sends no "prod" at all by default), and the fetched status, subscribers,
devices, successes and errors ("statuses": every status the scheduled push was read with, in
order) — for the caller to check what its mock APNs and FCM servers received; "errors" has the
codes of the refused calls and the message of the refused app-key push.
"""

import datetime
import json
import os
import random
import string
import sys
import time
import uuid

VERSION = "3.0.2"


try:
    import leancloud
    from leancloud import LeanCloudError, push
except ImportError as error:
    print(f"FAILED: {sys.executable} cannot import leancloud {VERSION} ({error}): run scripts/bootstrap,"
          " then this with .python/leancloud/bin/python3", file=sys.stderr)
    sys.exit(2)

if len(sys.argv) > 1 and sys.argv[1] == "--check":
    sys.exit(0)

# The SDK builds "<server>/1.1/<path>"; a trailing slash would make "//1.1".
os.environ["LEANCLOUD_API_SERVER"] = os.environ["LEANCLOUD_API_SERVER"].rstrip("/")
APP_ID = os.environ["HERALD_LC_APP_ID"]
APP_KEY = os.environ["HERALD_LC_APP_KEY"]
MASTER_KEY = os.environ["HERALD_LC_MASTER_KEY"]
FORBIDDEN_CODE = int(os.environ.get("HERALD_LC_FORBIDDEN_CODE", "119"))
WAIT_SECONDS = float(os.environ.get("HERALD_LC_WAIT_SECONDS", "20"))

Installation = leancloud.Installation
Query = leancloud.Query


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def step(what, call, *args, **kwargs):
    """Runs one SDK call; any exception fails the check `what`."""
    try:
        return call(*args, **kwargs)
    except LeanCloudError as error:
        check(False, f"{what}: LeanCloudError [{error.code}] {error.error}")
    except Exception as error:  # the SDK raises JSONDecodeError, KeyError... on answers it cannot read
        check(False, f"{what}: {type(error).__name__}: {error}")


def expect_error(code, what, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except LeanCloudError as error:
        check(error.code == code, f"{what}: expected error code {code}, got [{error.code}] {error.error}")
        return error
    except Exception as error:
        check(False, f"{what}: expected LeanCloudError {code}, got {type(error).__name__}: {error}")
    check(False, f"{what}: expected error code {code}, got success")


def as_app(master=False):
    """Signs the following requests with the master key (",master") or the app key."""
    leancloud.use_master_key(master)


def fetched(object_id):
    installation = Installation.create_without_data(object_id)
    step(f"fetch installation {object_id}", installation.fetch)
    check(installation.get("objectId") == object_id, f"fetch installation {object_id}: objectId in the answer")
    return installation


def apns_token():
    return "".join(random.choice("0123456789abcdef") for _ in range(64))


def fcm_token():
    alphabet = string.ascii_letters + string.digits + "-_"
    part = lambda n: "".join(random.choice(alphabet) for _ in range(n))
    return f"{part(22)}:APA91b{part(134)}"


def ids(objects):
    return sorted(o.id for o in objects)


def main():
    run = uuid.uuid4().hex[:10]
    channel, news = f"herald{run}", f"news{run}"
    leancloud.init(APP_ID, app_key=APP_KEY, master_key=MASTER_KEY)
    as_app()

    # Installations, as a device or an app server holding the app key saves them.
    token = apns_token()
    ios = Installation()
    ios.set({"deviceType": "ios", "deviceToken": token, "channels": [channel], "badge": 5, "timeZone": "Asia/Shanghai"})
    step("save the iOS installation", ios.save)
    check(ios.id and ios.created_at is not None, f"iOS installation: objectId and createdAt ({ios.id}, {ios.created_at})")
    time.sleep(0.02)  # the order checks below sort on createdAt, which has millisecond precision

    registration_id, installation_id = fcm_token(), str(uuid.uuid4())
    android = Installation()
    android.set({"deviceType": "android", "installationId": installation_id, "registrationId": registration_id,
                 "vendor": "fcm", "channels": [channel]})
    step("save the Android installation with fetchWhenSave", android.save, fetch_when_save=True)
    check(android.id and android.created_at is not None, "Android installation: objectId and createdAt")
    check(android.id != ios.id, "two installations, two objectIds")
    again = fetched(android.id)
    for key, value in [("deviceType", "android"), ("installationId", installation_id),
                       ("registrationId", registration_id), ("vendor", "fcm"), ("channels", [channel])]:
        check(again.get(key) == value, f"Android installation read back: {key} = {again.get(key)!r}, not {value!r}")
    check(fetched(ios.id).get("deviceToken") == token, "iOS installation read back: deviceToken")

    # Channels: AddUnique (twice: no duplicate), then Remove.
    ios.add_unique("channels", news)
    step("add_unique a channel", ios.save)
    ios.add_unique("channels", news)
    step("add_unique the same channel again", ios.save)
    channels = fetched(ios.id).get("channels")
    check(sorted(channels or []) == sorted([channel, news]), f"channels after AddUnique: {channels}")
    ios.remove("channels", news)
    step("remove a channel", ios.save)
    channels = fetched(ios.id).get("channels")
    check(channels == [channel], f"channels after Remove: {channels}")

    # Increment, on an object that does not know the badge: only the server's answer
    # (fetchWhenSave=true) can say it is 6.
    counter = Installation.create_without_data(ios.id)
    counter.increment("badge", 1)
    step("increment the badge with fetchWhenSave", counter.save, fetch_when_save=True)
    check(counter.get("badge") == 6, f"badge from the fetchWhenSave answer: {counter.get('badge')}, not 6")
    check(fetched(ios.id).get("badge") == 6, "badge read back after Increment")

    # 003: an installation marked invalid is valid again once the app saves it (the SDK's save is
    # PUT /1.1/classes/_Installation/<id>); the master key changes valid only by setting it.
    as_app(master=True)
    marked = Installation.create_without_data(ios.id)
    marked.set("valid", False)
    step("mark the iOS installation invalid (master key)", marked.save)
    check(fetched(ios.id).get("valid") is False, "valid after the master key set it false")
    edited = Installation.create_without_data(ios.id)
    edited.set("appVersion", "1.9")
    step("a master-key save that does not set valid", edited.save)
    check(fetched(ios.id).get("valid") is False, "a master-key save without valid leaves it invalid")
    as_app()
    opened = Installation.create_without_data(ios.id)
    opened.set("appVersion", "2.0")
    step("the app saves its installation (app key)", opened.save)
    check(fetched(ios.id).get("valid") is True, "an installation the app updated is valid again")

    # A custom field on both, saved in one batch, then queried.
    ios.set("herald_run", run)
    ios.set("scores", True)
    android.set("herald_run", run)
    step("save_all (POST /1.1/batch)", Installation.save_all, [ios, android])
    as_app(master=True)
    query = lambda: Query(Installation).equal_to("herald_run", run)
    check(ids(step("query the custom field", query().find)) == sorted([ios.id, android.id]), "query on herald_run")
    check(step("count the custom field", query().count) == 2, "count on herald_run")
    found = step("query custom field and deviceType", query().equal_to("deviceType", "android").find)
    check(ids(found) == [android.id], "query on herald_run and deviceType android")
    found = step("query a boolean field", query().equal_to("scores", True).find)
    check(ids(found) == [ios.id], "query on scores = true")

    # Queries with the master key: where on channels, count, order, limit, skip, keys.
    by_channel = lambda: Query(Installation).equal_to("channels", channel)
    check(ids(step("query channels", by_channel().find)) == sorted([ios.id, android.id]), "query on channels")
    check(step("count channels", by_channel().count) == 2, "count on channels")
    first = step("query order/limit", by_channel().ascending("createdAt").limit(1).find)
    check(ids(first) == [ios.id], "order=createdAt&limit=1 gives the first saved")
    second = step("query order/skip", by_channel().ascending("createdAt").skip(1).find)
    check(ids(second) == [android.id], "order=createdAt&skip=1 gives the second")
    newest = step("query descending", by_channel().descending("createdAt").first)
    check(newest.id == android.id, "order=-createdAt first")
    keys = step("query keys", by_channel().equal_to("deviceType", "ios").select("deviceType").find)
    check(len(keys) == 1 and keys[0].get("deviceType") == "ios" and keys[0].get("deviceToken") is None,
          "keys=deviceType returns deviceType and not deviceToken")
    both = Query.or_(Query(Installation).equal_to("deviceToken", token),
                     Query(Installation).equal_to("installationId", installation_id))
    check(ids(step("query $or", both.find)) == sorted([ios.id, android.id]), "$or of deviceToken and installationId")
    check(step("count $in/$exists", Query(Installation).contained_in("channels", [channel, "nobody"])
               .exists("deviceToken").count) == 1, "channels $in and deviceToken $exists")

    # Delete: a throwaway installation.
    as_app()
    throwaway = Installation()
    throwaway.set({"deviceType": "ios", "deviceToken": apns_token(), "channels": [f"gone{run}"]})
    step("save a throwaway installation", throwaway.save)
    step("destroy it", throwaway.destroy)
    as_app(master=True)
    check(step("count the destroyed one", Query(Installation).equal_to("channels", f"gone{run}").count) == 0,
          "a destroyed installation is gone")

    # Errors: a master-only operation with the app key, then a wrong app key.
    as_app()
    forbidden = expect_error(FORBIDDEN_CODE, "listing installations with the app key",
                             Query(Installation).equal_to("channels", channel).find)
    refused_push = expect_error(FORBIDDEN_CODE, "a push with the app key (client push off)",
                                push.send, {"alert": f"not sent {run}"}, channels=[channel])
    check("client_push" in (refused_push.error or ""),
          f"the refused push's message names the setting to turn on: {refused_push.error!r}")
    leancloud.init(APP_ID, app_key="wrong" + APP_KEY)
    as_app()
    stranger = Installation()
    stranger.set({"deviceType": "ios", "deviceToken": apns_token()})
    unauthorized = expect_error(401, "a wrong app key", stranger.save)
    leancloud.init(APP_ID, app_key=APP_KEY, master_key=MASTER_KEY)
    as_app(master=True)

    # Pushes, with the master key.
    now = datetime.datetime.now(datetime.timezone.utc)
    mine = lambda: Query(Installation).equal_to("herald_run", run)
    pushes = {}

    def send(name, expect, data, **kwargs):
        notification = step(f"push {name}", push.send, data, **kwargs)
        check(notification.id, f"push {name}: objectId in the answer")
        pushes[name] = {"objectId": notification.id, "data": data, "expect": expect,
                        "apns": "development" if kwargs.get("prod") == "dev" else "production"}

    # First the scheduled push, 6 s ahead: it is read at once (before its push time) and again
    # after the others, until it is done.
    push_time = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=6)
    send("scheduled", ["ios", "android"], {"alert": f"scheduled {run}"}, channels=[channel], push_time=push_time)
    statuses = []

    def read_scheduled():
        read_at = datetime.datetime.now(datetime.timezone.utc)
        notification = push.Notification.create_without_data(pushes["scheduled"]["objectId"])
        step("fetch the scheduled notification", notification.fetch)
        statuses.append(notification.get("status"))
        if read_at < push_time:
            check(statuses[-1] == "in queue",
                  f"the scheduled push read before its push time: status {statuses[-1]!r}, not 'in queue'")
        return notification

    read_scheduled()
    check(statuses == ["in queue"], f"the scheduled push was read before its push time: {statuses}")
    send("channel", ["ios", "android"], {"alert": f"channel {run}", "title": "Herald"}, channels=[channel])
    where = (mine().contained_in("deviceType", ["ios", "android"]).exists("deviceToken")
             .less_than("updatedAt", now + datetime.timedelta(hours=1)))
    send("where", ["ios"], {"alert": f"where {run}"}, where=where)
    send("sandbox", ["ios"], {"alert": f"sandbox {run}"}, where=mine().equal_to("deviceType", "ios"), prod="dev")
    send("expired", [], {"alert": f"expired {run}"}, channels=[channel],
         expiration_time=now - datetime.timedelta(hours=1))
    send("silent", ["android"], {"action": "com.example.UPDATE", "extra": "x"},
         where=mine().equal_to("deviceType", "android"))
    send("increment", ["ios"], {"alert": f"increment {run}", "badge": "Increment", "sound": "cheering.caf"},
         where=mine().equal_to("deviceType", "ios"))

    # The notifications: each reads "in queue" until it is finished, then "done"; the expired one an
    # error message. The scheduled one is read until its push time has passed and it is done.
    deadline = time.monotonic() + WAIT_SECONDS + 6
    for name, sent in pushes.items():
        while True:
            if name == "scheduled":
                notification = read_scheduled()
            else:
                notification = push.Notification.create_without_data(sent["objectId"])
                step(f"fetch the {name} notification", notification.fetch)
            status = notification.get("status")
            check(isinstance(status, str) and status, f"{name} notification: status {status!r}")
            if status != "in queue":
                break
            check(time.monotonic() < deadline, f"{name} notification: still 'in queue' after {WAIT_SECONDS:g} s")
            time.sleep(0.2)
        if name == "expired":
            check(status not in ("done", "in queue") and " " in status and status.endswith("."),
                  f"the expired notification's status is an error message: {status!r}")
        else:
            check(status == "done", f"{name} notification: status {status!r}, not 'done'")
        sent.update({key: notification.get(key)
                     for key in ("status", "subscribers", "devices", "successes", "errors")})
    pushes["scheduled"]["statuses"] = statuses
    check(len(statuses) >= 2 and set(statuses[:-1]) == {"in queue"} and statuses[-1] == "done",
          f"the scheduled push read 'in queue' then 'done', nothing else: {statuses}")
    as_app()
    notification = push.Notification.create_without_data(pushes["channel"]["objectId"])
    step("fetch a notification with the app key", notification.fetch)
    as_app(master=True)

    # _Notification queries (master key), which Herald's store runs: where, count, order.
    ours = lambda: Query("_Notification").contained_in("objectId", [sent["objectId"] for sent in pushes.values()])
    scheduled_id = pushes["scheduled"]["objectId"]
    check(step("count the finished scheduled notification",
               ours().equal_to("status", "done").equal_to("objectId", scheduled_id).count) == 1,
          "_Notification where status = done finds the scheduled push once it is done")
    widest = step("query the notification that reached most devices", ours().descending("devices").first)
    check(widest.get("devices") == 2 and widest.id in (pushes["channel"]["objectId"], scheduled_id),
          "_Notification order=-devices: a channel push (2 devices) first")
    narrowest = step("query the notification that reached fewest devices", ours().ascending("devices").first)
    check(narrowest.get("devices") == 1, "_Notification order=devices: a one-device push first")

    print(json.dumps({
        "run": run,
        "channel": channel,
        "installations": {
            "ios": {"objectId": ios.id, "deviceToken": token, "badge": fetched(ios.id).get("badge")},
            "android": {"objectId": android.id, "registrationId": registration_id,
                        "installationId": installation_id},
        },
        "notifications": pushes,
        "errors": {"forbidden": forbidden.code, "unauthorized": unauthorized.code, "push": refused_push.code,
                   "pushMessage": refused_push.error},
    }, default=str))


if __name__ == "__main__":
    main()
