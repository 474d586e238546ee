#!/usr/bin/env python3
"""vkllm bench's prefill FLOPs per token against a count made here from the tensor shapes that
llama.cpp's own GGUF reader (gguf-py) reads: every weight matrix of the layers multiplied once
per token (2 x rows x columns; of a mixture's [in, out, experts] tensors the experts a token
uses), the output head (the embedding where it is tied) once per prompt, and attention's QK^T
and PV over the (n + 1) / 2 keys a causal prompt of n averages. TFLOPS = that x tokens/s.

usage: check_bench_flops.py VKLLM_CLI MODELS_DIR"""
import json
import subprocess
import sys

from gguf import GGUFReader

MODELS = ["tiny-qwen2-f32", "tiny-qwen2-tied-f16", "tiny-gpt2-f32", "tiny-qwen2moe-f32",
          "tiny-gptoss-mxfp4", "tiny-llama-f16"]
PROMPTS = [8, 40]


def expected(path, n):
    r = GGUFReader(path)
    field = lambda k, d=None: r.fields[k].contents() if k in r.fields else d
    arch = field("general.architecture")
    used = field(f"{arch}.expert_used_count", 0)
    weights = head = tied = 0
    for t in r.tensors:
        dims = [int(d) for d in t.shape]
        if t.name == "output.weight":
            head = 2 * dims[0] * dims[1]
        elif t.name == "token_embd.weight":
            tied = 2 * dims[0] * dims[1]
        elif t.name.startswith("blk.") and t.name.endswith(".weight") and len(dims) >= 2:
            experts = used if len(dims) == 3 and "_exps." in t.name else 1
            weights += 2 * dims[0] * dims[1] * experts
    head = head or tied
    heads = field(f"{arch}.attention.head_count")
    key = field(f"{arch}.attention.key_length", field(f"{arch}.embedding_length") // heads)
    value = field(f"{arch}.attention.value_length", key)
    per_key = 2 * heads * (key + value) * field(f"{arch}.block_count")
    return weights + head / n + per_key * (n + 1) / 2


def main():
    cli, models = sys.argv[1], sys.argv[2]
    failures = 0
    for name in MODELS:
        path = f"{models}/{name}.gguf"
        p = ",".join(str(n) for n in PROMPTS)
        out = subprocess.run([cli, "bench", "-m", path, "-p", p, "-n", "0", "-r", "1", "--json"],
                             capture_output=True, text=True, check=True).stdout
        rows = [json.loads(line) for line in out.splitlines()]
        for row, n in zip(rows, PROMPTS):
            want = expected(path, n)
            got = row["flops_per_token"]
            tflops = want * row["avg_ts"] / 1e12
            ok = abs(got - want) <= 0.5 and abs(row["tflops"] - tflops) <= 1e-5 * tflops
            failures += not ok
            print(f"{name} {row['test']}: bench {got} FLOP/token, {row['tflops']:.4g} TFLOPS; "
                  f"counted here {want:.1f}, {tflops:.4g}: {'ok' if ok else 'DIFFERENT'}")
        if len(rows) != len(PROMPTS):
            failures += 1
            print(f"{name}: {len(rows)} pp rows, not {len(PROMPTS)}")
    print(f"bench flops: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
