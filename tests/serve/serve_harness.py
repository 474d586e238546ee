"""What the end-to-end tests of `vkllm serve` share: starting a server of their own on a free
port and stopping it, plain HTTP and server-sent events with the standard library, and the
checks every test ends with (the server exits 0 on SIGTERM, and the Vulkan validation layer,
which each server runs under, reported nothing).

Each test runs as `python3 tests/serve/TEST.py SERVE_BINARY CLI_BINARY OUTPUT_DIR`. SmolLM2
comes from the model cache scripts/test fills ($VKLLM_MODEL_CACHE, else
$XDG_CACHE_HOME/vkllm/models, else ~/.cache/vkllm/models); without it a test exits 77 (skipped).
"""
import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf"
READY = "vkllm serve: listening on http://"
# Loading SmolLM2 and compiling its pipelines under the validation layer on lavapipe.
START_SECONDS = 120
# Local connections only: a proxy from the environment must not be asked for 127.0.0.1.
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"


def cache_dir():
    if os.environ.get("VKLLM_MODEL_CACHE"):
        return os.environ["VKLLM_MODEL_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vkllm", "models")


class Args:
    """The command line every test takes: the server, the CLI, an output directory."""

    def __init__(self):
        if len(sys.argv) < 4:
            print(f"usage: {sys.argv[0]} SERVE_BINARY CLI_BINARY OUTPUT_DIR")
            sys.exit(2)
        self.serve, self.cli, self.out = sys.argv[1], sys.argv[2], sys.argv[3]
        os.makedirs(self.out, exist_ok=True)
        self.model = os.path.join(cache_dir(), SMOLLM2)

    def require_model(self):
        if not os.path.exists(self.model):
            print(f"skipped: {self.model} is absent (scripts/test downloads it)")
            sys.exit(77)


class Checks:
    """Failures are collected, printed as they happen, and decide the exit status."""

    def __init__(self, name):
        self.name, self.failures, self.passed = name, [], 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"ok: {what}")
        else:
            self.failures.append(what)
            print(f"FAIL: {what}" + (f"\n  {detail}" if detail != "" else ""))
        return ok

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {len(self.failures)} failed")
        sys.exit(1 if self.failures else 0)


def deadline(seconds, checks):
    """A hard stop for the whole test: past it, whatever hangs is a failure, not a CI timeout."""

    def expired(*_):
        checks.failures.append(f"the test's deadline of {seconds} s passed")
        print(f"FAIL: the test's deadline of {seconds} s passed")
        for server in list(Server.running):
            server.kill()
        checks.finish()

    signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)


class Server:
    """A `vkllm-serve --port 0 --validate` of the test's own; the port comes from its ready line.
    Its stderr goes to OUTPUT_DIR/NAME.stderr, where the validation layer's messages land."""

    running = []

    def __init__(self, args, name, extra=(), model=None):
        self.name = name
        self.stderr_path = os.path.join(args.out, f"serve-{name}.stderr")
        self.command = [args.serve, "-m", model or args.model, "--port", "0", "--validate",
                        *extra]
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=self._stderr,
                                     stdin=subprocess.DEVNULL)
        Server.running.append(self)
        self.stdout_lines = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self.port = self._wait_ready()
        self.host = "127.0.0.1"

    def _read_stdout(self):
        for line in self.proc.stdout:
            self.stdout_lines.put(line.decode(errors="replace"))
        self.stdout_lines.put(None)

    def _wait_ready(self):
        end = time.monotonic() + START_SECONDS
        while time.monotonic() < end:
            try:
                line = self.stdout_lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise RuntimeError(f"{self.command} exited with {self.proc.wait()} before it was "
                                   f"ready:\n{self.stderr()[-2000:]}")
            if line.startswith(READY):
                return int(line.strip().rsplit(":", 1)[1])
        self.kill()
        raise RuntimeError(f"{self.command} printed no ready line in {START_SECONDS} s")

    @property
    def pid(self):
        return self.proc.pid

    def stderr(self):
        if not self._stderr.closed:
            self._stderr.flush()
        with open(self.stderr_path, "rb") as f:
            return f.read().decode(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def rss_kib(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def connection(self, timeout=60):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self in Server.running:
            Server.running.remove(self)

    def stop(self, checks):
        """SIGTERM: the server must exit 0 within 30 s, its validation layer silent."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=30)
            checks.check(code == 0, f"{self.name}: the server exits 0 on SIGTERM",
                         f"exit status {code}")
        except subprocess.TimeoutExpired:
            checks.check(False, f"{self.name}: the server exits within 30 s of SIGTERM")
            self.kill()
        if self in Server.running:
            Server.running.remove(self)
        self._stderr.close()
        err = self.stderr()
        bad = [line for line in err.splitlines()
               if "Vulkan validation" in line or "VUID-" in line or "Validation Error" in line]
        checks.check(not bad, f"{self.name}: the Vulkan validation layer reports nothing",
                     "\n  ".join(bad[:5]))


def request(server, method, path, body=None, headers=None, timeout=120):
    """One request on a fresh connection: (status, headers, body bytes). A dict body is JSON."""
    conn = server.connection(timeout)
    try:
        hdrs = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def post_json(server, path, body, headers=None, timeout=120):
    status, hdrs, data = request(server, "POST", path, body, headers, timeout)
    try:
        return status, hdrs, json.loads(data)
    except ValueError:
        return status, hdrs, data


class SseError(Exception):
    pass


def read_sse(response, max_events=10000):
    """The events of a text/event-stream response, strictly: each event a single `data: ` line
    and a blank line; JSON objects, then `[DONE]` last, then the end of the body. Returns the
    parsed objects (without [DONE]); raises SseError on anything else."""
    if not response.getheader("Content-Type", "").startswith("text/event-stream"):
        raise SseError(f"Content-Type {response.getheader('Content-Type')!r}")
    events, done = [], False
    for _ in range(max_events):
        line = response.readline()
        if line == b"":
            if not done:
                raise SseError(f"the stream ended after {len(events)} events without [DONE]")
            return events
        if done:
            raise SseError(f"data after [DONE]: {line!r}")
        if not line.startswith(b"data: ") or not line.endswith(b"\n"):
            raise SseError(f"not a data line: {line!r}")
        if response.readline() != b"\n":
            raise SseError("an event not ended by a blank line")
        payload = line[len(b"data: "):-1]
        if payload == b"[DONE]":
            done = True
            continue
        try:
            events.append(json.loads(payload.decode("utf-8")))
        except (ValueError, UnicodeDecodeError) as e:
            raise SseError(f"an event that is not UTF-8 JSON ({e}): {payload!r}")
    raise SseError(f"more than {max_events} events")


def assemble_chat_stream(events):
    """The text and finish reason of each choice of a chat.completion.chunk stream, checked for
    the chunk shape (one id, one object type, one finish per choice, last)."""
    texts, finish = {}, {}
    ids = {e.get("id") for e in events}
    if len(ids) != 1 or None in ids:
        raise SseError(f"the chunks carry ids {ids}")
    for e in events:
        if e.get("object") != "chat.completion.chunk":
            raise SseError(f"object {e.get('object')!r}")
        for c in e.get("choices", []):
            i = c["index"]
            if i in finish:
                raise SseError(f"choice {i} has a chunk after its finish_reason")
            texts[i] = texts.get(i, "") + (c.get("delta", {}).get("content") or "")
            if c.get("finish_reason") is not None:
                finish[i] = c["finish_reason"]
    if set(finish) != set(texts):
        raise SseError(f"choices {sorted(set(texts) - set(finish))} never finish")
    return texts, finish


def stream_chat(server, body, timeout=120, headers=None):
    """POST a streaming chat request; (events, texts, finish) or raises SseError."""
    conn = server.connection(timeout)
    try:
        conn.request("POST", "/v1/chat/completions", body=json.dumps({**body, "stream": True}),
                     headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        if r.status != 200:
            raise SseError(f"status {r.status}: {r.read()[:300]!r}")
        events = read_sse(r)
        texts, finish = assemble_chat_stream(events)
        return events, texts, finish
    finally:
        conn.close()


def chat(server, body, timeout=120, headers=None):
    """A non-streamed chat request: (status, parsed body)."""
    status, _, data = post_json(server, "/v1/chat/completions", body, headers, timeout)
    return status, data


def metrics(server, headers=None):
    """/metrics as {name{labels}: value} (samples only, comments skipped)."""
    status, _, data = request(server, "GET", "/metrics", headers=headers, timeout=30)
    if status != 200:
        raise RuntimeError(f"/metrics: status {status}")
    out = {}
    for line in data.decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out
