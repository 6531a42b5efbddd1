#!/usr/bin/env python3
"""Sends one notification through Apprise to an ntfy or Gotify URL, as the tools built on it do.

Test-only peer of Herald's ntfy and Gotify publish endpoints: Apprise (apprise.Apprise(), the library
behind Home Assistant's apprise notify platform, Uptime Kuma's Apprise notifications and many
scripts) parses the URL and POSTs what its ntfy:// / ntfys:// notifier sends (JSON to the server's
root with a "topic" field, X-Priority, X-Tags, X-Click, X-Delay, X-Icon headers; Basic or Bearer
authorization; an attachment as the raw body to /TOPIC) or its gotify:// / gotifys:// notifier (JSON
to /message with X-Gotify-Key). The URL's own query options carry the rest (?priority=high&tags=a,b
&click=...&delay=30min, ?token=..., ?format=markdown, ?verify=no). Runs in .python/tools
(scripts/bootstrap), pinned by python/tools-py3XX.lock.

Usage:
  .python/tools/bin/python3 scripts/apprise-send.py --url URL --body TEXT [--title T]
      [--type info|success|warning|failure] [--attach URL]...

Prints ONE JSON object on stdout: {"ok": true, "log": "..."}: ok is Apprise's own verdict (an ntfy
or Gotify server that answered 200 to every request), log its log lines at DEBUG level, with the
URL's password and token shortened. A URL Apprise cannot parse is {"ok": false} with the log saying
why. Exits 0 unless the harness fails.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import warnings

import apprise
from urllib3.exceptions import InsecureRequestWarning

TYPES = ("info", "success", "warning", "failure")


def shortened(secret: str) -> str:
    """The first characters of a secret and an ellipsis (none of it when it is short)."""
    return secret[:3] + "…" if len(secret) > 8 else "…"


def redact(text: str, secrets: set[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, shortened(secret))
    # Whatever else looks like a credential in a logged header.
    text = re.sub(r"((?:Bearer|Basic) )([^\s'\",}]{9,})", lambda m: m.group(1) + shortened(m.group(2)), text)
    text = re.sub(
        r"('X-Gotify-Key': ')([^']{9,})", lambda m: m.group(1) + shortened(m.group(2)), text, flags=re.IGNORECASE
    )
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--body", required=True)
    parser.add_argument("--title", default="")
    parser.add_argument("--type", choices=TYPES, default="info")
    parser.add_argument("--attach", action="append", default=[])
    arguments = parser.parse_args()
    # ?verify=no (a test server's own certificate): Apprise's log says cert_verify=False already.
    warnings.simplefilter("ignore", InsecureRequestWarning)

    notifier = apprise.Apprise()
    ok = False
    secrets: set[str] = set()
    with apprise.LogCapture(level=logging.DEBUG, fmt="%(levelname)s - %(message)s") as captured:
        if notifier.add(arguments.url):
            for service in notifier:
                for name in ("password", "token"):
                    value = getattr(service, name, None)
                    if isinstance(value, str) and value:
                        secrets.add(value)
            result = notifier.notify(
                body=arguments.body,
                title=arguments.title,
                notify_type=arguments.type,
                attach=arguments.attach or None,
            )
            ok = bool(result)
        log = captured.getvalue()
    print(json.dumps({"ok": ok, "log": redact(log, secrets).rstrip("\n")}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
