#!/usr/bin/env python3
"""Sends a notification through Home Assistant's real mobile_app notify code to a push server.

Test-only harness for Herald's Home Assistant push relay. It imports Home Assistant from the
`homeassistant` wheel (in .python/homeassistant, which scripts/bootstrap makes), starts a real `HomeAssistant`
instance, registers one mobile_app device the way HA's registration endpoint stores it (a
config entry whose `app_data` holds `push_url` and `push_token`), sets up HA's mobile_app
notify service (`MobileAppNotificationService`) with notify's own `async_setup` and
`async_register_services`, and calls the `notify.mobile_app_<device>` service. So the JSON body
POSTed to the push URL, the way the answer is read, the log lines (including
`log_rate_limits`) and any exception are Home Assistant's own. (Like any notify call, the
message and title are Jinja templates, and a title of "Home Assistant" is dropped.)

What is set up by hand rather than by HA: the registration's config entry and
hass.data["mobile_app"] (no webhook/HTTP server, no storage), and mobile_app's package set-up,
which is skipped (see import_mobile_app_modules). Home Assistant 2024.3.3 on Python 3.11 (2025.1.4
on 3.12), pinned by python/homeassistant-py3XX.lock.

Usage:
  .python/homeassistant/bin/python3 scripts/ha-notify.py --push-url URL --push-token TOKEN [--app-id io.robbie.HomeAssistant]
      [--app-version 2024.1] [--os-version 17.0] [--webhook-id W] [--device-name NAME]
      --message M [--title T] [--data JSON] [--count N]

Prints ONE JSON object on stdout:
  {"results": [{"logs": [{"level": "WARNING", "message": "..."}], "exception": null}, ...]}
one result per send: every record logged at INFO or above under
`homeassistant.components.mobile_app` during that send, and the text of any exception the
service call raised (`"TypeName: text"`), else null. Exits 0 unless the harness itself fails.
"""
from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import logging
import sys
import tempfile
import traceback
from types import MappingProxyType

MOBILE_APP_LOGGER = "homeassistant.components.mobile_app"


class Collector(logging.Handler):
    """Keeps the records Home Assistant's mobile_app code logs."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.records: list[dict[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception as err:  # noqa: BLE001
            # A logging handler does not raise into the code that logged (logging's own handlers
            # print "--- Logging error ---" and go on), so neither does this one: the record is
            # kept with what could not be formatted.
            message = (
                f"<logging error: {type(err).__name__}: {err}; "
                f"msg={record.msg!r} args={record.args!r}>"
            )
        self.records.append({"level": record.levelname, "message": message})


def import_mobile_app_modules() -> None:
    """Makes mobile_app's notify, push_notification, util and const modules importable.

    The mobile_app package's __init__ (integration set-up, webhooks, HTTP views) imports the
    cloud integration, which imports alexa, google_assistant, camera and stream, whose
    requirements (hass-nabucasa, numpy, PyAV, ...) are far more than the notify code path needs.
    So the package is entered without running its __init__: a package module whose __path__ is
    mobile_app's own folder, from which the real submodules are then imported. mobile_app/util.py
    imports `homeassistant.components.cloud` at the top but uses it only in
    async_create_cloud_hook (cloudhooks for webhooks, not notifications); it gets an empty
    stand-in module. Nothing on the notify path is replaced.
    """
    import importlib.util
    import types

    import homeassistant.components as components

    def package(name: str) -> None:
        full = f"homeassistant.components.{name}"
        if full in sys.modules:
            return
        spec = importlib.util.find_spec(full)
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(f"{full} is not in the installed homeassistant wheel")
        module = types.ModuleType(full)
        module.__path__ = list(spec.submodule_search_locations)
        module.__package__ = full
        module.__file__ = spec.origin
        sys.modules[full] = module
        setattr(components, name, module)

    package("mobile_app")
    package("cloud")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--push-url", required=True)
    parser.add_argument("--push-token", required=True)
    parser.add_argument("--app-id", default="io.robbie.HomeAssistant")
    parser.add_argument("--app-version", default="2024.1")
    parser.add_argument("--os-version", default="17.0")
    parser.add_argument("--webhook-id", default="herald-test-webhook")
    parser.add_argument("--device-name", default="Herald Test Phone")
    parser.add_argument("--message", required=True)
    parser.add_argument("--title")
    parser.add_argument("--data", help="JSON object passed as the notify service's data")
    parser.add_argument("--count", type=int, default=1)
    args = parser.parse_args(argv)
    if args.data is not None:
        args.data = json.loads(args.data)
        if not isinstance(args.data, dict):
            parser.error("--data must be a JSON object")
    if args.count < 1:
        parser.error("--count must be at least 1")
    return args


async def run(args: argparse.Namespace, config_dir: str) -> dict:
    # homeassistant.core first: importing homeassistant.loader first is a circular import.
    from homeassistant.core import HomeAssistant
    from homeassistant import loader

    import_mobile_app_modules()
    from homeassistant.components.mobile_app import notify as mobile_app_notify
    from homeassistant.components.mobile_app.const import (
        DATA_CONFIG_ENTRIES,
        DATA_DELETED_IDS,
        DATA_DEVICES,
        DATA_PUSH_CHANNEL,
        DATA_STORE,
        DOMAIN,
    )
    from homeassistant.config_entries import ConfigEntry
    from homeassistant.util import slugify

    hass = HomeAssistant(config_dir)
    loader.async_setup(hass)
    await hass.async_start()

    # What RegistrationsView (mobile_app/http_api.py) stores for a registration whose
    # app_data has a push_url and push_token: the data of a mobile_app config entry.
    registration = {
        "app_data": {"push_token": args.push_token, "push_url": args.push_url},
        "app_id": args.app_id,
        "app_name": "Home Assistant",
        "app_version": args.app_version,
        "device_id": "herald-test-device",
        "device_name": args.device_name,
        "manufacturer": "Apple" if "robbie" in args.app_id else "Google",
        "model": "Test",
        "os_name": "iOS" if "robbie" in args.app_id else "Android",
        "os_version": args.os_version,
        "supports_encryption": False,
        "user_id": "herald-test-user",
        "webhook_id": args.webhook_id,
    }
    entry_arguments = {
        "version": 1,
        "minor_version": 1,
        "domain": DOMAIN,
        "title": args.device_name,
        "data": registration,
        "source": "registration",
    }
    # Later releases (2025.1, for Python 3.12) also require these, as a new registration has them.
    accepted = inspect.signature(ConfigEntry).parameters
    for name, value in (("discovery_keys", MappingProxyType({})), ("options", {}), ("unique_id", None)):
        if name in accepted:
            entry_arguments[name] = value
    entry = ConfigEntry(**entry_arguments)
    # mobile_app's async_setup and async_setup_entry fill hass.data[DOMAIN] like this.
    hass.data[DOMAIN] = {
        DATA_CONFIG_ENTRIES: {args.webhook_id: entry},
        DATA_DELETED_IDS: [],
        DATA_DEVICES: {},
        DATA_PUSH_CHANNEL: {},
        DATA_STORE: None,
    }

    # What notify's legacy platform set-up does for the mobile_app platform.
    service = await mobile_app_notify.async_get_service(hass, {}, {})
    await service.async_setup(hass, "mobile_app", "mobile_app")
    await service.async_register_services()
    service_name = slugify(f"mobile_app_{args.device_name}")

    collector = Collector()
    logger = logging.getLogger(MOBILE_APP_LOGGER)
    logger.setLevel(logging.INFO)
    logger.addHandler(collector)
    logger.propagate = False

    service_data: dict = {"message": args.message}
    if args.title is not None:
        service_data["title"] = args.title
    if args.data is not None:
        service_data["data"] = args.data

    results = []
    try:
        for _ in range(args.count):
            collector.records = []
            exception = None
            try:
                await hass.services.async_call(
                    "notify", service_name, dict(service_data), blocking=True
                )
            except Exception as err:  # noqa: BLE001 - reported, not handled
                exception = f"{type(err).__name__}: {err}"
            results.append({"logs": collector.records, "exception": exception})
    finally:
        logger.removeHandler(collector)
        await hass.async_stop(force=True)
    return {"results": results}


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    # Home Assistant's other loggers (start-up, loader) go to stderr at WARNING and above.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        with tempfile.TemporaryDirectory(prefix="ha-notify-") as config_dir:
            output = asyncio.run(run(args, config_dir))
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return 1
    json.dump(output, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
