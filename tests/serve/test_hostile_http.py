#!/usr/bin/env python3
"""Serve.HostileHttp: `vkllm serve --api-key K --body-limit 65536 --timeout 2 --parallel 1
--queue 1` on SmolLM2 fed bad HTTP on raw sockets: malformed and truncated JSON, invalid UTF-8,
JSON nested too deep, a body over the limit, a header line over 8 KiB and 10,000 headers, wrong
methods, a body cut short, slow senders dribbling a body or headers past the timeout, a missing
or wrong API key, a request beyond the slot and the queue (429 with Retry-After). Each gets its
4xx (or, for a slow sender, its connection closed), and after each the server answers a good
request; at the end it exits 0 on SIGTERM with the validation layer silent.

    python3 tests/serve/test_hostile_http.py SERVE_BINARY CLI_BINARY OUTPUT_DIR
"""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_harness import Args, Checks, Server, chat, deadline, metrics, request  # noqa: E402

KEY = "sk-hostile-test"
AUTH = b"Authorization: Bearer " + KEY.encode() + b"\r\n"
TIMEOUT = 2
BODY_LIMIT = 65536
# SmolLM2's greedy answer to it runs past 600 tokens.
LONG = "Write a very long essay about the history of Rome."

args = Args()
args.require_model()
checks = Checks("Serve.HostileHttp")
check = checks.check
deadline(150, checks)


def exchange(server, raw, wait=30):
    """Sends raw bytes (the server may close early), reads until it closes: (status, body)
    with status None when nothing came back. The client does not half-close its side: cpp-httplib
    writes no answer to a client that has (its check that the socket is writable peeks the
    client's end of stream)."""
    s = socket.create_connection((server.host, server.port), timeout=wait)
    try:
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data, end = b"", time.monotonic() + wait
        while time.monotonic() < end and len(data) < (1 << 20):
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[0].startswith(b"HTTP/1.") else None
    return status, body


def post(path, body, headers=b"", auth=AUTH):
    return (b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + auth +
            b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body) + headers +
            b"\r\n" + body)


def error_field(body):
    try:
        e = json.loads(body)["error"]
        return e.get("type"), e.get("param"), e.get("message")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def answered(server, after):
    """The good request after each bad one: a one-token chat."""
    try:
        status, data = chat(server, {"messages": [{"role": "user", "content": "Hi"}],
                                     "max_tokens": 1, "temperature": 0},
                            headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
        ok = status == 200 and data["choices"][0]["message"]["content"] != ""
    except (OSError, ValueError, KeyError, TypeError) as e:
        ok, status = False, e
    check(ok, f"after {after}: a good request is answered", str(status))


def expect(server, what, raw, statuses, param=None):
    status, body = exchange(server, raw)
    detail = f"status {status}, body {body[:300]!r}"
    ok = status in statuses
    if ok and status != 405 and status != 404:
        field = error_field(body)
        ok = field is not None and (param is None or field[1] == param)
    check(ok, f"{what}: {' or '.join(map(str, statuses))}" +
          (f" naming {param}" if param else "") + " with an OpenAI error object", detail)
    answered(server, what)


def slow_sender(server, what, whole, dribbled):
    """`whole` at once, then `dribbled` one byte every half second: the server closes the
    connection once --timeout has passed (each byte comes well within it), while it goes on
    answering others."""
    s = socket.create_connection((server.host, server.port), timeout=30)
    s.settimeout(0.5)
    s.sendall(whole)
    start, closed, sent = time.monotonic(), False, 0
    while not closed and sent < len(dribbled) and time.monotonic() - start < TIMEOUT + 8:
        try:
            s.sendall(dribbled[sent:sent + 1])
            sent += 1
            data = s.recv(4096)
            closed = data == b"" or data.startswith(b"HTTP/1.1 4")
        except socket.timeout:
            pass
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        if sent == 3:
            answered(server, f"{what}'s first bytes (while it dribbles)")
    seconds = time.monotonic() - start
    s.close()
    check(closed and seconds < TIMEOUT + 8,
          f"{what}: the connection is closed within --timeout {TIMEOUT} s + 8 s",
          f"closed {closed} after {seconds:.1f} s, {sent} of {len(dribbled)} bytes sent")
    answered(server, what)


def open_stream(server, events):
    """A long streamed answer on a raw socket, read until `events` events have come."""
    body = json.dumps({"messages": [{"role": "user", "content": LONG}], "temperature": 0,
                       "max_tokens": 200, "stream": True}).encode()
    s = socket.create_connection((server.host, server.port), timeout=60)
    s.sendall(post(b"/v1/chat/completions", body))
    data = b""
    while data.count(b"data: ") < events and len(data) < 65536:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return s, data


def queue_full(server):
    """--parallel 1 --queue 1: one answer streaming, one waiting, the next request gets 429
    with Retry-After; the two clients gone, the slot serves again."""
    running, data = open_stream(server, 2)  # its role, then a token: it holds the slot
    waiting, _ = open_stream(server, 1)
    status, hdrs, body = request(server, "POST", "/v1/chat/completions",
                                 {"messages": [{"role": "user", "content": "Hi"}],
                                  "max_tokens": 1}, {"Authorization": f"Bearer {KEY}"})
    check(data.startswith(b"HTTP/1.1 200") and status == 429 and
          hdrs.get("retry-after", "").isdigit() and error_field(body) is not None,
          "a request beyond the slot and the queue: 429 with Retry-After",
          f"status {status}, headers {hdrs}, body {body[:200]!r}")
    for s in (running, waiting):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    end, idle = time.monotonic() + 10, False
    while not idle and time.monotonic() < end:
        samples = metrics(server, {"Authorization": f"Bearer {KEY}"})
        idle = samples.get("vkllm_slots_busy") == 0 and samples.get("vkllm_queue_length") == 0
        time.sleep(0.2)
    check(idle, "the slot and the queue are free within 10 s of their clients going away",
          str({k: v for k, v in samples.items() if "slots" in k or "queue" in k}))
    answered(server, "the busy slot's clients went away")


def main(server):
    good = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}).encode()
    chat_path = b"/v1/chat/completions"
    expect(server, "malformed JSON", post(chat_path, b'{"messages": [}]}'), {400})
    expect(server, "truncated JSON", post(chat_path, good[:-7]), {400})
    expect(server, "invalid UTF-8 in a string",
           post(chat_path, b'{"messages": [{"role": "user", "content": "\xff\xfe\xc0"}]}'), {400})
    expect(server, "JSON nested 100,000 deep",
           post(chat_path, b'{"messages": ' + b"[" * 100000 + b"]" * 100000 + b"}"), {400, 413})
    expect(server, "a wrong type", post(chat_path, json.dumps(
        {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": "many"}).encode()),
        {400}, param="max_tokens")
    expect(server, "a body over --body-limit",
           post(chat_path, b'{"messages": "' + b"a" * (BODY_LIMIT * 4) + b'"}'), {413})
    # Content-Length says more than comes before the client stops sending.
    cut = post(chat_path, good)
    cut = cut.replace(b"Content-Length: %d" % len(good), b"Content-Length: %d" % (len(good) + 50))
    start = time.monotonic()
    status, _ = exchange(server, cut, wait=TIMEOUT + 8)
    seconds = time.monotonic() - start
    check((status is None or 400 <= status < 500) and seconds < TIMEOUT + 5,
          f"a body cut short: a 4xx or the connection closed within --timeout {TIMEOUT} s + 5 s",
          f"status {status} after {seconds:.1f} s")
    answered(server, "a body cut short")
    expect(server, "a header line over 8 KiB",
           post(chat_path, good, b"X-Long: " + b"v" * 9000 + b"\r\n"), {400, 431})
    expect(server, "10,000 headers",
           post(chat_path, good, b"".join(b"X-H-%d: v\r\n" % i for i in range(10000))),
           {400, 431})
    for method, path in [(b"GET", chat_path), (b"PUT", b"/v1/chat/completions"),
                         (b"DELETE", b"/v1/models"), (b"GET", b"/tokenize")]:
        expect(server, f"{method.decode()} {path.decode()}",
               method + b" " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + AUTH +
               b"Content-Length: 0\r\n\r\n", {404, 405})
    expect(server, "no API key", post(chat_path, good, auth=b""), {401})
    expect(server, "a wrong API key",
           post(chat_path, good, auth=b"Authorization: Bearer sk-no\r\n"), {401})
    expect(server, "the key under another scheme",
           post(chat_path, good, auth=b"Authorization: Basic " + KEY.encode() + b"\r\n"), {401})
    status, _, _ = request(server, "GET", "/health")
    check(status == 200, "/health needs no API key", f"status {status}")
    head = post(chat_path, good)[:-len(good)]
    queue_full(server)
    slow_sender(server, "a body dribbled", head, good)
    slow_sender(server, "headers dribbled", b"",
                head[:-2] + b"X-Pad: " + b"p" * 64 + b"\r\n\r\n" + good)
    check(server.alive(), "the server is still running")


server = Server(args, "hostile", extra=["--api-key", KEY, "--body-limit", str(BODY_LIMIT),
                                        "--timeout", str(TIMEOUT), "--ctx-size", "256",
                                        "--parallel", "1", "--queue", "1"])
try:
    main(server)
finally:
    server.stop(checks)
checks.finish()
