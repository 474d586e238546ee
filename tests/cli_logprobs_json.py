#!/usr/bin/env python3
"""Checks `vkllm run --jsonl` and `--top-logprobs N` against the tool's own plain output:

    python3 tests/cli_logprobs_json.py path/to/vkllm path/to/tiny-qwen2-f32.gguf

  - stdout holds one JSON object per generated token and nothing else, each parsed by Python's
    json module: id, text, bytes, logprob <= 0 and top, N alternatives sorted by logprob;
  - greedy: the chosen id is the first alternative, with the same logprob, and the ids are
    those of --print-ids; the tokens' bytes make the text the plain run prints;
  - text is the bytes decoded as UTF-8 with errors="replace" (the run includes tokens that are
    part of a character, so the replacement is exercised), and the JSON is valid all the same;
  - sampling: the ids of --print-ids with the same seed;
  - --top-logprobs beyond 20, or without --jsonl, is refused.
"""
import json
import subprocess
import sys

CLI, MODEL = sys.argv[1], sys.argv[2]
RUN = [CLI, "run", "-m", MODEL, "-p", "hello", "-n", "24", "--ignore-eos"]


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def run(*args, code=0):
    p = subprocess.run([*RUN, *args], capture_output=True, timeout=300)
    if p.returncode != code:
        fail(f"{args}: exit status {p.returncode}, not {code}:\n{p.stderr.decode(errors='replace')}")
    return p.stdout, p.stderr.decode(errors="replace")


def tokens(*args):
    out, err = run("--jsonl", *args)
    if "decode 24 tokens" not in err:
        fail(f"{args}: no statistics on stderr:\n{err}")
    lines = out.decode("utf-8").split("\n")  # strict: the JSON lines are valid UTF-8
    if lines[-1] != "":
        fail(f"{args}: stdout does not end with a newline")
    objects = [json.loads(line) for line in lines[:-1]]
    if len(objects) != 24:
        fail(f"{args}: {len(objects)} JSON lines, not 24")
    return objects


def ids(*args):
    out, _ = run("--print-ids", *args)
    return [int(x) for x in out.decode().strip().split(",")]


replaced = 0
greedy = tokens("--temp", "0", "--top-logprobs", "5")
for t in greedy:
    entries = [t] + t["top"]
    if len(t["top"]) != 5:
        fail(f"{len(t['top'])} alternatives, not 5: {t}")
    for e in entries:
        if set(e) - {"top"} != {"id", "text", "bytes", "logprob"} or not e["logprob"] <= 0:
            fail(f"a malformed entry: {e}")
        if e["text"] != bytes(e["bytes"]).decode("utf-8", errors="replace"):
            fail(f"text {e['text']!r} is not its bytes {e['bytes']} decoded")
        replaced += "\ufffd" in e["text"]
    logprobs = [e["logprob"] for e in t["top"]]
    if logprobs != sorted(logprobs, reverse=True):
        fail(f"the alternatives are not sorted: {logprobs}")
    if t["top"][0]["id"] != t["id"] or t["top"][0]["logprob"] != t["logprob"]:
        fail(f"greedy: the chosen token is not the first alternative: {t}")
if [t["id"] for t in greedy] != ids("--temp", "0"):
    fail("greedy: the JSON ids are not --print-ids'")
plain, _ = run("--temp", "0")
text = b"".join(bytes(t["bytes"]) for t in greedy)
if plain != b"hello" + text + b"\n":
    fail(f"the tokens' bytes {text!r} are not the text of the plain run {plain!r}")
if replaced == 0:
    fail("no token or alternative was part of a character: the replacement went unchecked")
bare = tokens("--temp", "0")
if any(t["top"] for t in bare) or [t["logprob"] for t in bare] != [t["logprob"] for t in greedy]:
    fail("--json alone: no alternatives and the same logprobs")
print(f"greedy: 24 JSON lines, 5 sorted alternatives each, {replaced} texts with U+FFFD")

sampled = tokens("--temp", "0.9", "--seed", "3", "--top-logprobs", "2")
if [t["id"] for t in sampled] != ids("--temp", "0.9", "--seed", "3"):
    fail("sampling: the JSON ids are not --print-ids' with the same seed")
if not all(t["logprob"] <= 0 and len(t["top"]) == 2 for t in sampled):
    fail("sampling: a logprob above 0 or a wrong number of alternatives")
print("sampled: the ids of --print-ids")

_, err = run("--jsonl", "--top-logprobs", "21", code=2)
if "--top-logprobs" not in err:
    fail(f"--top-logprobs 21: {err}")
_, err = run("--top-logprobs", "3", code=2)
if "--top-logprobs needs --jsonl" not in err:
    fail(f"--top-logprobs without --jsonl: {err}")
print("refused: --top-logprobs 21, and --top-logprobs without --jsonl")
