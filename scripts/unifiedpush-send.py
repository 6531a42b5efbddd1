#!/usr/bin/env python3
"""Sends one push message to a UnifiedPush / Web Push endpoint with pywebpush, as an app server does.

Test-only peer of Herald's UnifiedPush endpoints (RFC 8030): pywebpush encrypts the message for the
subscription's keys (RFC 8291 aes128gcm, through http_ece), signs a VAPID header (RFC 8292) with a
key made here, and POSTs it with TTL, Urgency and Topic: what Mastodon and other app servers built
on pywebpush send. Runs in .python/tools (scripts/bootstrap), pinned by python/tools-py3XX.lock.

Usage:
  .python/tools/bin/python3 scripts/unifiedpush-send.py --endpoint URL --p256dh B64URL --auth B64URL
      --message TEXT [--ttl SECONDS] [--urgency low] [--topic T]

Prints ONE JSON object on stdout: {"status": 201, "location": "...", "body": "..."}; a refusal
(pywebpush's WebPushException) prints the status it carried. Exits 0 unless the harness fails.
"""
from __future__ import annotations

import argparse
import json
import sys

from py_vapid import Vapid02
from pywebpush import WebPushException, webpush


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--p256dh", required=True)
    parser.add_argument("--auth", required=True)
    parser.add_argument("--message", required=True)
    parser.add_argument("--ttl", type=int, default=60)
    parser.add_argument("--urgency")
    parser.add_argument("--topic")
    arguments = parser.parse_args()

    vapid = Vapid02()
    vapid.generate_keys()
    headers = {}
    if arguments.urgency:
        headers["Urgency"] = arguments.urgency
    if arguments.topic:
        headers["Topic"] = arguments.topic
    try:
        response = webpush(
            subscription_info={
                "endpoint": arguments.endpoint,
                "keys": {"p256dh": arguments.p256dh, "auth": arguments.auth},
            },
            data=arguments.message,
            vapid_private_key=vapid,
            vapid_claims={"sub": "mailto:ops@example.com"},
            ttl=arguments.ttl,
            headers=headers,
            content_encoding="aes128gcm",
        )
    except WebPushException as error:
        response = error.response
        if response is None:
            print(json.dumps({"status": None, "error": str(error)}))
            return 0
    print(
        json.dumps(
            {"status": response.status_code, "location": response.headers.get("Location"), "body": response.text}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
