#!/usr/bin/env python3
"""SmolLM2-135M-Instruct answers ten extraction prompts under JSON Schemas through
`vkllm run --chat --json-schema`: every answer must parse with Python's json module and
validate with the `jsonschema` package (PyPI), an implementation independent of vkllm's
converter. With --compare the same prompts also run without the schema, and how many of
those answers parse is printed (not asserted: it is what the constraint is for).

    python3 tests/check_extraction_smollm2.py path/to/vkllm [--compare]

The model comes from the cache scripts/test fills ($VKLLM_MODEL_CACHE, else
$XDG_CACHE_HOME/vkllm/models, else ~/.cache/vkllm/models); without it the test is skipped
(exit 77).
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

CLI = sys.argv[1]
COMPARE = "--compare" in sys.argv[2:]
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir():
    if os.environ.get("VKLLM_MODEL_CACHE"):
        return os.environ["VKLLM_MODEL_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vkllm", "models")


MODEL = os.path.join(cache_dir(), MODEL_NAME)
if not os.path.exists(MODEL):
    print(f"skipped: {MODEL} is absent (scripts/test downloads it)")
    sys.exit(77)

with open(os.path.join(HERE, "data", "extraction", "cases.json"), encoding="utf-8") as f:
    CASES = json.load(f)


def answer(prompt, schema_path=None):
    args = [CLI, "run", "-m", MODEL, "--chat", "-p", prompt, "--temp", "0", "-n", "256"]
    if schema_path:
        args += ["--json-schema", schema_path]
    p = subprocess.run(args, capture_output=True, timeout=600)
    if p.returncode != 0:
        print(f"FAIL: exit status {p.returncode}: {p.stderr.decode(errors='replace')}")
        sys.exit(1)
    # Unconstrained answers may stop at -n inside a character; constrained ones are whole.
    return p.stdout.decode("utf-8", errors="strict" if schema_path else "replace")


failures = 0
parsed_without = 0
with tempfile.TemporaryDirectory() as tmp:
    for i, case in enumerate(CASES):
        schema = case["schema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        path = os.path.join(tmp, f"schema{i}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(schema, f)
        prompt = case["instruction"] + "\n\n" + case["text"]
        text = answer(prompt, path)
        try:
            value = json.loads(text)
            jsonschema.validate(value, schema)
            print(f"ok {i}: {json.dumps(value, ensure_ascii=False)}")
        except (json.JSONDecodeError, jsonschema.ValidationError) as e:
            failures += 1
            print(f"FAIL {i}: {text!r}: {e}")
        if not COMPARE:
            continue
        try:
            json.loads(answer(prompt).strip().removeprefix("```json").removesuffix("```"))
            parsed_without += 1
        except json.JSONDecodeError:
            pass
if COMPARE:
    print(f"without the schema {parsed_without} of {len(CASES)} answers parse as JSON")
print(f"extraction under a schema: {len(CASES)} prompts, {failures} failures")
sys.exit(1 if failures else 0)
