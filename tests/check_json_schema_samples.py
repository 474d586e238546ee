#!/usr/bin/env python3
"""The JSON Schema corpus (tests/data/json_schema) checked by an independent validator, the
Python `jsonschema` package (Draft 2020-12, formats checked): every NAME.valid.jsonl line must
validate against NAME.json and every NAME.invalid.jsonl line must not. With a `vkllm` binary
and a model, also what the converter's grammar lets a model write: for each schema,
`vkllm run --json-schema NAME.json --temp 1 -s 5` (five samples from one prefill, seeds 1 to
5), and each sample must be JSON the schema accepts.

    check_json_schema_samples.py                      the corpus only
    check_json_schema_samples.py VKLLM_BINARY MODEL   the corpus and sampled outputs
    check_json_schema_samples.py VKLLM_BINARY MODEL SUITE_DIR
        also every schema of the JSON-Schema-Test-Suite (SUITE_DIR: its draft2020-12
        directory; the files tests/test_json_schema_suite.cpp reads) that the converter
        accepts: 4 samples each at --temp 1.5, -n 150. Samples cut short by -n are counted,
        not validated. Minutes: not a ctest.

`jsonschema` is found on PYTHONPATH (scripts/test installs it into build/pydeps). Prints
"json schema samples: N failures" last; the exit status is 1 when N > 0.
"""
import datetime
import json
import os
import re
import subprocess
import sys

import jsonschema

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "json_schema")
SAMPLES = 5
SAMPLE_HEADER = re.compile(r"^--- sample \d+ of \d+ \(seed (\d+)\) ---$", re.M)
PROMPT = "Answer in JSON:"
# Schemas whose sentences have no length bound: a random model's text would be cut at -n 400.
NOT_SAMPLED = {"any_value"}
TIME_RE = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|z|[+-]\d{2}:\d{2})$")

checker = jsonschema.Draft202012Validator.FORMAT_CHECKER


# jsonschema checks "time" and "date-time" only with optional packages; RFC 3339's rules are
# short enough to write here so that they are always checked.
@checker.checks("time", raises=ValueError)
def is_time(value):
    if not isinstance(value, str):
        return True
    m = TIME_RE.match(value)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {value!r}")
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"time out of range: {value!r}")
    if m[5] not in ("Z", "z") and (int(m[5][1:3]) > 23 or int(m[5][4:6]) > 59):
        raise ValueError(f"offset out of range: {value!r}")
    return True


@checker.checks("date-time", raises=ValueError)
def is_date_time(value):
    if not isinstance(value, str):
        return True
    date, sep, time = value.partition("T")
    if not sep or not re.match(r"^\d{4}-\d{2}-\d{2}$", date):
        raise ValueError(f"not an RFC 3339 date-time: {value!r}")
    datetime.date.fromisoformat(date)
    return is_time(time)


def validator(schema):
    return jsonschema.Draft202012Validator(schema, format_checker=checker)


def schemas():
    for name in sorted(os.listdir(CORPUS)):
        if name.endswith(".json"):
            base = name[: -len(".json")]
            with open(os.path.join(CORPUS, name), encoding="utf-8") as f:
                yield base, json.load(f)


def lines(base, kind):
    with open(os.path.join(CORPUS, f"{base}.{kind}.jsonl"), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def errors_of(v, text):
    try:
        instance = json.loads(text)
    except ValueError as e:
        return f"not JSON: {e}"
    errors = list(v.iter_errors(instance))
    return errors[0].message if errors else None


SUITE_FORMATS = ["date", "time", "date-time", "uuid", "email"]


def suite_samples(cli, model, suite):
    """Samples of the suite's schemas: (failures, schemas sampled, samples, cut short)."""
    files = sorted(os.path.join(suite, f) for f in os.listdir(suite) if f.endswith(".json"))
    files += [os.path.join(suite, "optional", "format", f + ".json") for f in SUITE_FORMATS]
    failures = schemas_sampled = samples = cut = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            groups = json.load(f)
        for group in groups:
            cmd = [cli, "run", "-m", model, "-p", PROMPT, "--json-schema",
                   json.dumps(group["schema"]), "--temp", "1.5", "--seed", "1", "-s", "4",
                   "-n", "150"]
            p = subprocess.run(cmd, capture_output=True, timeout=600)
            if p.returncode != 0:
                continue  # refused, or a schema no value satisfies
            schemas_sampled += 1
            v = validator(group["schema"])
            parts = SAMPLE_HEADER.split(p.stdout.decode("utf-8"))
            for out in [text[1:-1] for text in parts[2::2]]:
                samples += 1
                try:
                    instance = json.loads(out)
                except ValueError:
                    cut += 1
                    continue
                errors = list(v.iter_errors(instance))
                if errors:
                    failures += 1
                    print(f"FAIL suite {os.path.basename(path)}: {group['description']}: "
                          f"output {out!r}: {errors[0].message}")
    return failures, schemas_sampled, samples, cut


def main():
    failures = 0
    corpus = list(schemas())
    for base, schema in corpus:
        jsonschema.Draft202012Validator.check_schema(schema)
        v = validator(schema)
        for text in lines(base, "valid"):
            error = errors_of(v, text)
            if error:
                failures += 1
                print(f"FAIL {base}: valid instance {text!r} is rejected: {error}")
        for text in lines(base, "invalid"):
            if errors_of(v, text) is None:
                failures += 1
                print(f"FAIL {base}: invalid instance {text!r} is accepted")
    print(f"corpus: {len(corpus)} schemas checked")
    if len(sys.argv) in (3, 4):
        cli, model = sys.argv[1], sys.argv[2]
        samples = 0
        for base, schema in corpus:
            if base in NOT_SAMPLED:
                continue
            v = validator(schema)
            cmd = [cli, "run", "-m", model, "-p", PROMPT, "--json-schema",
                   os.path.join(CORPUS, base + ".json"), "--temp", "1", "--seed", "1",
                   "-s", str(SAMPLES), "-n", "400"]
            p = subprocess.run(cmd, capture_output=True, timeout=600)
            if p.returncode != 0:
                failures += 1
                print(f"FAIL {base}: exit {p.returncode}: "
                      f"{p.stderr.decode('utf-8', 'replace')[-500:]}")
                continue
            # Each sample follows its header line and ends with a newline of its own.
            parts = SAMPLE_HEADER.split(p.stdout.decode("utf-8"))
            seeds, outputs = parts[1::2], [text[1:-1] for text in parts[2::2]]
            if len(outputs) != SAMPLES or parts[0]:
                failures += 1
                print(f"FAIL {base}: {len(outputs)} samples in {p.stdout!r}")
            for seed, out in zip(seeds, outputs):
                samples += 1
                error = errors_of(v, out)
                if error:
                    failures += 1
                    print(f"FAIL {base} seed {seed}: output {out!r}: {error}")
        print(f"sampled: {samples} outputs checked")
        if len(sys.argv) == 4:
            f, sampled, n, cut = suite_samples(cli, model, sys.argv[3])
            failures += f
            print(f"suite: {sampled} schemas sampled, {n} outputs, {cut} cut short by -n, "
                  f"{n - cut} validated")
    elif len(sys.argv) != 1:
        print(__doc__)
        return 2
    print(f"json schema samples: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
