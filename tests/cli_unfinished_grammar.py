#!/usr/bin/env python3
"""`vkllm run` under a grammar prints a complete answer or says that it did not (issue 37):

    python3 tests/cli_unfinished_grammar.py path/to/vkllm path/to/tiny-qwen2-f32.gguf
    python3 tests/cli_unfinished_grammar.py path/to/vkllm --smollm2

on a tiny model of the test data (tests/data):
  - without -n the answer runs to the grammar's end, past the 128 tokens -n gives otherwise
    (a grammar of 200 digits: 200 tokens, exit status 0);
  - -n cutting the grammar: the text printed so far, a message naming -n and the grammar on
    stderr, exit status 3; likewise a full context (-c), a --stop string, and -s samples;
  - a complete answer exits 0 with stdout that Python's json module parses, the same run
    with an -n large enough too;
and with --smollm2, on SmolLM2-135M-Instruct from the model cache scripts/fetch-models fills
(skipped, exit status 77, without it), the runs the issue reported:
  - `--chat -p "List ten colors in JSON." --json -n 5` and a string schema with -n 4: exit
    status 3 and the message, where they printed broken JSON with status 0;
  - the same schema without -n: exit 0, stdout a JSON string;
  - ^C under a grammar: the statistics, the message, exit status 130.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

CLI, MODEL = sys.argv[1], sys.argv[2]
failures = 0
UNFINISHED = 3
DIGITS = "root ::= [0-9]{200}"


def fail(message):
    global failures
    failures += 1
    print("FAIL:", message)


def run(model, *args, code=0):
    p = subprocess.run([CLI, "run", "-m", model, *args], capture_output=True, timeout=300)
    out, err = p.stdout.decode("utf-8", errors="replace"), p.stderr.decode(errors="replace")
    if p.returncode != code:
        fail(f"{args}: exit status {p.returncode}, not {code}:\n{err}")
    return out, err


def decoded(err):
    m = re.search(r"decode (\d+) tokens", err)
    return int(m[1]) if m else -1


def expect_unfinished(err, by, source, what="the answer", code=UNFINISHED):
    message = (f"vkllm: run: {what} is unfinished: {by} stopped it before the grammar "
               f"({source}) was complete, so it is not valid output (exit status {code})")
    if message not in err:
        fail(f"{by}: no message {message!r} in:\n{err}")


def tiny_model():
    # No -n: the answer is the grammar's whole text, longer than -n's default of 128.
    out, err = run(MODEL, "-p", "hello", "--temp", "0", "--grammar", DIGITS)
    if not re.fullmatch(r"[0-9]{200}\n", out) or decoded(err) <= 128:
        fail(f"no -n under a grammar: {out!r} after {decoded(err)} tokens")
    print(f"no -n: the grammar's 200 digits in {decoded(err)} tokens, exit status 0")

    # -n cuts it: what was generated, the message, exit status 3.
    out, err = run(MODEL, "-p", "hello", "--temp", "0", "--grammar", DIGITS, "-n", "20",
                   code=UNFINISHED)
    if not re.fullmatch(r"[0-9]{20}\n", out):
        fail(f"-n 20: {out!r}")
    expect_unfinished(err, "-n 20", "--grammar")

    # A full context cuts it: the context's note, then the grammar's.
    out, err = run(MODEL, "-p", "hello", "--temp", "0", "--grammar", DIGITS, "-c", "50",
                   code=UNFINISHED)
    if "the context of 50 tokens is full" not in err:
        fail(f"-c 50: no note of the full context:\n{err}")
    expect_unfinished(err, "the full context", "--grammar")

    # A stop string cuts it: the text before it, which the grammar has not finished.
    out, err = run(MODEL, "-p", "hello", "--temp", "0", "--grammar",
                   'root ::= "sunny and warm" | "rainy and cold"', "--stop", " and",
                   code=UNFINISHED)
    if out not in ("sunny\n", "rainy\n"):
        fail(f"--stop: {out!r}")
    expect_unfinished(err, "--stop", "--grammar")
    # A stop string the answer never reaches changes nothing.
    out, err = run(MODEL, "-p", "hello", "--temp", "0", "--grammar",
                   'root ::= "sunny and warm" | "rainy and cold"', "--stop", "snow")
    if out not in ("sunny and warm\n", "rainy and cold\n"):
        fail(f"--stop that never comes: {out!r}")

    # -s: each unfinished sample is named.
    schema = '{"type": "array", "items": {"type": "integer"}, "minItems": 30}'
    out, err = run(MODEL, "-p", "hello", "--temp", "1", "--json-schema", schema, "-n", "12",
                   "-s", "2", code=UNFINISHED)
    for i in (1, 2):
        expect_unfinished(err, "-n 12", "--json-schema", f"sample {i} of 2")
    print("-n, a full context, --stop and -s samples that cut the grammar: exit status 3, named")

    # Complete answers: exit status 0, stdout is JSON; an -n with room to spare changes nothing.
    schema = '{"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 3}'
    full, err = run(MODEL, "-p", "hello", "--temp", "0", "--json-schema", schema)
    try:
        value = json.loads(full)
        if not (isinstance(value, list) and len(value) == 3):
            fail(f"--json-schema: {value!r} is not 3 integers")
    except ValueError as e:
        fail(f"--json-schema: {full!r} is not JSON: {e}")
    if "unfinished" in err:
        fail(f"a complete answer was called unfinished:\n{err}")
    n = decoded(err)
    out, _ = run(MODEL, "-p", "hello", "--temp", "0", "--json-schema", schema, "-n", str(n + 1))
    if out != full:
        fail(f"-n {n + 1}: {out!r}, without -n {full!r}")
    print(f"a complete answer: exit status 0, JSON {full.strip()!r}, the same with -n {n + 1}")


# SmolLM2, as the issue ran it.
def cache_dir():
    if os.environ.get("VKLLM_MODEL_CACHE"):
        return os.environ["VKLLM_MODEL_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vkllm", "models")


def smollm2():
    smol = os.path.join(cache_dir(), "SmolLM2-135M-Instruct.Q4_1.gguf")
    if not os.path.isfile(smol):
        print(f"skipped: {smol} is not cached (scripts/fetch-models)")
        sys.exit(77)
    out, err = run(smol, "--chat", "-p", "List ten colors in JSON.", "--json", "-n", "5",
                   code=UNFINISHED)
    expect_unfinished(err, "-n 5", "--json")
    string = '{"type": "string", "minLength": 10, "maxLength": 10}'
    prompt = "What is the date of the first moon landing? Answer in JSON."
    out, err = run(smol, "--chat", "-p", prompt, "--temp", "0", "--json-schema", string,
                   "-n", "4", code=UNFINISHED)
    expect_unfinished(err, "-n 4", "--json-schema")
    out, err = run(smol, "--chat", "-p", prompt, "--temp", "0", "--json-schema", string)
    try:
        if not (isinstance(json.loads(out), str) and len(json.loads(out)) == 10):
            fail(f"SmolLM2 without -n: {out!r} is not a string of 10 characters")
    except ValueError as e:
        fail(f"SmolLM2 without -n: {out!r} is not JSON: {e}")
    print(f"SmolLM2: --json -n 5 and the schema with -n 4 exit 3; without -n: {out.strip()}")

    # ^C under a grammar: the statistics, then the message, exit status 130.
    p = subprocess.Popen([CLI, "run", "-m", smol, "-p", "hello", "--temp", "0", "--grammar",
                          "root ::= [0-9]{2000}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.set_blocking(p.stdout.fileno(), False)
    seen = b""
    deadline = time.time() + 120
    while len(seen) < 8 and time.time() < deadline:
        seen += p.stdout.read() or b""
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        fail("^C did not stop run")
    err = err.decode(errors="replace")
    if p.returncode != 130 or "decode " not in err:
        fail(f"^C under a grammar: exit status {p.returncode}:\n{err}")
    expect_unfinished(err, "^C", "--grammar", code=130)
    print("SmolLM2: ^C under a grammar: the statistics, the message, exit status 130")


if MODEL == "--smollm2":
    smollm2()
else:
    tiny_model()
print(f"unfinished grammars: {failures} failures")
sys.exit(1 if failures else 0)
