#!/usr/bin/env python3
"""Every template x conversation pair of the test data's chat-templates (tests/data) through `vkllm template`:
stdout must be jinja2's render byte for byte (expected/<template>/<conversation>.txt) with exit
status 0, or, where jinja2 raised (expected/index.json), the exit status 1 with a message on
stderr and nothing on stdout. The arguments are render.py's: the template's bos/eos from the
index (a token that is None not passed), strftime_now fixed to 2026-01-15T12:00:00.

    check_template_cli.py VKLLM_BINARY CHAT_TEMPLATES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def check_errors(vkllm, tmp, conv):
    """A raise_exception's text, a syntax error's line and column, a bad --now: each a message
    on stderr, nothing on stdout, and the exit status the usage says."""
    cases = [
        ("{% if messages[0].role == 'user' %}{{ raise_exception('no system turn') }}{% endif %}",
         [], 1, "vkllm: template: no system turn"),
        ("a\n{{ messages[0].content | nosuchfilter }}", [], 1, "line 2, column"),
        ("{% for m in messages %}", [], 1, "line 1"),
        ("{{ now }}", ["--now", "2026-02-30T00:00:00"], 2, "--now expects a UTC time"),
    ]
    failures = []
    for i, (source, extra, status, message) in enumerate(cases):
        path = os.path.join(tmp, f"error{i}.jinja")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        run = subprocess.run([vkllm, "template", "--template", path, "--conversation", conv]
                             + extra, capture_output=True, timeout=60)
        err = run.stderr.decode(errors="replace")
        if run.returncode != status or run.stdout or message not in err:
            failures.append(f"{source!r}: exit {run.returncode}, stderr {err!r}; want exit "
                            f"{status} and {message!r}")
    return failures


def main():
    vkllm, data = sys.argv[1], sys.argv[2]
    conversations = json.load(open(os.path.join(data, "conversations.json"), encoding="utf-8"))
    index = json.load(open(os.path.join(data, "expected", "index.json"), encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        conv_files = {}
        for conv in conversations:
            path = os.path.join(tmp, conv["name"] + ".json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(conv, f, ensure_ascii=False)
            conv_files[conv["name"]] = path

        def check(pair):
            template, conv = pair
            cmd = [vkllm, "template", "--template",
                   os.path.join(data, "templates", template + ".jinja"),
                   "--conversation", conv_files[conv], "--now", "2026-01-15T12:00:00"]
            for key, flag in (("bos_token", "--bos"), ("eos_token", "--eos")):
                value = index["special_tokens"][template].get(key)
                if value is not None:
                    cmd += [flag, value]
            run = subprocess.run(cmd, capture_output=True, timeout=60)
            result = index["results"][template][conv]
            name = f"{template} x {conv}"
            if result["ok"]:
                path = os.path.join(data, "expected", template, conv + ".txt")
                want = open(path, "rb").read()
                if run.returncode != 0:
                    return f"{name}: exit {run.returncode}: {run.stderr.decode(errors='replace')}"
                if run.stdout != want:
                    return f"{name}: the render differs from jinja2's ({len(run.stdout)} bytes, " \
                           f"jinja2 {len(want)})"
                return None
            if run.returncode != 1 or run.stdout or not run.stderr.startswith(b"vkllm: template: "):
                return (f"{name}: jinja2 raised {result.get('error_type')}; vkllm exited "
                        f"{run.returncode} with {len(run.stdout)} bytes on stdout")
            return None

        pairs = [(t, c["name"]) for t in sorted(index["results"]) for c in conversations]
        with ThreadPoolExecutor(max_workers=2) as pool:
            failures = [f for f in pool.map(check, pairs) if f]
        failures += check_errors(vkllm, tmp, conv_files["single_user"])
    raised = sum(not index["results"][t][c]["ok"] for t, c in pairs)
    for f in failures:
        print(f)
    print(f"vkllm template: {len(pairs) - len(failures)}/{len(pairs)} pairs as jinja2 "
          f"({raised} raise)")
    return 1 if failures or len(pairs) != 720 else 0


if __name__ == "__main__":
    sys.exit(main())
