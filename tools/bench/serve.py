#!/usr/bin/env python3
"""`vkllm serve` under 1, 4 and 16 concurrent streaming clients, against the same requests run
one after another through the CLI (`vkllm run --chat`). The requests: the prompts below, each a
user message, greedy, max_tokens fixed, the whole set sent at each level (each client takes
the next request when its last one ends), the best of --reps runs of it. Prints, per level:
the aggregate tokens per second (all completion tokens over the wall time of the level) and
the time to first token (from sending the request to its first content chunk), median and
worst; for the CLI, the wall time of the runs one after another (each loading the model and
compiling its pipelines) and the time generation alone took (prefill and decode, from run's
statistics).

    python3 tools/bench/serve.py --serve build/vkllm-serve --cli build/vkllm -m MODEL.gguf \\
        [--parallel 16] [--max-tokens 32] [--clients 1,4,16] [--requests 16] [--reps 2]

The server runs without the validation layer, on the default device (or --device).
"""
import argparse
import http.client
import json
import re
import statistics
import subprocess
import threading
import time

PROMPTS = [
    "What is the capital of France?", "Name three colours.", "Why is the sky blue?",
    "Count from one to ten.", "Say hello in Spanish.", "What is two plus two?",
    "Describe a cat in one sentence.", "Write a haiku about the sea.",
    "What do bees make?", "Give me a word that rhymes with tree.",
    "What is the boiling point of water?", "Name a planet.", "What colour is grass?",
    "Tell me a fun fact.", "What is a triangle?", "Suggest a name for a dog.",
]


def start_server(a):
    cmd = [a.serve, "-m", a.model, "--port", "0", "--parallel", str(a.parallel),
           "--ctx-size", str(a.ctx_size)] + (["--device", a.device] if a.device else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for line in proc.stdout:
        line = line.decode()
        if line.startswith("vkllm serve: listening on http://"):
            return proc, int(line.strip().rsplit(":", 1)[1])
    raise SystemExit(f"{cmd} exited with {proc.wait()} before it was ready")


def one_request(port, prompt, max_tokens):
    """Streams one greedy chat request: (seconds to the first content chunk, completion tokens,
    text)."""
    body = {"messages": [{"role": "user", "content": prompt}], "temperature": 0,
            "max_tokens": max_tokens, "stream": True, "stream_options": {"include_usage": True}}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body),
                 {"Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        raise SystemExit(f"status {r.status}: {r.read()[:300]!r}")
    first, tokens, text = None, None, ""
    for line in r:
        if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
            continue
        event = json.loads(line[6:])
        for c in event.get("choices", []):
            piece = c.get("delta", {}).get("content")
            if piece:
                text += piece
                if first is None:
                    first = time.perf_counter() - t0
        if event.get("usage"):
            tokens = event["usage"]["completion_tokens"]
    conn.close()
    return first, tokens, text


def level(port, clients, requests, max_tokens):
    todo = list(range(requests))
    results, lock = {}, threading.Lock()

    def client():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop(0)
            results[i] = one_request(port, PROMPTS[i % len(PROMPTS)], max_tokens)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    tokens = sum(r[1] for r in results.values())
    ttft = [r[0] for r in results.values() if r[0] is not None]
    return wall, tokens, ttft, results


def cli_runs(a):
    """The same requests through `vkllm run --chat`, one after another."""
    wall, generating, tokens, texts = 0.0, 0.0, 0, {}
    for i in range(a.requests):
        cmd = [a.cli, "run", "-m", a.model, "--chat", "-p", PROMPTS[i % len(PROMPTS)], "--temp",
               "0", "-n", str(a.max_tokens)] + (["--device", a.device] if a.device else [])
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, check=True)
        wall += time.perf_counter() - t0
        # An answer cut at -n may end inside a character.
        texts[i] = p.stdout[:-1].decode(errors="replace")
        stats = p.stderr.decode(errors="replace")
        pre = re.search(r"prefill (\d+) tokens ([0-9.]+) tok/s", stats)
        dec = re.search(r"decode (\d+) tokens ([0-9.]+) tok/s", stats)
        generating += int(pre.group(1)) / float(pre.group(2))
        if dec and float(dec.group(2)) > 0:
            generating += int(dec.group(1)) / float(dec.group(2))
            tokens += int(dec.group(1))
    return wall, generating, tokens, texts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--ctx-size", type=int, default=512)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--device")
    a = ap.parse_args()
    proc, port = start_server(a)
    try:
        one_request(port, PROMPTS[0], 4)  # warm-up: the first step's pipelines
        print(f"{a.requests} requests, max_tokens {a.max_tokens}, greedy, streaming; server "
              f"--parallel {a.parallel}")
        print("| clients | wall s | completion tokens | aggregate tok/s | TTFT median s | "
              "TTFT max s |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        served = {}
        for clients in [int(c) for c in a.clients.split(",")]:
            # Best of --reps: the first run at a level also records its batch's steps.
            wall, tokens, ttft, results = min(
                (level(port, clients, a.requests, a.max_tokens) for _ in range(a.reps)),
                key=lambda run: run[0])
            served[clients] = results
            print(f"| {clients} | {wall:.2f} | {tokens} | {tokens / wall:.1f} | "
                  f"{statistics.median(ttft):.3f} | {max(ttft):.3f} |", flush=True)
    finally:
        proc.terminate()
        proc.wait()
    wall, generating, tokens, texts = cli_runs(a)
    print(f"| CLI, one after another | {wall:.2f} | {tokens} | {tokens / wall:.1f} "
          f"(generation alone: {tokens / generating:.1f}) | | |")
    same = sum(served[c][i][2] == texts[i] for c in served for i in texts)
    print(f"server answers equal to the CLI's: {same} of {len(served) * len(texts)} (an answer "
          "cut inside a character differs: the server holds back half a character)")


if __name__ == "__main__":
    main()
