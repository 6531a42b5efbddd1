#!/usr/bin/env python3
"""Helpers of scripts/schemathesis (standard library only).

    schemathesis_tokens.py port                  a free TCP port on 127.0.0.1
    schemathesis_tokens.py secret BYTES          BYTES random bytes, base64
    schemathesis_tokens.py hex BYTES             BYTES random bytes, hex
    schemathesis_tokens.py uuid                  a random UUID
    schemathesis_tokens.py jwt SECRET SUB        an HS256 JWT for SUB, expiring in one hour
    schemathesis_tokens.py field NAME            NAME of the JSON object on stdin
    schemathesis_tokens.py summary LABEL REPORT  one line from a schemathesis JSON report
    schemathesis_tokens.py total LINE...         the summary lines added up, as the final line
"""

import base64
import hashlib
import hmac
import json
import os
import socket
import sys
import time
import uuid


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(secret: str, sub: str) -> str:
    now = int(time.time())
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = b64url(json.dumps({"sub": sub, "iat": now, "exp": now + 3600}, separators=(",", ":")).encode())
    signing_input = f"{header}.{claims}".encode()
    signature = hmac.new(secret.encode(), signing_input, hashlib.sha256).digest()
    return f"{header}.{claims}.{b64url(signature)}"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def summary(label: str, path: str) -> str:
    """`LABEL: N operations, M cases, K failures, E errors` from a `--report json` file."""
    with open(path, encoding="utf-8") as fd:
        report = json.load(fd)
    operations = report["operations"]["tested"]
    cases = report["test_cases"]["generated"]
    failures = report["test_cases"]["unique_failures"]
    errors = sum(error.get("count", 1) for error in report.get("errors", []))
    return f"{label}: {operations} operations, {cases} cases, {failures} failures, {errors} errors"


def total(lines: list[str]) -> str:
    """The document's operations (the most any run tested) and the runs' cases, failures and errors."""
    counts = [[int(word) for word in line.replace(",", " ").split() if word.isdigit()] for line in lines]
    operations = max((numbers[0] for numbers in counts), default=0)
    cases, failures, errors = (sum(numbers[index] for numbers in counts) for index in (1, 2, 3))
    text = f"schemathesis: {operations} operations, {cases} cases, {failures} failures"
    return text + (f", {errors} errors" if errors else "")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    verb, args = argv[0], argv[1:]
    if verb == "port":
        print(free_port())
    elif verb == "secret":
        print(base64.b64encode(os.urandom(int(args[0]))).decode())
    elif verb == "hex":
        print(os.urandom(int(args[0])).hex())
    elif verb == "uuid":
        print(str(uuid.uuid4()).upper())
    elif verb == "jwt":
        print(jwt(args[0], args[1]))
    elif verb == "field":
        try:
            print(json.load(sys.stdin)[args[0]])
        except (ValueError, KeyError, TypeError):
            return 1
    elif verb == "summary":
        print(summary(args[0], args[1]))
    elif verb == "total":
        print(total(args))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
