#!/usr/bin/env python3
"""The receiving end of Herald's outgoing webhooks in the tests: a real HTTP/1.1 server that checks
each request's Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature:
"v1," + base64 HMAC-SHA256 over "id.timestamp.body" with a whsec_ secret) with two independent
client libraries, standardwebhooks and svix, and answers what the test scripted.

    .python/tools/bin/python3 scripts/webhook-receiver.py --secret whsec_... [--secret whsec_...]
        [--port 0] [--host 127.0.0.1] [--answers 500,timeout,redirect:http://...,410]
        [--timeout-sleep 30]

A Swift test spawns it, reads the first stdout line `{"listening": <port>}` (port 0 picks a free one),
points a webhook at http://127.0.0.1:<port>/..., then reads one JSON line per request received:

    {"n": 1, "method": "POST", "path": "/hook", "verified_standardwebhooks": true,
     "verified_svix": true, "id": "msg_...", "timestamp": "1700000000", "answer": "500",
     "body": {...}, "error": null, "headers": {"content-type": "application/json", ...}}

- --secret may be repeated (secret rotation): a request is verified by a library when any secret
  verifies it; "error" is null when both libraries verified it, else their failures.
- --answers: what successive POSTs get, one each: a status number (200, 204, 410, 500...),
  `timeout` (no answer for --timeout-sleep + 1 seconds, then 200) or `redirect:<url>` (302 with
  Location <url>); once the list is used up every POST gets 204. Other methods get 405 and use no
  answer. "answer" is the item answered, always a string ("500", "timeout", "redirect:...", "204").
- A request's line is printed (and flushed) when it has been read, before it is answered, so a
  `timeout` request is seen at once. Nothing else goes to stdout; stderr has the access log.
- --openapi PATH: each body is also checked against the schema PATH's `webhooks` gives its `type`
  (Herald's /openapi.yaml): "schema_valid" is true, false (with "schema_error"), or null without it.
- SIGTERM or SIGINT stops it with exit status 0, and so does the end of its standard input.
"""
import argparse
import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import standardwebhooks
import svix.webhooks

LIBRARIES = {"standardwebhooks": standardwebhooks.Webhook, "svix": svix.webhooks.Webhook}


def parse_answer(item):
    if item == "timeout" or (item.startswith("redirect:") and len(item) > len("redirect:")):
        return item
    if item.isdigit() and 100 <= int(item) <= 599:
        return item
    raise argparse.ArgumentTypeError(f"bad answer {item!r}: a status, timeout or redirect:<url>")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--secret", action="append", default=[], help="whsec_<base64> (repeatable)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--answers", default="", help="comma-separated: STATUS, timeout, redirect:URL")
    parser.add_argument("--timeout-sleep", type=float, default=30.0)
    parser.add_argument("--openapi", help="an OpenAPI 3.1 document: each body is checked against its `webhooks` schema")
    args = parser.parse_args()
    # The contract Herald publishes: webhooks.<type>.post.requestBody's schema (JSON Schema 2020-12).
    schemas = {}
    if args.openapi:
        import jsonschema
        import yaml

        with open(args.openapi) as file:
            document = yaml.safe_load(file)
        for name, item in document.get("webhooks", {}).items():
            schema = item["post"]["requestBody"]["content"]["application/json"]["schema"]
            schemas[name] = jsonschema.Draft202012Validator(schema)
    try:
        answers = [parse_answer(a.strip()) for a in args.answers.split(",") if a.strip()]
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    # One verifier per library and secret; a bad secret fails here, not on the first request.
    try:
        verifiers = {lib: [cls(s) for s in args.secret] for lib, cls in LIBRARIES.items()}
    except Exception as error:
        parser.error(f"bad --secret: {error}")

    state = threading.Lock()
    counter = [0]

    def emit(line):
        with state:
            counter[0] += 1
            line = {"n": counter[0], **line}
            try:
                print(json.dumps(line), flush=True)
            except BrokenPipeError:
                pass

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def read_body(self):
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                body = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline().strip():  # trailers, then the empty line
                            pass
                        return body
                    body += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def verify(self, body):
            headers = dict(self.headers.items())
            verified, errors = {}, []
            for lib, secrets in verifiers.items():
                verified[lib] = False
                failures = [] if secrets else ["no --secret"]
                for verifier in secrets:
                    try:
                        verifier.verify(body, headers)
                        verified[lib] = True
                        break
                    except Exception as error:  # also ValueError etc. on malformed headers
                        failures.append(f"{type(error).__name__}: {error}")
                if not verified[lib]:
                    errors.append(f"{lib}: " + "; ".join(dict.fromkeys(failures)))
            return verified, (" | ".join(errors) or None)

        def serve(self):
            body = self.read_body()
            if self.command == "POST":
                with state:
                    answer = answers.pop(0) if answers else "204"
            else:
                answer = "405"
            verified, error = self.verify(body)
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            schema_error = None
            if schemas and parsed is not None:
                validator = schemas.get(parsed.get("type") if isinstance(parsed, dict) else None)
                if validator is None:
                    schema_error = f"no webhooks schema for type {parsed.get('type') if isinstance(parsed, dict) else None!r}"
                else:
                    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(parsed)]
                    schema_error = "; ".join(problems) or None
            emit({
                "schema_valid": None if not schemas else schema_error is None,
                "schema_error": schema_error,
                "method": self.command,
                "path": self.path,
                "verified_standardwebhooks": verified["standardwebhooks"],
                "verified_svix": verified["svix"],
                "id": self.headers.get("webhook-id"),
                "timestamp": self.headers.get("webhook-timestamp"),
                "answer": answer,
                "body": parsed,
                "error": error,
                "headers": {k.lower(): v for k, v in self.headers.items()},
            })
            status, extra = int(answer) if answer.isdigit() else 200, {}
            if answer == "timeout":
                time.sleep(args.timeout_sleep + 1)
                self.close_connection = True
            elif answer.startswith("redirect:"):
                status, extra = 302, {"Location": answer[len("redirect:"):]}
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            if status in (204, 304) or status < 200:
                self.end_headers()
                return
            payload = f"{status}\n".encode()
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = serve

        def handle(self):
            try:
                super().handle()
            except (ConnectionError, TimeoutError):  # the client gave up (e.g. after a timeout)
                pass

    server = ThreadingHTTPServer((args.host, args.port), Handler)  # daemon threads

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # It ends when its standard input closes too (the test's ConversationProcess.finish closes it).
    def watch_stdin():
        sys.stdin.read()
        server.shutdown()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(json.dumps({"listening": server.server_address[1]}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        print("webhook-receiver: stopped", file=sys.stderr)


if __name__ == "__main__":
    main()
