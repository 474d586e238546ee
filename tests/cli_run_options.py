#!/usr/bin/env python3
"""Checks `vkllm run`'s llama.cpp-style options against what the tool itself does without
them, so each check can fail and none depends on the random model's exact words:

    python3 tests/cli_run_options.py path/to/vkllm path/to/tiny-qwen2-f32.gguf

  - --stop TEXT (repeatable) ends the text where the earliest stop text begins, unprinted;
  - -n 0 prefills the prompt and generates nothing;
  - a prompt on stdin (none given, or -f -) is the same prompt as -p;
  - --verbose-prompt lists the ids `vkllm tokenize` gives, each with its piece;
  - --color shows the prompt in yellow and the generated text uncolored;
  - --repeat-last-n 0 turns the penalty off; -1 (the whole context) equals any window
    longer than the text; values that are not whole numbers from -1 are refused;
  - --save-session / --load-session: a run resumed from a saved prompt prefills only the
    tokens past it and prints what a run without it prints; a state saved after an answer
    resumes a prompt that stops inside it; a missing file is an error;
  - ^C stops the answer: the statistics, a note, exit status 130.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

CLI, MODEL = sys.argv[1], sys.argv[2]
RUN = [CLI, "run", "-m", MODEL, "--temp", "0"]


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def run(*args, stdin=subprocess.DEVNULL, code=0):
    p = subprocess.run([*RUN, *args], stdin=stdin, capture_output=True, timeout=300)
    if p.returncode != code:
        fail(f"{args}: exit status {p.returncode}, not {code}:\n{p.stderr.decode(errors='replace')}")
    return p.stdout, p.stderr.decode(errors="replace")


# --stop: the answer without a stop string, then stop strings taken from inside it.
out, _ = run("-p", "hello", "-n", "24", "--ignore-eos")
answer = out[len(b"hello"):-1]
if len(answer) < 12:
    fail(f"the answer is too short to cut: {answer!r}")
stop = answer[6:9]
cut = answer.find(stop)
out, err = run("-p", "hello", "-n", "24", "--ignore-eos", "--stop", stop)
if out != b"hello" + answer[:cut] + b"\n":
    fail(f"--stop {stop!r}: {out!r}, expected the text before it")
if not re.search(r"decode (\d+) tokens", err) or int(re.search(r"decode (\d+)", err)[1]) >= 24:
    fail(f"--stop did not end the generation early:\n{err}")
earlier = answer[2:4]
cut2 = min(cut, answer.find(earlier))
out, _ = run("-p", "hello", "-n", "24", "--ignore-eos", "--stop", stop, "--stop", earlier)
if out != b"hello" + answer[:cut2] + b"\n":
    fail(f"--stop {stop!r} --stop {earlier!r}: {out!r}, expected the text before the earlier")
print(f"--stop: the text ended before {stop!r} ({cut} bytes), and before {earlier!r} when both")

# -n 0: the prompt is prefilled, nothing is generated.
out, err = run("-p", "hello", "-n", "0")
if out != b"hello\n" or not re.search(r"prefill 3 tokens .*decode 0 tokens", err):
    fail(f"-n 0: {out!r}\n{err}")
print("-n 0: the prompt prefilled, no token generated")

# A prompt on stdin.
with_p, _ = run("-p", "hello world", "-n", "6")
for args in ([], ["-f", "-"]):
    r, w = os.pipe()
    os.write(w, b"hello world\n")
    os.close(w)
    out, _ = run(*args, "-n", "6", stdin=r)
    os.close(r)
    if out != with_p:
        fail(f"stdin prompt {args}: {out!r}, with -p: {with_p!r}")
print("the prompt from stdin, and from -f -, is the prompt -p gives")

# --verbose-prompt: the ids of vkllm tokenize, each with its piece.
ids = subprocess.run([CLI, "tokenize", "-m", MODEL, "hello world"], capture_output=True,
                     text=True, timeout=60).stdout
ids = [int(t) for t in re.findall(r"-?\d+", ids)]
_, err = run("-p", "hello world", "-n", "1", "--verbose-prompt")
listed = [int(m) for m in re.findall(r"^ *(\d+) -> '", err, re.M)]
if f"number of tokens in prompt = {len(ids)}" not in err or listed != ids:
    fail(f"--verbose-prompt listed {listed}, vkllm tokenize gives {ids}:\n{err}")
if "prompt: 'hello world'" not in err:
    fail(f"--verbose-prompt did not show the prompt's text:\n{err}")
print(f"--verbose-prompt: the {len(ids)} ids of vkllm tokenize, with their pieces")

# --color: the prompt in yellow, reset before the answer.
plain, _ = run("-p", "hello", "-n", "6")
out, _ = run("-p", "hello", "-n", "6", "--color")
if out != b"\x1b[33mhello\x1b[0m" + plain[len(b"hello"):]:
    fail(f"--color: {out!r}, plain: {plain!r}")
print("--color: the prompt yellow, the answer uncolored")

# --repeat-last-n.
base, _ = run("-p", "hello", "-n", "16", "--ignore-eos")
off, _ = run("-p", "hello", "-n", "16", "--ignore-eos", "--repeat-penalty", "1.5",
             "--repeat-last-n", "0")
if off != base:
    fail(f"--repeat-last-n 0 did not turn the penalty off: {off!r} vs {base!r}")
whole, _ = run("-p", "hello", "-n", "16", "--ignore-eos", "--repeat-penalty", "1.5",
               "--repeat-last-n", "-1")
window, _ = run("-p", "hello", "-n", "16", "--ignore-eos", "--repeat-penalty", "1.5",
                "--repeat-last-n", "100")
if whole != window:
    fail(f"--repeat-last-n -1 differs from a window longer than the text: {whole!r} {window!r}")
for bad in ("-2", "abc", "1.5"):
    _, err = run("-p", "hello", "--repeat-last-n", bad, code=2)
    if "--repeat-last-n expects a whole number from -1" not in err:
        fail(f"--repeat-last-n {bad}: {err}")
print("--repeat-last-n: 0 is off, -1 is the whole context, bad values refused")

# --save-session / --load-session.
def prefilled(err):
    return int(re.search(r"prefill (\d+) tokens", err)[1])


with tempfile.TemporaryDirectory() as tmp:
    state = os.path.join(tmp, "hello.state")
    full, err_full = run("-p", "hello world", "-n", "8", "--ignore-eos")
    run("-p", "hello", "-n", "0", "--save-session", state)
    out, err = run("-p", "hello world", "-n", "8", "--ignore-eos", "--load-session", state)
    n_hello, n_all = prefilled(run("-p", "hello", "-n", "0")[1]), prefilled(err_full)
    if out != full or prefilled(err) != n_all - n_hello:
        fail(f"--load-session: {out!r} after prefilling {prefilled(err)} tokens; without it "
             f"{full!r} after {n_all}, and the state holds {n_hello}:\n{err}")
    if f"{n_hello} of the prompt's {n_all} tokens restored" not in err:
        fail(f"--load-session did not say what it restored:\n{err}")
    # After an answer: the state holds the prompt and the answer; the same prompt again keeps
    # all of it but its last token, whose logits choose the first answer token.
    answered = os.path.join(tmp, "answered.state")
    plain, _ = run("-p", "hello", "-n", "6", "--ignore-eos")
    first, _ = run("-p", "hello", "-n", "6", "--ignore-eos", "--save-session", answered)
    again, err = run("-p", "hello", "-n", "6", "--ignore-eos", "--load-session", answered)
    if first != plain or again != plain or prefilled(err) != 1:
        fail(f"--save-session after an answer: {first!r}, resumed {again!r} prefilling "
             f"{prefilled(err)}; plain {plain!r}:\n{err}")
    _, err = run("-p", "hello", "--load-session", os.path.join(tmp, "missing"), code=1)
    if "loading the session" not in err:
        fail(f"--load-session of a missing file: {err}")
print(f"--load-session: {n_hello} of {n_all} tokens restored, the same text; a state saved "
      "after an answer resumes its prompt; a missing file is an error")

# -s N: samples from one prefill, forked; sample i (seed S + i) is what a run with that seed
# alone gives (the tiny model's batched rows are bit-identical to single steps), greedy samples
# are all the greedy answer, and -s with --stop is refused.
args = ("-p", "hello there", "-n", "8", "--ignore-eos", "--print-ids")
out, err = run(*args, "-s", "3", "--temp", "1", "--seed", "5")
lines = out.decode().splitlines()
want_heads = [f"--- sample {i + 1} of 3 (seed {5 + i}) ---" for i in range(3)]
if lines[0::2] != want_heads or "prefill" not in err or "2 forks" not in err:
    fail(f"-s 3: {out!r}\n{err}")
for i in range(3):
    alone, _ = run(*args, "--temp", "1", "--seed", str(5 + i))
    if lines[2 * i + 1] != alone.decode().strip():
        fail(f"-s 3: sample {i + 1} is {lines[2 * i + 1]}, --seed {5 + i} alone {alone!r}")
if len(set(lines[1::2])) < 2:
    fail(f"-s 3: the samples are all the same with --temp 1: {lines}")
greedy, _ = run(*args)
out, _ = run(*args, "-s", "2")
if out.decode().splitlines()[1::2] != [greedy.decode().strip()] * 2:
    fail(f"-s 2 greedy: {out!r}, alone {greedy!r}")
_, err = run("-p", "hi", "-s", "2", "--stop", "x", code=2)
if "does not apply to -s" not in err:
    fail(f"-s with --stop: {err}")
print("-s: each sample is its seed's answer alone, from one prefill and 2 forks")

# ^C: the answer stops, the statistics come, exit status 130.
p = subprocess.Popen([*RUN, "-p", "hello", "-n", "100000", "--ignore-eos", "--context-shift"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.set_blocking(p.stdout.fileno(), False)
seen = b""
deadline = time.time() + 120
while len(seen) < 16 and time.time() < deadline:
    seen += p.stdout.read() or b""
    time.sleep(0.05)
p.send_signal(signal.SIGINT)
try:
    _, err = p.communicate(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    fail("^C did not stop run")
err = err.decode(errors="replace")
if p.returncode != 130 or "stopped by ^C after" not in err or "decode " not in err:
    fail(f"^C: exit status {p.returncode}:\n{err}")
print("^C: the answer stopped, the statistics printed, exit status 130")
