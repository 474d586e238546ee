#!/usr/bin/env python3
"""`vkllm run` under grammars, on a tiny model of the test data (tests/data):

    python3 tests/check_grammar_cli.py path/to/vkllm path/to/tiny-qwen2-f32.gguf

  - --grammar: stdout is only the answer, one of the grammar's sentences, for several seeds;
  - -s N with a grammar: every sample is a sentence;
  - --jsonl with a grammar: the tokens' texts make a sentence;
  - --json-schema, inline and from a file: stdout parses with Python's json module and has the
    schema's shape (bounded integers in range, the enum's values);
  - errors: a bad --grammar-file names the file, then the line and column; an unsupported
    schema keyword is named; two constraints at once are refused (exit 2).
"""
import json
import os
import subprocess
import sys
import tempfile

CLI, MODEL = sys.argv[1], sys.argv[2]
failures = 0


def fail(message):
    global failures
    failures += 1
    print("FAIL:", message)


def run(*args, code=0):
    p = subprocess.run([CLI, "run", "-m", MODEL, "-p", "hello", "-n", "96", *args],
                       capture_output=True, timeout=300)
    if p.returncode != code:
        fail(f"{args}: exit status {p.returncode}, not {code}: "
             f"{p.stderr.decode(errors='replace')}")
    return p.stdout.decode("utf-8"), p.stderr.decode(errors="replace")


LABELS = {"sunny", "rainy", "cloudy with a chance of rain"}
CHOICE = 'root ::= "sunny" | "rainy" | "cloudy" " with a chance of " ("rain" | "snow")'
seen = set()
for seed in range(6):
    out, _ = run("--grammar", CHOICE, "--temp", "1.5", "--seed", str(seed))
    text = out.removesuffix("\n")
    if text not in LABELS | {"cloudy with a chance of snow"}:
        fail(f"--grammar, seed {seed}: {text!r} is not a sentence of the grammar")
    seen.add(text)
if len(seen) < 2:
    fail(f"six seeds at temperature 1.5 gave only {seen}")
print(f"--grammar: {sorted(seen)}")

out, _ = run("--grammar", CHOICE, "--temp", "1", "-s", "4")
samples = [line for line in out.split("\n") if line and not line.startswith("--- sample")]
if len(samples) != 4 or not all(s in LABELS | {"cloudy with a chance of snow"} for s in samples):
    fail(f"-s 4 with a grammar: {samples}")
print(f"-s 4: {samples}")

out, _ = run("--grammar", CHOICE, "--temp", "0", "--jsonl")
text = "".join(json.loads(line)["text"] for line in out.split("\n") if line)
if text not in LABELS | {"cloudy with a chance of snow"}:
    fail(f"--jsonl with a grammar: {text!r}")

SCHEMA = {"type": "object",
          "properties": {"n": {"type": "integer", "minimum": -5, "maximum": 120},
                         "kind": {"enum": ["cat", "dog", None]},
                         "ok": {"type": "boolean"}},
          "required": ["n", "kind", "ok"]}
with tempfile.TemporaryDirectory() as tmp:
    schema_file = os.path.join(tmp, "schema.json")
    with open(schema_file, "w", encoding="utf-8") as f:
        json.dump(SCHEMA, f)
    for seed in range(4):
        source = json.dumps(SCHEMA) if seed % 2 else schema_file
        out, _ = run("--json-schema", source, "--temp", "1", "--seed", str(seed))
        try:
            value = json.loads(out)
            if not (-5 <= value["n"] <= 120 and value["kind"] in ("cat", "dog", None)
                    and isinstance(value["ok"], bool) and set(value) == {"n", "kind", "ok"}):
                fail(f"--json-schema, seed {seed}: {value} does not have the schema's shape")
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            fail(f"--json-schema, seed {seed}: {out!r}: {e}")
    print(f"--json-schema: {out.strip()}")

    bad = os.path.join(tmp, "bad.gbnf")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('root ::= item+\nitem ::= [a-z" \n')
    _, err = run("--grammar-file", bad, code=1)
    if f"{bad}: line 2, column" not in err:
        fail(f"a bad grammar file: {err!r}")
    print(f"bad grammar: {err.strip()}")
    _, err = run("--json-schema", '{"type": "string", "pattern": "^(?=a)a+$"}', code=1)
    if "'pattern'" not in err or "lookaround" not in err:
        fail(f"an unsupported keyword is not named: {err!r}")
    _, err = run("--json", "--grammar", CHOICE, code=2)
    if "constrained already" not in err:
        fail(f"two constraints: {err!r}")
print(f"grammars in the CLI: {failures} failures")
sys.exit(1 if failures else 0)
