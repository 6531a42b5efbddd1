#!/usr/bin/env python3
"""Drives Herald's web console in a real browser (Debian's chromium through chromium-driver and
Selenium) against a running Herald, and saves a screenshot of each page.

Environment:
  HERALD_URL             the server, e.g. http://127.0.0.1:8080 (required)
  HERALD_SERVER_KEY      the app's server key (required)
  HERALD_CONSOLE_EXPECT  JSON of what the seeded data must show (required):
                         {"total": 4, "user": ["alice", 2], "channel": ["news", 3],
                          "platform": ["android", 1], "invalid": 1, "history": "<installation id>",
                          "history_outcomes": ["delivered"], "device": "<installation id>",
                          "users": "alice, bob", "users_count": 3, "failure_reason": "BadDeviceToken",
                          "provider": "apns"}
  HERALD_CONSOLE_SCREENSHOTS  the artifact folder (default .build/console-screenshots)
  HERALD_CHROMIUM, HERALD_CHROMEDRIVER  the browser and driver (default /usr/bin/chromium, /usr/bin/chromedriver)

Prints "console browser test passed" and exits 0, or says what failed and exits 1 (2: the browser
or Selenium is missing).
"""
import re
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.request

# Selenium comes from .python/tools (scripts/bootstrap): run this with .python/tools/bin/python3.
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError as error:
    print(f"{sys.executable} cannot import Selenium ({error}): run scripts/bootstrap, then this with"
          " .python/tools/bin/python3", file=sys.stderr)
    sys.exit(2)

URL = os.environ["HERALD_URL"].rstrip("/")
KEY = os.environ["HERALD_SERVER_KEY"]
EXPECT = json.loads(os.environ["HERALD_CONSOLE_EXPECT"])
SHOTS = os.environ.get("HERALD_CONSOLE_SCREENSHOTS") or os.path.join(".build", "console-screenshots")
CHROMIUM = os.environ.get("HERALD_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = os.environ.get("HERALD_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"
for path, what in [(CHROMIUM, "chromium"), (DRIVER, "chromedriver (Debian package chromium-driver)")]:
    if not os.access(path, os.X_OK):
        print(f"{what} not found at {path}; run scripts/bootstrap (chromium, chromium-driver)", file=sys.stderr)
        sys.exit(2)


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


options = webdriver.ChromeOptions()
options.binary_location = CHROMIUM
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--disable-gpu", "--no-first-run", "--force-device-scale-factor=1"]:
    options.add_argument(argument)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
wait = WebDriverWait(driver, 15)
os.makedirs(SHOTS, exist_ok=True)
shots = []


def shot(name):
    path = os.path.join(SHOTS, name + ".png")
    driver.save_screenshot(path)
    shots.append(path)


def by_id(element_id):
    return driver.find_element(By.ID, element_id)


def visible(element_id):
    wait.until(lambda d: d.find_element(By.ID, element_id).is_displayed(), f"#{element_id} is not shown")
    return by_id(element_id)


def rows(table_id):
    return driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")


def wait_rows(table_id, predicate, message):
    try:
        WebDriverWait(driver, 15).until(lambda d: predicate(rows(table_id)))
    except Exception:
        texts = [row.text for row in rows(table_id)]
        raise Failure(f"{message}; rows: {texts}")
    return rows(table_id)


def cells(row):
    return [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]


def set_field(element_id, value):
    field = by_id(element_id)
    field.clear()
    if value:
        field.send_keys(value)


def search(user="", channel="", platform="", valid=""):
    set_field("filter-user", user)
    set_field("filter-channel", channel)
    Select(by_id("filter-platform")).select_by_value(platform)
    Select(by_id("filter-valid")).select_by_value(valid)
    by_id("search-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()


def audience_is(count):
    try:
        WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "audience-count").text == str(count))
    except Exception:
        raise Failure(f"the live audience shows {by_id('audience-count').text!r} "
                      f"({by_id('audience-detail').text!r}), not {count}")


def main():
    # Sign-in: a wrong key is refused on the page; the server key signs in.
    driver.get(URL + "/console")
    visible("page-sign-in")
    shot("01-sign-in")
    by_id("server-key").send_keys("hsk_not-the-key-0123456789")
    by_id("sign-in-form").find_element(By.CSS_SELECTOR, "button").click()
    error = visible("sign-in-error")
    check("not valid" in error.text, f"a wrong key shows {error.text!r}")
    set_field("server-key", KEY)
    by_id("sign-in-form").find_element(By.CSS_SELECTOR, "button").click()
    visible("page-installations")
    check(by_id("session-app").text != "", "the signed-in app is not shown")
    cookies = {cookie["name"]: cookie for cookie in driver.get_cookies()}
    session = cookies.get("herald_console")
    check(session is not None, f"no session cookie kept by the browser: {list(cookies)}")
    check(session.get("httpOnly") is True, "the session cookie is not HttpOnly")
    check(session.get("secure") is True, "the session cookie is not Secure")
    check(session.get("sameSite") == "Strict", f"the session cookie is SameSite={session.get('sameSite')}")
    check(KEY not in json.dumps(driver.get_cookies()), "the server key is in a cookie")

    # Installations: every filter renders the matching rows.
    wait_rows("installations-table", lambda r: len(r) == EXPECT["total"], f"not {EXPECT['total']} installations")
    shot("02-installations")
    user, count = EXPECT["user"]
    search(user=user)
    found = wait_rows("installations-table", lambda r: len(r) == count and all(cells(x)[1] == user for x in r),
                      f"user {user}: not {count} rows of {user}")
    channel, count = EXPECT["channel"]
    search(channel=channel)
    wait_rows("installations-table", lambda r: len(r) == count and all(channel in cells(x)[4] for x in r),
              f"channel {channel}: not {count} rows")
    platform, count = EXPECT["platform"]
    search(platform=platform)
    wait_rows("installations-table", lambda r: len(r) == count and all(cells(x)[2] == platform for x in r),
              f"platform {platform}: not {count} rows")
    search(valid="false")
    wait_rows("installations-table", lambda r: len(r) == EXPECT["invalid"] and all(cells(x)[6] == "invalid" for x in r),
              f"not {EXPECT['invalid']} invalid rows")
    shot("03-installations-invalid")
    search()
    wait_rows("installations-table", lambda r: len(r) == EXPECT["total"], "the cleared search does not list all")

    # One device's history.
    driver.find_element(By.CSS_SELECTOR, f"tr[data-id='{EXPECT['history']}'] td a").click()
    visible("page-history")
    check(by_id("history-id").text == EXPECT["history"], "the history page names another device")
    wait_rows("history-table", lambda r: len(r) >= len(EXPECT["history_outcomes"]), "no history rows")
    outcomes = [cells(row)[3] for row in rows("history-table")]
    check(outcomes == EXPECT["history_outcomes"], f"history outcomes {outcomes}, not {EXPECT['history_outcomes']}")
    check("Platform" in by_id("history-facts").text, "the device's facts are not shown")
    shot("04-history")

    # A test push to one device, from its history page.
    by_id("history-send").click()
    visible("page-send")
    check(by_id("send-installation").get_attribute("value") == EXPECT["history"], "the device is not prefilled")
    audience_is(1)
    set_field("send-title", "Console test to a device")
    by_id("send-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    result = visible("send-result")
    device_notification = result.get_attribute("data-id")
    check(device_notification, f"the send shows no id: {result.text!r}")
    shot("05-send-device")

    # A test push to a query: the live audience count follows the typing.
    driver.find_element(By.CSS_SELECTOR, "input[name=mode][value=query]").click()
    visible("target-query")
    Select(by_id("send-audience")).select_by_value("all")
    audience_is(EXPECT["total"] - EXPECT["invalid"])
    Select(by_id("send-audience")).select_by_value("user_ids")
    set_field("send-value", EXPECT["users"].split(",")[0])
    audience_is(EXPECT["user"][1])
    set_field("send-value", EXPECT["users"])
    audience_is(EXPECT["users_count"])
    set_field("send-platforms", "ios")
    audience_is(EXPECT["users_ios"])
    set_field("send-platforms", "")
    audience_is(EXPECT["users_count"])
    set_field("send-title", "Console test to a query")
    shot("06-send-query")
    by_id("send-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda d: d.find_element(By.ID, "send-result").get_attribute("data-id") not in (None, "", device_notification),
               "the query send shows no new id")
    query_notification = by_id("send-result").get_attribute("data-id")

    # Notifications with status and counts, and the chart.
    deadline = time.time() + 30
    while True:
        driver.find_element(By.CSS_SELECTOR, "nav a[data-page=notifications]").click()
        visible("page-notifications")
        table = wait_rows("notifications-table", lambda r: len(r) >= 2, "no notifications listed")
        by_id_row = {row.get_attribute("data-id"): cells(row) for row in table}
        done = all(by_id_row.get(n, [""] * 4)[3] == "done" for n in (device_notification, query_notification))
        if done or time.time() > deadline:
            break
        driver.get(URL + "/console#/installations")
        time.sleep(0.5)
    for notification, title, targeted in [(device_notification, "Console test to a device", 1),
                                          (query_notification, "Console test to a query", EXPECT["users_count"])]:
        row = by_id_row.get(notification)
        check(row is not None, f"notification {notification} is not listed")
        check(row[2] == title and row[3] == "done", f"notification row {row}")
        check(row[4] == str(targeted), f"notification {title!r} targeted {row[4]}, not {targeted}")
        check(int(row[5]) + int(row[6]) + int(row[7]) == targeted, f"counts of {title!r} do not add up: {row}")
    bars = driver.find_elements(By.CSS_SELECTOR, "#chart svg rect")
    check(len(bars) >= 1, "the chart has no bars")
    legend = {item.get_attribute("data-key"): item.text for item in driver.find_elements(By.CSS_SELECTOR, "#chart-legend li")}
    check(legend.get("sent", "").startswith("sent ") and legend["sent"] != "sent 0", f"chart legend {legend}")
    shot("07-notifications")

    # Provider health and dialects.
    driver.find_element(By.CSS_SELECTOR, "nav a[data-page=health]").click()
    visible("page-health")
    wait.until(lambda d: EXPECT["provider"] in d.find_element(By.ID, "providers").text, "the provider is not listed")
    # The provider's connection pool is open after the pushes went out.
    wait.until(lambda d: re.search(r"[1-9]\d* connections", d.find_element(By.ID, "providers").text),
               "the provider's pool is not shown")
    failures = wait_rows("failures-table", lambda r: len(r) >= 1, "no provider failures listed")
    check(any(EXPECT["failure_reason"] in row.text for row in failures),
          f"no failure with reason {EXPECT['failure_reason']}: {[row.text for row in failures]}")
    shot("08-health")
    driver.find_element(By.CSS_SELECTOR, "nav a[data-page=dialects]").click()
    visible("page-dialects")
    dialects = wait_rows("dialects-table", lambda r: len(r) == 9, "not nine dialects")
    names = [cells(row)[0] for row in dialects]
    check("LeanCloud" in names and "AOVIS" in names and "UnifiedPush" in names and "Matrix push gateway" in names and "ntfy" in names and "Gotify" in names,
          f"dialects {names}")
    shot("09-dialects")

    # Webhooks: the endpoint with its health (its receiver does not resolve: failing, three events waiting),
    # then its recent events with their attempts.
    driver.find_element(By.CSS_SELECTOR, "nav a[data-page=webhooks]").click()
    visible("page-webhooks")
    hooks = wait_rows("webhooks-table", lambda r: len(r) == 1, "not one webhook endpoint")
    hook = cells(hooks[0])
    check(hook[0].startswith(EXPECT["webhook"]), f"webhook row {hook}")
    check(hook[3] == "enabled", f"webhook state {hook}")
    check(hook[5] != "–", f"the failing endpoint shows no 'failing since': {hook}")
    # The seed's three events, and those of the console's own sends since.
    check(int(hook[6]) >= EXPECT["webhook_backlog"], f"webhook backlog {hook}")
    hooks[0].find_element(By.TAG_NAME, "a").click()
    visible("webhook-attempts-card")
    events = wait_rows("webhook-attempts-table", lambda r: len(r) >= EXPECT["webhook_backlog"], "the endpoint's events")
    check(all(cells(row)[3] == "pending" for row in events), f"states {[cells(r) for r in events]}")
    attempted = [cells(row) for row in events if cells(row)[4] != "0"]
    check(set(EXPECT["webhook_types"]) <= {row[2] for row in attempted}, f"attempted events {attempted}")
    check(all("resolve" in row[6] for row in attempted), f"last errors {[row[6] for row in attempted]}")
    shot("11-webhooks")

    # Templates: the seeded one, then its preview in German with a missing variable, which its strict
    # mode marks.
    driver.find_element(By.CSS_SELECTOR, "nav a[data-page=templates]").click()
    visible("page-templates")
    templates = wait_rows("templates-table", lambda r: len(r) == 1, "not one template")
    row = cells(templates[0])
    check(row[0] == EXPECT["template"] and row[1] == "1" and row[3] == "default, de" and row[4] == "strict",
          f"template row {row}")
    templates[0].find_element(By.TAG_NAME, "a").click()
    visible("preview-form")
    set_field("preview-variables", '{"name": "Ada"}')
    set_field("preview-recipient", '{"locale": "de-AT"}')
    by_id("preview-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    visible("preview-result")
    check(by_id("preview-localization").text == "de", f"language {by_id('preview-localization').text}")
    check(by_id("preview-title").text == "Willkommen Ada", f"title {by_id('preview-title').text}")
    check(by_id("preview-missing").text == "recipient.attributes.first_name",
          f"missing {by_id('preview-missing').text}")
    shot("12-template-preview")

    # No script error and no Content-Security-Policy violation in the page.
    problems = [entry["message"] for entry in driver.get_log("browser")
                if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]]
    check(not problems, f"browser console errors: {problems}")

    # Sign out: the session ends on the server, not only in this browser. A copy of the cookie taken
    # before (another tab, a stolen cookie) is refused afterwards, by the API and by the page.
    kept = driver.get_cookie("herald_console")
    check(kept is not None, "no session cookie before sign-out")
    check(session_status(kept["value"]) == 200, "the session does not work before sign-out")
    by_id("sign-out").click()
    visible("page-sign-in")
    check("herald_console" not in {cookie["name"] for cookie in driver.get_cookies()}, "the cookie outlived sign-out")
    status = session_status(kept["value"])
    check(status == 401, f"the signed-out session still answers {status}")
    driver.add_cookie({"name": "herald_console", "value": kept["value"], "path": "/", "secure": True,
                       "httpOnly": True, "sameSite": "Strict"})
    # A fresh load with the old cookie back: the page asks for its session and is refused.
    driver.get("about:blank")
    driver.get(URL + "/console#/installations")
    visible("page-sign-in")
    check(not by_id("nav").is_displayed(), "a signed-out session still shows the console's pages")
    shot("10-signed-out")


def session_status(cookie):
    """The status GET /console/session answers for a session cookie, from outside the browser."""
    request = urllib.request.Request(URL + "/console/session", headers={"Cookie": f"herald_console={cookie}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


try:
    main()
    print(f"screenshots: {' '.join(shots)}")
    print("console browser test passed")
    status = 0
except Exception as error:  # a failed check or a Selenium timeout: say what, keep a picture
    try:
        shot("failure")
    except Exception:
        pass
    print(f"console browser test FAILED: {type(error).__name__}: {error}", file=sys.stderr)
    status = 1
finally:
    driver.quit()
sys.exit(status)
