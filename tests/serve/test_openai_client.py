#!/usr/bin/env python3
"""Serve.OpenAiClient: the real `openai` package (PyPI, pinned by scripts/deps.sh's
vkllm_install_serve_deps) against `vkllm serve` on SmolLM2, each answer compared with an
independent reference:

  - greedy chat text equals `vkllm run --chat` on the same messages, and the prompt's token
    count equals the tokens run prefilled;
  - streaming: the chunks assembled equal the non-streamed answer, with a final usage chunk;
  - a json_schema response_format (strict): the content validates under `jsonschema`;
  - logprobs and top_logprobs equal `vkllm run --jsonl --top-logprobs` (1e-4, the same tokens'
    bytes: OpenAI's entries carry no token id; an "id" the server adds is compared too);
  - n=3 with a seed: three different choices, the same again with the same seed, others with
    another seed;
  - tools, on the scripted tool-calling model of tests/chat_tools_cli.py: a tool call with
    finish_reason tool_calls, the answer after the tool's result, reasoning_content apart;
    tool_choice "required" (the model's own call) and a named function (that call is forced,
    its arguments valid under its schema);
  - completions: greedy text equals `vkllm run`'s continuation, and echo puts the prompt first;
  - errors as openai exceptions: BadRequestError (400, the field named), AuthenticationError
    (401, a wrong key), NotFoundError (404).

    python3 tests/serve/test_openai_client.py SERVE_BINARY CLI_BINARY OUTPUT_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from serve_harness import Args, Checks, Server, deadline  # noqa: E402

import chat_tools_cli  # noqa: E402  (the scripted tool-calling model's writer)
import jsonschema  # noqa: E402
import openai  # noqa: E402

KEY = "sk-vkllm-test-0123456789"
MODEL_ID = "SmolLM2-135M-Instruct.Q4_1"
args = Args()
args.require_model()
checks = Checks("Serve.OpenAiClient")
check = checks.check
deadline(300, checks)


def client(server, key=KEY):
    return openai.OpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key=key,
                         max_retries=0, timeout=120)


def run_jsonl(message, max_tokens, top):
    p = subprocess.run([args.cli, "run", "-m", args.model, "--chat", "-p", message, "--temp", "0",
                        "-n", str(max_tokens), "--jsonl", "--top-logprobs", str(top)],
                       capture_output=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"vkllm run --jsonl: exit {p.returncode}: {p.stderr.decode()[-500:]}")
    return [json.loads(line) for line in p.stdout.decode().splitlines()]


def close(a, b):
    return abs(a - b) <= 1e-4


def greedy_text(c):
    cases = [([{"role": "user", "content": "What is the capital of France?"}],
              ["-p", "What is the capital of France?"]),
             ([{"role": "system", "content": "You answer in one short sentence."},
               {"role": "user", "content": "Why is the sky blue?"}],
              ["--system", "You answer in one short sentence.", "-p", "Why is the sky blue?"])]
    for messages, cli_args in cases:
        r = c.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0,
                                      max_tokens=32)
        p = subprocess.run([args.cli, "run", "-m", args.model, "--chat", "--temp", "0", "-n", "32",
                            *cli_args], capture_output=True, timeout=300)
        want = p.stdout.decode(errors="replace")
        got = r.choices[0].message.content
        check(p.returncode == 0 and want.endswith("\n") and got == want[:-1],
              f"greedy chat equals vkllm run --chat ({cli_args[-1]!r})",
              f"server {got!r}, run {want!r}")
        prefilled = [w for w in p.stderr.decode().split("|") if "prefill" in w]
        check(prefilled and f"prefill {r.usage.prompt_tokens} tokens" in prefilled[0],
              "usage.prompt_tokens is the number of tokens run prefilled",
              f"{r.usage} / {prefilled}")
        check(r.choices[0].finish_reason in ("stop", "length") and r.model == MODEL_ID and
              r.object == "chat.completion" and r.usage.completion_tokens > 0,
              "the completion's shape: finish_reason, model, object, usage", str(r)[:400])


def streaming(c):
    messages = [{"role": "user", "content": "Name three colours."}]
    whole = c.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0,
                                      max_tokens=24)
    chunks = list(c.chat.completions.create(model=MODEL_ID, messages=messages, temperature=0,
                                            max_tokens=24, stream=True,
                                            stream_options={"include_usage": True}))
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    check(text == whole.choices[0].message.content and text != "",
          "streamed chunks assemble to the non-streamed greedy answer",
          f"stream {text!r}, whole {whole.choices[0].message.content!r}")
    finishes = [ch.choices[0].finish_reason for ch in chunks if ch.choices]
    check(finishes[-1] == whole.choices[0].finish_reason and
          all(f is None for f in finishes[:-1]),
          "only the last content chunk has the finish_reason", str(finishes))
    last = chunks[-1]
    check(last.choices == [] and last.usage is not None and
          last.usage.completion_tokens == whole.usage.completion_tokens and
          last.usage.prompt_tokens == whole.usage.prompt_tokens,
          "include_usage: a last chunk with no choices and the same usage", str(last)[:400])


def json_schema(c):
    schema = {"type": "object",
              "properties": {"city": {"type": "string", "maxLength": 24},
                             "country": {"type": "string", "maxLength": 24}},
              "required": ["city", "country"], "additionalProperties": False}
    r = c.chat.completions.create(
        model=MODEL_ID, temperature=0, max_tokens=128,
        messages=[{"role": "user", "content": "Which city is the capital of France? Answer in "
                   "JSON with the keys city and country."}],
        response_format={"type": "json_schema",
                         "json_schema": {"name": "capital", "strict": True, "schema": schema}})
    content = r.choices[0].message.content
    try:
        jsonschema.validate(json.loads(content), schema)
        valid = True
    except (ValueError, jsonschema.ValidationError) as e:
        valid, content = False, f"{content!r}: {e}"
    check(valid and r.choices[0].finish_reason == "stop",
          "a json_schema answer parses and validates under jsonschema", content)


def logprobs(c):
    message, n, top = "Hi", 8, 5
    r = c.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": message}],
                                  temperature=0, max_tokens=n, logprobs=True, top_logprobs=top)
    got = r.choices[0].logprobs.content
    want = run_jsonl(message, n, top)
    check(len(got) == len(want) and len(want) > 0,
          "as many logprob entries as vkllm run --jsonl's tokens", f"{len(got)} vs {len(want)}")
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        same = g.bytes == w["bytes"] and close(g.logprob, w["logprob"]) and \
            len(g.top_logprobs) == len(w["top"]) == top
        # The server may say which token (an extra "id", as llama-server does): then the same.
        ids = (g.model_extra or {}).get("id")
        same = same and (ids is None or ids == w["id"])
        for ga, wa in zip(g.top_logprobs, w["top"]):
            same = same and ga.bytes == wa["bytes"] and close(ga.logprob, wa["logprob"])
        if not same:
            bad.append(f"token {i}: server {g}, run {w}")
    check(not bad, f"logprobs and top {top} equal vkllm run --jsonl --top-logprobs (1e-4)",
          "\n  ".join(bad[:3]))
    text = "".join(bytes(w["bytes"]).decode("utf-8", errors="replace") for w in want)
    check(r.choices[0].message.content == text, "the logprobs' tokens spell the content",
          f"{r.choices[0].message.content!r} vs {text!r}")


def n_with_seed(c):
    ask = dict(model=MODEL_ID, messages=[{"role": "user", "content": "Tell me a story."}],
               temperature=1.0, max_tokens=12)
    # The prompt in a slot's cache first: a prompt prefilled whole and one read from the cache
    # give logits that differ in the last bits (about 1e-4 on lavapipe), and a sampled token
    # can follow them; so can the number of sequences decoded together.
    c.chat.completions.create(n=1, **{**ask, "max_tokens": 1})
    a = c.chat.completions.create(n=3, seed=42, **ask)
    b = c.chat.completions.create(n=3, seed=42, **ask)
    ta = [ch.message.content for ch in sorted(a.choices, key=lambda ch: ch.index)]
    tb = [ch.message.content for ch in sorted(b.choices, key=lambda ch: ch.index)]
    check(len(a.choices) == 3 and [ch.index for ch in sorted(a.choices, key=lambda x: x.index)]
          == [0, 1, 2], "n=3 gives three choices, indexed 0 to 2", str(ta))
    check(ta == tb, "n=3 with the same seed gives the same three choices", f"{ta} vs {tb}")
    check(len(set(ta)) > 1, "the three sampled choices are not all the same", str(ta))
    other = c.chat.completions.create(n=3, seed=7, **ask)
    check(sorted(ch.message.content for ch in other.choices) != sorted(ta),
          "another seed gives other choices", str(other.choices))


def completions(c):
    prompt = "Once upon a time"
    r = c.completions.create(model=MODEL_ID, prompt=prompt, temperature=0, max_tokens=16)
    p = subprocess.run([args.cli, "run", "-m", args.model, "-p", prompt, "--temp", "0", "-n",
                        "16"], capture_output=True, timeout=300)
    want = p.stdout.decode(errors="replace")
    check(p.returncode == 0 and want == prompt + r.choices[0].text + "\n",
          "completions: greedy text equals vkllm run's continuation of the prompt",
          f"server {r.choices[0].text!r}, run {want!r}")
    echoed = c.completions.create(model=MODEL_ID, prompt=prompt, temperature=0, max_tokens=16,
                                  echo=True)
    check(echoed.choices[0].text == prompt + r.choices[0].text,
          "completions: echo puts the prompt before the same text", echoed.choices[0].text)


def errors(server, c):
    try:
        c.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": "hi"}],
                                  temperature="hot")
        check(False, "a temperature that is a string raises BadRequestError")
    except openai.BadRequestError as e:
        check(e.status_code == 400 and (e.param == "temperature" or "temperature" in e.message),
              "a temperature that is a string raises BadRequestError naming the field",
              f"{e.status_code} {e.param} {e.message}")
    try:
        c.chat.completions.create(model=MODEL_ID, messages="hi")
        check(False, "messages that is not an array raises BadRequestError")
    except openai.BadRequestError as e:
        check(e.status_code == 400 and "messages" in (e.param or "") + e.message,
              "messages that is not an array raises BadRequestError naming the field",
              f"{e.param} {e.message}")
    try:
        client(server, "sk-wrong").chat.completions.create(
            model=MODEL_ID, messages=[{"role": "user", "content": "hi"}], max_tokens=2)
        check(False, "a wrong API key raises AuthenticationError")
    except openai.AuthenticationError as e:
        check(e.status_code == 401 and e.code == "invalid_api_key",
              "a wrong API key raises AuthenticationError (401, invalid_api_key)",
              f"{e.status_code} {e.code}")
    try:
        c.models.retrieve("no-such-model")
        check(False, "an unknown route raises NotFoundError")
    except openai.NotFoundError as e:
        check(e.status_code == 404, "an unknown model's route raises NotFoundError (404)")


def tools():
    model = os.path.join(args.out, "scripted-tools.gguf")
    chat_tools_cli.write_model(model, chat_tools_cli.TEMPLATE)
    server = Server(args, "openai-tools", model=model)
    try:
        c = client(server, "unused")
        weather = [{"type": "function", "function": {
            "name": "get_weather", "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
        messages = [{"role": "user", "content": "What is the weather in Paris?"}]
        r = c.chat.completions.create(model="scripted", messages=messages, tools=weather,
                                      temperature=0, max_tokens=100)
        choice = r.choices[0]
        calls = choice.message.tool_calls or []
        ok = len(calls) == 1 and calls[0].type == "function" and \
            calls[0].function.name == "get_weather" and calls[0].id
        ok = ok and json.loads(calls[0].function.arguments) == {"city": "Paris"}
        check(ok and choice.finish_reason == "tool_calls",
              "the scripted model's tool call: get_weather({city: Paris}), finish_reason "
              "tool_calls", str(choice)[:500])
        if ok:
            messages += [{"role": "assistant", "content": None, "tool_calls": [
                {"id": calls[0].id, "type": "function",
                 "function": {"name": "get_weather", "arguments": calls[0].function.arguments}}]},
                {"role": "tool", "tool_call_id": calls[0].id, "content": "sunny, 21 C"}]
            r = c.chat.completions.create(model="scripted", messages=messages, tools=weather,
                                          temperature=0, max_tokens=100)
            check(r.choices[0].message.content == chat_tools_cli.ANSWER and
                  r.choices[0].finish_reason == "stop",
                  "the tool's result sent back gives the scripted answer", str(r.choices[0]))
        # tool_choice forces a call through a grammar: "required" lets the model's own call
        # through; naming get_time makes the reply that call, with arguments its schema allows,
        # where the model would have called get_weather.
        r = c.chat.completions.create(model="scripted", messages=messages[:1], tools=weather,
                                      tool_choice="required", temperature=0, max_tokens=100)
        calls = r.choices[0].message.tool_calls or []
        check(len(calls) == 1 and calls[0].function.name == "get_weather" and
              json.loads(calls[0].function.arguments) == {"city": "Paris"} and
              r.choices[0].finish_reason == "tool_calls",
              "tool_choice required: the model's own call", str(r.choices[0])[:500])
        zone = {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}},
                "required": ["zone"]}
        both = weather + [{"type": "function", "function": {
            "name": "get_time", "description": "The time in a zone", "parameters": zone}}]
        r = c.chat.completions.create(
            model="scripted", messages=messages[:1], tools=both, temperature=0, max_tokens=120,
            tool_choice={"type": "function", "function": {"name": "get_time"}})
        calls = r.choices[0].message.tool_calls or []
        ok = len(calls) == 1 and calls[0].function.name == "get_time"
        if ok:
            jsonschema.validate(json.loads(calls[0].function.arguments), zone)
        check(ok and r.choices[0].finish_reason == "tool_calls",
              "tool_choice naming get_time forces that call, its arguments valid under its "
              "schema", str(r.choices[0])[:500])
        # The 160-byte prompt and the reasoned reply fit the model's 256 positions.
        r = c.chat.completions.create(model="scripted", temperature=0, max_tokens=90,
                                      messages=[{"role": "user", "content": "hi"}])
        m = r.choices[0].message
        check(m.content == "Hello there." and
              (m.model_extra or {}).get("reasoning_content") == "The user greets me.",
              "reasoning_content apart from the content", str(m))
    finally:
        server.stop(checks)


server = Server(args, "openai", extra=["--api-key", KEY, "--ctx-size", "1024"])
try:
    c = client(server)
    ids = [m.id for m in c.models.list().data]
    check(ids == [MODEL_ID], "models.list() names the model by its file name", str(ids))
    # First, on slots that hold nothing: the prompt is prefilled whole, as vkllm run does (a
    # prompt partly read from a cache gives logits that differ by about 1e-4).
    logprobs(c)
    greedy_text(c)
    streaming(c)
    json_schema(c)
    n_with_seed(c)
    completions(c)
    errors(server, c)
finally:
    server.stop(checks)
tools()
checks.finish()
