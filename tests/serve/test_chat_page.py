#!/usr/bin/env python3
"""Serve.ChatPageInChromium: the chat page `vkllm serve` embeds, in Debian's chromium (headless,
driven by playwright-core from npm, see tests/serve/chat_page.mjs) against a server on SmolLM2:

  - the page shows the model's id;
  - a question typed and sent gets a streamed answer whose DOM text is not empty and equals
    what the API answers for the same request (the one the page sent, replayed unstreamed);
    a screenshot of it goes to OUTPUT_DIR/serve-page.png;
  - the stop button ends a long answer: it is marked done, grows no more, and the server's
    slot is free again.

    python3 tests/serve/test_chat_page.py SERVE_BINARY CLI_BINARY OUTPUT_DIR

playwright-core comes from $VKLLM_NODE_SERVE (scripts/deps.sh's vkllm_install_serve_deps puts
it in build/node-serve), chromium from /usr/bin/chromium (Debian's package): the test fails
without them, as it does without node.
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_harness import Args, Checks, Server, chat, deadline, metrics  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
QUESTION = "What is the capital of France?"
LONG = "Write a very long essay about the history of Rome."
MODEL_ID = "SmolLM2-135M-Instruct.Q4_1"

args = Args()
args.require_model()
checks = Checks("Serve.ChatPageInChromium")
check = checks.check
deadline(240, checks)

node = shutil.which("node")
prefix = os.environ.get("VKLLM_NODE_SERVE", "")
chromium = os.environ.get("VKLLM_CHROMIUM", "/usr/bin/chromium")
for ok, what in [(node, "node is on the PATH"),
                 (os.path.exists(os.path.join(prefix, "node_modules", "playwright-core")),
                  f"playwright-core is in $VKLLM_NODE_SERVE ({prefix!r}: scripts/deps.sh's "
                  "vkllm_install_serve_deps installs it)"),
                 (os.access(chromium, os.X_OK), f"{chromium} is there (Debian's chromium)")]:
    if not check(bool(ok), what):
        checks.finish()


def normalised(text):
    return " ".join(text.split())


def busy_slots(server):
    samples = metrics(server)
    return sum(v for k, v in samples.items() if "slots" in k and ("busy" in k or "processing" in k))


server = Server(args, "page", extra=["--ctx-size", "1024"])
try:
    screenshot = os.path.join(args.out, "serve-page.png")
    if os.path.exists(screenshot):
        os.remove(screenshot)
    p = subprocess.run([node, os.path.join(HERE, "chat_page.mjs"), prefix,
                        f"http://127.0.0.1:{server.port}/", screenshot, QUESTION, LONG],
                       capture_output=True, timeout=200, text=True)
    lines = p.stdout.strip().splitlines()
    page = json.loads(lines[-1]) if p.returncode == 0 and lines else {"error": p.stderr[-2000:]}
    check("error" not in page, "the page was driven to the end", page.get("error", ""))
    check(not page.get("pageErrors"), "the page's scripts raise nothing", page.get("pageErrors"))
    check(page.get("model") == MODEL_ID, "the page shows the model's id", page.get("model"))
    answer = page.get("answer") or ""
    check(normalised(answer) != "", "the answer's DOM text is not empty", repr(answer))
    sent = page.get("request")
    check(sent is not None and sent.get("stream") is True and
          sent.get("messages", [{}])[-1].get("content") == QUESTION,
          "the page streams, and sent the question as the last message", str(sent))
    if sent is not None:
        # The page's request as chat_page.mjs passed it on: greedy.
        status, api = chat(server, {**sent, "stream": False, "temperature": 0})
        want = api["choices"][0]["message"]["content"] if status == 200 else f"status {status}"
        check(normalised(answer) == normalised(want),
              "the DOM text equals the API's answer to the same request (whitespace aside)",
              f"page {answer!r}, API {want!r}")
    check(os.path.exists(screenshot) and os.path.getsize(screenshot) > 1000,
          f"a screenshot is saved to {screenshot}")
    stopped = page.get("stoppedText") or ""
    check(page.get("stopSeconds", 99) < 10 and stopped != "" and
          stopped == page.get("stoppedTextLater"),
          "the stop button ends a long answer within 10 s, and it grows no more",
          f"{page.get('stopSeconds')} s, {stopped[-80:]!r} then "
          f"{(page.get('stoppedTextLater') or '')[-80:]!r}")
    end = time.monotonic() + 10
    while time.monotonic() < end and busy_slots(server) != 0:
        time.sleep(0.2)
    check(busy_slots(server) == 0, "the stopped answer's slot is free again within 10 s")
finally:
    server.stop(checks)
checks.finish()
