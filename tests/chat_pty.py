#!/usr/bin/env python3
"""Drives `vkllm chat` in a pseudo-terminal, as a person at a keyboard would.

    python3 tests/chat_pty.py path/to/vkllm path/to/tiny-qwen2-f32.gguf

The model has random weights and --ignore-eos, so every answer runs until -n or the context
ends it: long enough to be interrupted. Checks, each in its own chat:
  - ^C during an answer stops it and the chat goes on: the next turn reuses the cache, a turn
    that fills the context ends its answer and says so, a message that no longer fits is
    refused with the same note, /reset starts over, /exit quits with status 0;
  - a line ending in a backslash goes on to the next (the "... " prompt), and ^C at the prompt
    quits with status 0;
  - ^D at the prompt quits with status 0;
  - --context-shift keeps a chat going past -c;
  - where the build has line editing (the end of `vkllm chat --help` says), the arrow keys
    edit the line instead of reaching the model, the up arrow recalls the last turn, and
    --color colors the typed text only.
"""
import os
import pty
import re
import select
import subprocess
import sys
import time

CLI, MODEL = sys.argv[1], sys.argv[2]
TIMEOUT = 120  # seconds for one expected output, lavapipe under load included


class Chat:
    def __init__(self, *args):
        argv = [CLI, "chat", "-m", MODEL, "--template", "chatml", "--temp", "0",
                "--ignore-eos", *args]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(CLI, argv)
        self.out = b""
        self.seen = 0  # output before this has been matched already

    def read_some(self, deadline):
        ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.time()))
        if not ready:
            return False
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # the child is gone (EIO on Linux)
            return False
        self.out += data
        return bool(data)

    def expect(self, pattern):
        """Waits for `pattern` (bytes regex) in the output after the last match."""
        deadline = time.time() + TIMEOUT
        rx = re.compile(pattern, re.S)
        while True:
            m = rx.search(self.out, self.seen)
            if m:
                self.seen = m.end()
                return m
            if not self.read_some(deadline):
                fail(f"expected {pattern!r}; the chat wrote:\n{self.out.decode(errors='replace')}")

    def send(self, text):
        os.write(self.fd, text)

    def at_prompt(self, text, prompt=rb"\n> "):
        """Waits for the prompt, then types `text`: typed ahead, a line would be echoed before
        the prompt that reads it, and ^C could land at the prompt instead of in an answer. A
        line editor writes its prompt before it takes the terminal out of line mode, and what
        is typed in between is echoed twice; a person is never that quick, so wait a moment."""
        self.expect(prompt)
        time.sleep(0.3)
        self.send(text)

    def exit_status(self):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                while self.read_some(time.time()):
                    pass
                return os.waitstatus_to_exitcode(status)
            self.read_some(time.time() + 0.1)
        fail("the chat did not exit; it wrote:\n" + self.out[-800:].decode(errors="replace"))


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def interrupt_answer(chat, line):
    """Sends a turn, waits for its answer to begin, then ^C."""
    chat.at_prompt(line + b"\r")
    chat.expect(re.escape(line) + rb"\r\n[^[]")  # the echo, then answer text (not a note)
    chat.send(b"\x03")
    chat.expect(rb"\[stopped; \^C at the prompt or \^D quits\]")


# ^C during answers, a full context, /reset, /exit. Each turn keeps the cached tokens the
# rendered conversation shares (about 45 after two turns: random text retokenizes shorter), so
# with -n 180 the second answer fits in 256 and the third fills it.
chat = Chat("-c", "256", "-n", "180")
interrupt_answer(chat, b"hello there")
chat.at_prompt(b"and again\r")
# The second turn prefills only its new tokens: the cache after the stopped answer is right.
m = chat.expect(rb"\[prefilled (\d+) new tokens of (\d+);")
if not int(m.group(1)) < int(m.group(2)):
    fail(f"the turn after ^C prefilled everything again: {m.group(0)!r}")
chat.at_prompt(b"a third message\r")
chat.expect(rb"\[the context of 256 tokens is full: [^\]]*/reset starts over")
chat.at_prompt(b"still there?\r")
chat.expect(rb"\[the context of 256 tokens is full: [^\]]*/reset starts over")
chat.at_prompt(b"/reset\r")
chat.expect(rb"\[the conversation starts over\]")
interrupt_answer(chat, b"hi again")
chat.at_prompt(b"/exit\r")
status = chat.exit_status()
if status != 0:
    fail(f"/exit: exit status {status}")
print("^C stopped answers, the chat went on past a full context, /reset, /exit: exit 0")

# Multi-line input, then ^C at the prompt.
chat = Chat("-n", "8")
chat.at_prompt(b"one line \\\r")
chat.expect(rb"\.\.\. ")
chat.send(b"and the next\r")
chat.expect(rb"\[prefilled \d+ new tokens of \d+;")
chat.expect(rb"\n> ")
# The prompt is written just before the read starts; a ^C in between (microseconds) would be
# handled before the read and leave it waiting, so give the read time to begin.
time.sleep(0.5)
chat.send(b"\x03")
status = chat.exit_status()
if status != 0:
    fail(f"^C at the prompt: exit status {status}")
print("a trailing backslash continued the line; ^C at the prompt: exit 0")

# ^D at the prompt.
chat = Chat("-n", "8")
chat.at_prompt(b"\x04")
status = chat.exit_status()
if status != 0:
    fail(f"^D: exit status {status}")
print("^D: exit 0")

# --context-shift: answers go on past -c, and so does the next turn.
chat = Chat("-c", "32", "-n", "40", "--context-shift")
chat.at_prompt(b"hello there\r")
chat.expect(rb"\[prefilled 20 new tokens of 20;")
chat.at_prompt(b"and again\r")
chat.expect(rb"\[prefilled \d+ new tokens of \d+;")
chat.at_prompt(b"\x04")
status = chat.exit_status()
if status != 0:
    fail(f"--context-shift: exit status {status}")
print("--context-shift: two turns of 40 tokens in a context of 32: exit 0")

# Line editing: what the model is sent is the edited line (--verbose-prompt prints each turn's
# tokens), never the escape sequences of the keys.
editor = subprocess.run([CLI, "chat", "--help"], capture_output=True, text=True).stdout
editor = re.search(r"line editing: (\w+)", editor).group(1)
if editor == "none":
    print("line editing: not in this build (no libedit or readline found)")
    sys.exit(0)
chat = Chat("-n", "4", "--verbose-prompt", "--color")
# The prompt and the typed text in bold green; three left arrows, then the missing letter.
colored_prompt = rb"\n\x1b\[1m\x1b\[32m> "
chat.at_prompt(b"hllo\x1b[D\x1b[D\x1b[De\r", colored_prompt)
chat.expect(rb"\x1b\[0m")  # the color ends with the line
chat.expect(rb"prompt: '[^']*user\r?\nhello<\|im_end\|>")
chat.expect(rb"\[prefilled \d+ new tokens of \d+;")
chat.at_prompt(b"\x1b[A\r", colored_prompt)  # the up arrow: the last turn again
chat.expect(rb"prompt: '[^']*user\r?\nhello<\|im_end\|>")
chat.expect(rb"\[prefilled \d+ new tokens of \d+;")
chat.at_prompt(b"\x04", colored_prompt)
status = chat.exit_status()
if status != 0:
    fail(f"line editing: exit status {status}")
if b"\x1b[D" in chat.out.split(b"prompt: ", 1)[1].split(b"\n", 1)[0]:
    fail("an arrow key's escape sequence reached the model")
print(f"line editing ({editor}): arrow keys edited the line, the up arrow recalled it, "
      "--color colored the typed text: exit 0")
