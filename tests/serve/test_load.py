#!/usr/bin/env python3
"""Serve.Load: `vkllm serve --parallel 8` on SmolLM2 under 32 concurrent streaming clients of 4
requests each, of mixed prompt and answer lengths, all greedy:

  - every server-sent event stream is well formed and complete ([DONE] last), and no request
    is lost (128 answers, each 200; /metrics counts 128 finished and the tokens the usage
    chunks report);
  - every answer equals the same request run alone before the load (continuous batching
    changes nothing in a greedy answer);
  - the server's resident memory after the load is within 10% of before (measured after a
    warm-up: the requests run alone, then 16 at once);
  - clients that disconnect mid-stream, or while waiting for a whole answer, free their slots:
    /metrics shows no busy slot within a deadline and counts them cancelled, and the next
    request is answered.

    python3 tests/serve/test_load.py SERVE_BINARY CLI_BINARY OUTPUT_DIR
"""
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_harness import (Args, Checks, Server, SseError, deadline, metrics,  # noqa: E402
                           stream_chat)

CLIENTS, PER_CLIENT, PARALLEL = 32, 4, 8
# Mixed lengths: prompts of one to twenty words, answers of 3 to 12 tokens (short: prefill is
# what costs most on lavapipe).
SENTENCE = "The river runs past the old mill, under the stone bridge and through the town."
REQUESTS = [
    ("Hi", 3),
    ("What is two plus two?", 6),
    ("Name a colour.", 10),
    ("Summarise: " + SENTENCE, 8),
    ("Write a word that rhymes with cat.", 4),
    ("Describe this place: " + SENTENCE, 12),
    ("Count from one to five.", 10),
    ("Say hello in French.", 5),
]

# SmolLM2's greedy answer to it runs past 600 tokens.
LONG = "Write a very long essay about the history of Rome."

args = Args()
args.require_model()
checks = Checks("Serve.Load")
check = checks.check
deadline(240, checks)


def body(i):
    prompt, max_tokens = REQUESTS[i]
    return {"model": "x", "messages": [{"role": "user", "content": prompt}],
            "temperature": 0, "max_tokens": max_tokens, "stream_options": {"include_usage": True}}


def busy_slots(server):
    """Busy slots as /metrics counts them: the sample whose name says slots and busy."""
    samples = metrics(server)
    busy = [v for k, v in samples.items() if "slots" in k and ("busy" in k or "processing" in k)]
    if len(busy) != 1:
        raise RuntimeError(f"/metrics has no single busy-slots sample: {sorted(samples)}")
    return busy[0]


def load(server, alone, clients=CLIENTS, per_client=PER_CLIENT):
    results, tokens, lock = {}, {}, threading.Lock()
    counted = metrics(server)

    def client(c):
        for j in range(per_client):
            i = (c * per_client + j) % len(REQUESTS)
            try:
                events, texts, finish = stream_chat(server, body(i), timeout=180)
                outcome = (texts.get(0), finish.get(0))
                tokens[(c, j)] = (events[-1].get("usage") or {}).get("completion_tokens")
            except (SseError, OSError) as e:
                outcome = (None, f"{type(e).__name__}: {e}")
            with lock:
                results[(c, j)] = (i, outcome)

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, start + 180 - time.monotonic()))
    seconds = time.monotonic() - start
    check(all(not t.is_alive() for t in threads), "every client finished within 180 s")
    check(len(results) == clients * per_client,
          f"no request lost: {clients * per_client} answers", f"{len(results)} answers")
    broken = [f"{k}: {o[1]}" for k, (i, o) in results.items() if o[0] is None]
    check(not broken, "every stream is well formed and ends with [DONE]", "\n  ".join(broken[:5]))
    differ = [f"request {i}: {o} under load, {alone[i]} alone"
              for k, (i, o) in results.items() if o[0] is not None and o != alone[i]]
    check(not differ, "every greedy answer under load equals the same request run alone",
          "\n  ".join(differ[:5]))
    print(f"load: {len(results)} streams in {seconds:.1f} s")
    # The server's own count agrees: every request finished, every token the usage chunks
    # reported generated.
    now = metrics(server)
    finished = now["vkllm_requests_finished_total"] - counted["vkllm_requests_finished_total"]
    generated = now["vkllm_generated_tokens_total"] - counted["vkllm_generated_tokens_total"]
    usage = [t for t in tokens.values() if isinstance(t, int)]
    check(finished == clients * per_client and len(usage) == len(results) and
          generated == sum(usage),
          "/metrics counts every request finished and the tokens the usage chunks report",
          f"finished {finished}, generated {generated}, usage {sum(usage)} in {len(usage)}")


def disconnects(server, stream):
    """Long answers (450 tokens: a minute on lavapipe) whose clients vanish: streams after
    their first event, answers asked whole once their requests hold the slots."""
    what = "streams" if stream else "whole answers"
    socks = []
    for _ in range(PARALLEL):
        s = socket.create_connection((server.host, server.port), timeout=60)
        payload = json.dumps({"messages": [{"role": "user", "content": LONG}],
                              "temperature": 0, "max_tokens": 450, "stream": stream}).encode()
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(payload)
                  + payload)
        socks.append(s)
    if stream:
        first = 0
        for s in socks:
            # The first event (the assistant's role) comes before any token: wait for a second.
            data = b""
            while data.count(b"data: ") < 2 and len(data) < 65536:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            first += data.count(b"data: ") >= 2
        check(first == PARALLEL, f"{PARALLEL} long streams started", f"{first} started")
    else:
        end = time.monotonic() + 30
        while time.monotonic() < end and busy_slots(server) != PARALLEL:
            time.sleep(0.2)
    busy = busy_slots(server)
    check(busy == PARALLEL, f"their slots are busy while the {what} are made", f"busy {busy}")
    cancelled_before = metrics(server)["vkllm_requests_cancelled_total"]
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # a reset, as a killed client leaves
    end = time.monotonic() + 10
    while time.monotonic() < end and busy_slots(server) != 0:
        time.sleep(0.2)
    busy = busy_slots(server)
    check(busy == 0, f"the slots of {what} whose clients left are free again within 10 s",
          f"busy {busy}")
    cancelled = metrics(server)["vkllm_requests_cancelled_total"] - cancelled_before
    check(cancelled == PARALLEL, f"/metrics counts the {PARALLEL} disconnects as cancelled",
          f"{cancelled}")
    try:
        _, texts, finish = stream_chat(server, body(0), timeout=60)
        check(texts[0] != "" and finish[0] in ("stop", "length"),
              "a request after the disconnects is answered", str(texts))
    except (SseError, OSError) as e:
        check(False, "a request after the disconnects is answered", str(e))


server = Server(args, "load", extra=["--parallel", str(PARALLEL), "--queue", str(CLIENTS),
                                     "--ctx-size", "512"])
try:
    alone = {}
    for i in range(len(REQUESTS)):
        _, texts, finish = stream_chat(server, body(i))
        alone[i] = (texts[0], finish[0])
    check(all(t for t, _ in alone.values()), "each request alone has an answer", str(alone))
    # The warm-up: 16 requests at once, so that what the first batches of 8 make once (their
    # recordings, the device memory lavapipe keeps in the process) is there before "before".
    load(server, alone, clients=16, per_client=1)
    rss_before = server.rss_kib()
    load(server, alone)
    rss_after = server.rss_kib()
    check(abs(rss_after - rss_before) <= 0.1 * rss_before,
          "resident memory after the load is within 10% of before",
          f"{rss_before} KiB before, {rss_after} KiB after")
    print(f"VmRSS: {rss_before} KiB before, {rss_after} KiB after")
    disconnects(server, stream=True)
    disconnects(server, stream=False)
    check(server.alive(), "the server is still running")
finally:
    server.stop(checks)
checks.finish()
