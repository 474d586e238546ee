#!/usr/bin/env python3
"""`vkllm chat` finds template and --tools problems at startup, falls back to chatml with a
notice, and answers to the end unless -n caps it.

    chat_template_cli.py path/to/vkllm path/to/tiny-qwen2-f32.gguf

The tiny model (random weights, no chat template) and Gemma 3 270M (a real file without a
chat template, from scripts/fetch-models; skipped, saying so, when it is not cached). Checks:
  - a broken --chat-template-file, an unknown --template, --chat-template-kwargs that is not
    a JSON object, --tools that is not JSON, not an array of tools, or given to a template
    that does not write tools: exit status 2 before any
    input is read (stdin is /dev/null, or a terminal that never shows the "> " prompt), the
    message naming the option;
  - a template that refuses --system's message fails at startup the same way; a model whose
    own template fails stops with exit status 1 and names --template (a copy of the tiny model
    written by gguf-py, skipped, saying so, without it);
  - a file without a template runs with chatml and says so on stderr, naming --template;
  - --template help lists every built-in (exit 0, no model needed);
  - without -n an answer runs past 128 tokens to the full context; -n N ends one with
    "[stopped at -n N]";
  - Gemma 3 270M: the chatml notice, which names --template gemma, then an answer on stdout.
The tiny model's generations run under the Vulkan validation layer (--validate).
"""
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

CLI, MODEL = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def chat(*args, stdin=subprocess.DEVNULL, model=MODEL, timeout=600):
    return subprocess.run([CLI, "chat", "-m", model, "--temp", "0", *args], stdin=stdin,
                          capture_output=True, text=True, errors="replace", timeout=timeout)


def refused(what, p, *needles):
    ok = p.returncode == 2 and all(n in p.stderr for n in needles) and p.stdout == ""
    check(ok, what, f"exit {p.returncode}, stderr {p.stderr!r}, stdout {p.stdout[:200]!r}")


def pty_output_until_exit(argv, timeout=300):
    """Runs argv in a terminal, types nothing; returns (exit status, everything it wrote)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    out, deadline = b"", time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            out += data
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), out.decode(errors="replace")
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None, out.decode(errors="replace")


with tempfile.TemporaryDirectory() as tmp:
    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    broken = write("broken.jinja", "{% for m in messages %}{{ m.content }}")
    p = chat("--chat-template-file", broken)
    refused("a broken --chat-template-file is refused before any input", p,
            "--chat-template-file " + broken, "line 1")
    status, out = pty_output_until_exit([CLI, "chat", "-m", MODEL, "--chat-template-file",
                                         broken])
    check(status == 2 and "> " not in out and "--chat-template-file" in out,
          "at a terminal, the broken template fails without showing the prompt",
          f"exit {status}, output {out!r}")

    no_system = write("no_system.jinja", "{% if messages[0].role == 'system' %}"
                      "{{ raise_exception('System role not supported') }}{% endif %}"
                      "{% for m in messages %}{{ m.content }}{% endfor %}")
    p = chat("--chat-template-file", no_system, "--system", "Be brief.")
    refused("a template that refuses --system's message fails at startup", p,
            "--chat-template-file", "System role not supported", "--system")

    p = chat("--template", "zephyr")
    refused("an unknown --template is refused with the names", p, "--template zephyr",
            "chatml", "gemma", "mistral-v7-tekken")

    refused("--chat-template-kwargs that is not a JSON object is refused",
            chat("--chat-template-kwargs", "[1]"), "--chat-template-kwargs", "not an object")
    not_json = write("not_json.json", '[{"type": "function",')
    refused("--tools that is not JSON is refused at startup", chat("--tools", not_json),
            "--tools " + not_json, "not JSON")
    not_array = write("object.json", '{"type": "function", "function": {"name": "f"}}')
    refused("--tools that is not an array is refused", chat("--tools", not_array),
            "--tools " + not_array, "not a JSON array")
    nameless = write("nameless.json", '[{"type": "function", "function": {"description": "x"}}]')
    refused("--tools with a tool without a name is refused", chat("--tools", nameless),
            "tool 0", "name")
    tools = write("tools.json", '[{"type": "function", "function": {"name": "get_weather", '
                  '"description": "Weather.", "parameters": {"type": "object", '
                  '"properties": {"city": {"type": "string"}}}}}]')
    refused("--tools with a template that ignores tools is refused",
            chat("--tools", tools), "--tools " + tools, "does not write tools")
    p = chat("--tools", tools, "--template", "mistral-v3")
    check(p.returncode == 0, "--tools with a template that writes them starts",
          f"exit {p.returncode}, stderr {p.stderr!r}")

    # A model whose own template fails: exit status 1, and a note naming the options that
    # choose another; --template then starts it. tests/gguf_with_template.py makes the copy
    # with gguf-py (scripts/deps.sh installs it for the tests), run by the Python that has it.
    gguf_python = os.environ.get("VKLLM_GGUF_PYTHON", "")
    refusing = os.path.join(tmp, "refusing.gguf")
    made = gguf_python and subprocess.run(
        [gguf_python, os.path.join(os.path.dirname(__file__), "gguf_with_template.py"), MODEL,
         refusing, "{{ raise_exception('This model only talks to admins') }}"]).returncode == 0
    if made:
        p = chat(model=refusing)
        check(p.returncode == 1 and "the model's chat template (tokenizer.chat_template) fails"
              in p.stderr and "This model only talks to admins" in p.stderr and
              "--template NAME or --chat-template-file FILE" in p.stderr,
              "a model whose own template fails stops at startup, naming --template",
              f"exit {p.returncode}, stderr {p.stderr!r}")
        p = chat("--template", "chatml", model=refusing)
        check(p.returncode == 0, "--template starts that model", p.stderr)
    else:
        print("skipped: gguf-py is not installed (scripts/deps.sh: vkllm_install_pydeps)")

    h = subprocess.run([CLI, "chat", "--template", "help"], capture_output=True, text=True,
                       errors="replace")
    names = ["chatml", "llama3", "harmony", "gemma", "llama2", "mistral-v1", "mistral-v3",
             "mistral-v7-tekken", "phi3", "phi4", "deepseek3", "deepseek-r1", "command-r", "granite",
             "llama4", "kimi-k2"]
    check(h.returncode == 0 and all(re.search(rf"^  {re.escape(n)} ", h.stdout, re.M)
                                    for n in names),
          "--template help lists the built-ins", h.stdout + h.stderr)
    marked = set(re.findall(r"^  (\S+) .*\(writes --tools\)$", h.stdout, re.M))
    check({"qwen2.5", "mistral-v3", "mistral-v7-tekken", "granite", "llama4"} <= marked and
          not marked & {"chatml", "gemma", "llama2", "phi3"},
          "--template help marks the templates that write tools", h.stdout)

# No -n: the random model never ends, so the answer runs past the old 128-token cap to the
# full context; then -n 5 caps one and says so.
p = subprocess.run([CLI, "chat", "-m", MODEL, "--temp", "0", "--ignore-eos", "-c", "256",
                    "--verbose-prompt", "--validate"], input="hello\n", capture_output=True,
                   text=True, errors="replace", timeout=600)
check(p.returncode == 0 and "[the context of 256 tokens is full" in p.stderr and
      "[stopped at -n" not in p.stderr,
      "without -n the answer runs to the full context", p.stderr[-600:])
check("VUID-" not in p.stderr and "Validation" not in p.stderr,
      "the Vulkan validation layer reports nothing", p.stderr[-600:])
check("has no chat template (tokenizer.chat_template): using chatml; --template NAME" in
      p.stderr, "a file without a template runs with chatml and says so", p.stderr[:600])
m = re.search(r"number of tokens in prompt = (\d+)", p.stderr)
# The answer's tokens: the context less the prompt (each token a piece of random text).
check(m is not None and 256 - int(m.group(1)) > 128, "the uncapped answer is over 128 tokens",
      p.stderr[:300])
p = subprocess.run([CLI, "chat", "-m", MODEL, "--temp", "0", "--ignore-eos", "-n", "5",
                    "--validate"],
                   input="hello\n", capture_output=True, text=True, errors="replace", timeout=600)
check(p.returncode == 0 and re.search(r"\[stopped at -n 5\]\n\[prefilled", p.stderr),
      "-n 5 ends the answer with [stopped at -n 5]", p.stderr[-600:])

gemma = os.path.join(os.environ.get("VKLLM_MODEL_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vkllm", "models"),
    "gemma-3-270m-q4_k_m.gguf")
if os.path.isfile(gemma):
    p = subprocess.run([CLI, "chat", "-m", gemma, "--temp", "0", "-n", "8"],
                       input="What is the capital of France?\n", capture_output=True,
                       text=True, errors="replace", timeout=600)
    notice = p.stderr.splitlines()[0] if p.stderr else ""
    check(p.returncode == 0 and "using chatml; --template NAME" in notice and
          "(the model's family: --template gemma)" in notice and
          p.stdout.strip() != "" and "[stopped at -n 8]" in p.stderr,
          "Gemma 3 270M chats through chatml after the notice",
          f"exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
else:
    print("skipped: Gemma 3 270M is not cached (scripts/fetch-models)")

print(f"chat templates at startup: {len(failures)} failures")
sys.exit(1 if failures else 0)
