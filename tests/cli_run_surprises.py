#!/usr/bin/env python3
"""What surprised a new user of `vkllm run` and `vkllm bench` (issue 37), on a tiny model:

    python3 tests/cli_run_surprises.py path/to/vkllm path/to/tiny-qwen2-f32.gguf

  - the seed is random by default and printed in the statistics (with --jsonl too); --seed
    with the printed value gives the same answer again;
  - the statistics report pipeline compilation apart from prefill ("compile N ms");
  - a prompt that is rejected (too long for -c, or past the model's positions with
    --context-shift) is not echoed first, and the --context-shift message names -c;
  - sampling flags out of their range (--temp, --top-p, --min-p, --typical,
    --repeat-penalty, --top-k) are refused naming the range, exit status 2; their edges work;
  - bench -p and -n take comma-separated lists: a pp row per -p value, a tg row per -n value
    and prompt length.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

CLI, MODEL = sys.argv[1], sys.argv[2]
failures = 0
# Compiled once, then loaded: each run starts in a fraction of a second.
CACHE = os.path.join(tempfile.mkdtemp(), "pipelines.bin")


def fail(message):
    global failures
    failures += 1
    print("FAIL:", message)


def run(*args, code=0, command="run"):
    p = subprocess.run([CLI, command, "-m", MODEL, "--pipeline-cache", CACHE, *args],
                       capture_output=True, timeout=300)
    out, err = p.stdout.decode("utf-8", errors="replace"), p.stderr.decode(errors="replace")
    if p.returncode != code:
        fail(f"{command} {args}: exit status {p.returncode}, not {code}:\n{err}")
    return out, err


def seed_of(err):
    m = re.search(r"\| seed (\d+) \|", err)
    return int(m[1]) if m else None


# A random seed by default, printed; --seed with it repeats the answer.
SAMPLE = ("-p", "hello", "-n", "16", "--ignore-eos", "--temp", "1.5")
first, err1 = run(*SAMPLE)
second, err2 = run(*SAMPLE)
s1, s2 = seed_of(err1), seed_of(err2)
if s1 is None or s2 is None or s1 == s2:
    fail(f"two runs without --seed printed seeds {s1} and {s2}:\n{err1}")
else:
    again, err = run(*SAMPLE, "--seed", str(s1))
    if again != first or seed_of(err) != s1:
        fail(f"--seed {s1}: {again!r}, the run that printed it {first!r}")
    _, err = run(*SAMPLE, "--jsonl", "--seed", str(s2))
    if seed_of(err) != s2:
        fail(f"--jsonl: the statistics do not print seed {s2}:\n{err}")
    print(f"seeds {s1} and {s2} drawn and printed; --seed {s1} repeats its answer")

# Pipeline compilation reported apart from prefill.
m = re.search(r"\| compile (\d+) ms \| prefill \d+ tokens [0-9.]+ tok/s", err1)
if not m or int(m[1]) <= 0:
    fail(f"no compile time apart from prefill in the statistics:\n{err1}")
else:
    print(f"compile {m[1]} ms, reported apart from prefill")

# A rejected prompt is not echoed; --context-shift's message names -c.
long_prompt = "hello world " * 200
out, err = run("-p", long_prompt, "-c", "64", "-n", "2", code=1)
if out or "do not fit the context of 64 (-c)" not in err:
    fail(f"a prompt too long for -c: stdout {len(out)} bytes:\n{err}")
out, err = run("-p", long_prompt, "-c", "64", "-n", "2", "--context-shift", code=1)
if out or not re.search(r"the prompt's \d+ tokens do not fit: --context-shift moves the "
                        r"context of 64 tokens \(-c\) along them, but not past the 256 "
                        r"positions the model was trained for", err):
    fail(f"--context-shift, a prompt past the model's positions: {len(out)} bytes:\n{err}")
out, _ = run("-p", "hello", "-n", "1", "--temp", "0")
if not out.startswith("hello"):
    fail(f"an accepted prompt is not echoed: {out!r}")
print("rejected prompts are not echoed; --context-shift's message names -c 64 and 256")

# Sampling flags out of range: exit status 2, the range named; their edges run.
for flag, value, range_text in (
        ("--temp", "-1", "of 0 or more"),
        ("--top-p", "2", "above 0 and at most 1"),
        ("--top-p", "0", "above 0 and at most 1"),
        ("--min-p", "1.5", "from 0 to 1"),
        ("--typical", "0", "above 0 and at most 1"),
        ("--repeat-penalty", "0", "above 0"),
        ("--top-k", "-2", "from -1 to"),
):
    out, err = run("-p", "hello", flag, value, code=2)
    if f"{flag} expects a " not in err or range_text not in err or out:
        fail(f"{flag} {value}: {err}")
for flag, value in (("--temp", "0"), ("--top-p", "1"), ("--min-p", "0"), ("--min-p", "1"),
                    ("--typical", "1"), ("--top-k", "-1")):
    run("-p", "hello", "-n", "1", flag, value)
print("--temp, --top-p, --min-p, --typical, --repeat-penalty, --top-k: ranges checked")

# bench -p and -n lists.
out, _ = run("-p", "4,8", "-n", "2,3", "-r", "1", "--no-warmup", command="bench")
tests = re.findall(r"\| (pp\d+|tg\d+ @ d\d+) +\| +[0-9.]+ ± [0-9.]+ \|", out)
if tests != ["pp4", "tg2 @ d4", "tg3 @ d4", "pp8", "tg2 @ d8", "tg3 @ d8"]:
    fail(f"bench -p 4,8 -n 2,3: rows {tests}:\n{out}")
out, _ = run("-p", "4", "-n", "2,3", "-r", "1", "--no-warmup", "--json", command="bench")
rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
if [(r["test"], r["n_prompt"], r["n_gen"]) for r in rows] != [
        ("pp4", 4, 0), ("tg2", 4, 2), ("tg3", 4, 3)]:
    fail(f"bench -p 4 -n 2,3 --json: {rows}")
_, err = run("-p", "4,,8", code=2, command="bench")
if "-p expects a whole number" not in err:
    fail(f"bench -p 4,,8: {err}")
print("bench: a pp row per -p value, a tg row per -n value (and prompt length)")

os.remove(CACHE)
os.rmdir(os.path.dirname(CACHE))
print(f"run surprises: {failures} failures")
sys.exit(1 if failures else 0)
