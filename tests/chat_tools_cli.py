#!/usr/bin/env python3
"""`vkllm chat --tools`: a tool call printed as a JSON line, the next input line sent back as the
tool's result, and the answer after it; and `vkllm run --chat` showing reasoning apart.

No small trained model calls tools, so the model here is scripted: a one-layer GPT-2 whose
blocks add nothing and whose token embeddings are zero, so that the hidden state at position p
is its position embedding, a one-hot vector e_p, and the output matrix maps e_p to the token
the script puts at p + 1. It writes whatever the script says, whatever the prompt's text. The
chat template renders a prompt of a fixed length for each step (and fails unless the tools
and the tool's result reach it), which puts each reply at a known position.

    chat_tools_cli.py VKLLM_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from gguf import GGUFWriter, TokenType

N_EMBD = 256
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
ANSWER = "It is sunny in Paris."
REASONED = "<think>\nThe user greets me.\n</think>\nHello there."
END = 256  # <|im_end|>

# The template: a 20-byte prompt that names the tool (no tools: it raises), or after a tool's
# result a 120-byte prompt that ends with it; the <tool_call> marker teaches the reply format.
TEMPLATE = """{%- if false %}<tool_call>{% endif -%}
{%- if messages[-1].role == 'tool' -%}
{{ '.' * (120 - messages[-1].content | length) ~ messages[-1].content }}
{%- elif tools -%}
{{ 'Q' * (20 - tools[0].function.name | length) ~ tools[0].function.name }}
{%- else -%}
{{ 'R' * 160 }}
{%- endif -%}"""
SCRIPT = [(20, CALL), (120, ANSWER), (160, REASONED)]


def byte_units():
    """GPT-2's byte-level BPE alphabet: the text of each byte's token."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return [table[b] for b in range(256)]


def write_model(path, chat_template=None):
    """The scripted model; with `chat_template` in its tokenizer.chat_template (for a program
    that takes no template file, as vkllm serve)."""
    tokens = byte_units() + ["<|im_end|>", "<|endoftext|>"]
    n_vocab = len(tokens)
    output = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    for start, text in SCRIPT:
        ids = list(text.encode()) + [END]
        for i, token in enumerate(ids):
            output[token, start - 1 + i] = 10.0
    w = GGUFWriter(path, "gpt2")
    w.add_context_length(N_EMBD)
    w.add_embedding_length(N_EMBD)
    w.add_feed_forward_length(N_EMBD)
    w.add_block_count(1)
    w.add_head_count(4)
    w.add_layer_norm_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types([TokenType.NORMAL] * 256 + [TokenType.CONTROL] * 2)
    w.add_token_merges([])
    w.add_eos_token_id(END)
    w.add_bos_token_id(END + 1)
    w.add_add_bos_token(False)
    if chat_template is not None:
        w.add_chat_template(chat_template)
    z = lambda *shape: np.zeros(shape, dtype=np.float32)
    one = lambda n: np.ones(n, dtype=np.float32)
    w.add_tensor("token_embd.weight", z(n_vocab, N_EMBD))
    w.add_tensor("position_embd.weight", np.eye(N_EMBD, dtype=np.float32))
    w.add_tensor("output_norm.weight", one(N_EMBD))
    w.add_tensor("output_norm.bias", z(N_EMBD))
    w.add_tensor("output.weight", output)
    for name, shape in [("attn_qkv", (3 * N_EMBD, N_EMBD)), ("attn_output", (N_EMBD, N_EMBD)),
                        ("ffn_up", (N_EMBD, N_EMBD)), ("ffn_down", (N_EMBD, N_EMBD))]:
        w.add_tensor(f"blk.0.{name}.weight", z(*shape))
        w.add_tensor(f"blk.0.{name}.bias", z(shape[0]))
    for name in ("attn_norm", "ffn_norm"):
        w.add_tensor(f"blk.0.{name}.weight", one(N_EMBD))
        w.add_tensor(f"blk.0.{name}.bias", z(N_EMBD))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    vkllm = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "scripted.gguf")
        write_model(model)
        template = os.path.join(tmp, "template.jinja")
        with open(template, "w") as f:
            f.write(TEMPLATE)
        tools = os.path.join(tmp, "tools.json")
        with open(tools, "w") as f:
            json.dump([{"type": "function", "function": {
                "name": "get_weather", "description": "The weather in a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}], f)
        result = "sunny, 21 C"
        run = subprocess.run([vkllm, "chat", "-m", model, "--chat-template-file", template,
                              "--tools", tools, "--temp", "0", "-n", "100"],
                             input=f"What is the weather in Paris?\n{result}\n".encode(),
                             capture_output=True, timeout=300)
        out = run.stdout.decode()
        lines = [line for line in out.splitlines() if line]
        print(f"chat --tools: exit {run.returncode}, stdout {out!r}")
        if run.returncode != 0 or len(lines) != 2:
            failures.append(f"chat --tools: want a call line and an answer line; stderr "
                            f"{run.stderr.decode()!r}")
        else:
            call = json.loads(lines[0])
            if call["name"] != "get_weather" or call["arguments"] != {"city": "Paris"} or \
                    len(call["id"]) != 9:
                failures.append(f"chat --tools: the call is {call}")
            if lines[1] != ANSWER:
                failures.append(f"chat --tools: the answer after the result is {lines[1]!r}")

        run = subprocess.run([vkllm, "run", "-m", model, "--chat", "--chat-template-file",
                              template, "-p", "hi", "--temp", "0", "-n", "100"],
                             capture_output=True, timeout=300)
        out, err = run.stdout.decode(), run.stderr.decode()
        print(f"run --chat: exit {run.returncode}, stdout {out!r}")
        if run.returncode != 0 or out.strip() != "Hello there." or \
                "[reasoning] The user greets me." not in err or "greets" in out:
            failures.append(f"run --chat: the reasoning is not apart: stdout {out!r}, stderr "
                            f"{err!r}")
    for f in failures:
        print(f)
    print(f"chat tools and reasoning: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
