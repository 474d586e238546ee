#!/usr/bin/env python3
"""`vkllm embed` and `vkllm similarity` on a tiny bert encoder (ctest Tool.EmbedAndSimilarity):
one JSON line per input in order, each of n_embd floats; --normalize gives unit vectors; a batch
equals its inputs one at a time (-b 1); --pooling none's rows average to the mean-pooled vector;
-f FILE reads one input per line; similarity ranks by the cosine of the embed vectors, most
similar first, and the passage equal to the query comes first with cosine 1.

Usage: check_embed_cli.py VKLLM_CLI MODEL.gguf TMPDIR
"""

import json
import math
import os
import subprocess
import sys

TEXTS = ["hello world", "a b c d e f", "", "the quick brown fox"]


def run(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit status {p.returncode}: {p.stderr}")
    return p.stdout


def close(a, b, tol=1e-4):
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b))


def main():
    cli, model, tmp = sys.argv[1:4]
    os.makedirs(tmp, exist_ok=True)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    lines = run(cli, "embed", "-m", model, *TEXTS).splitlines()
    check(len(lines) == len(TEXTS), f"{len(lines)} lines for {len(TEXTS)} inputs")
    vectors = [json.loads(line) for line in lines]
    n_embd = len(vectors[0])
    check(n_embd == 96, f"{n_embd} floats, the tiny bert has 96")
    check(all(len(v) == n_embd for v in vectors), "vectors of different lengths")

    unit = [json.loads(l) for l in run(cli, "embed", "-m", model, "--normalize", *TEXTS).splitlines()]
    for v, u in zip(vectors, unit):
        n = math.sqrt(sum(x * x for x in v))
        check(abs(math.sqrt(sum(x * x for x in u)) - 1) < 1e-5, "--normalize: not unit")
        check(close([x / n for x in v], u), "--normalize: another direction")

    alone = [json.loads(l) for l in run(cli, "embed", "-m", model, "-b", "1", *TEXTS).splitlines()]
    check(all(close(a, b) for a, b in zip(alone, vectors)), "-b 1 differs from one batch")

    path = os.path.join(tmp, "inputs.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(TEXTS) + "\n")
    from_file = [json.loads(l) for l in run(cli, "embed", "-m", model, "-f", path).splitlines()]
    check(len(from_file) == len(TEXTS) and all(close(a, b) for a, b in zip(from_file, vectors)),
          "-f FILE differs from the arguments")

    rows = [json.loads(l) for l in run(cli, "embed", "-m", model, "--pooling", "none",
                                        *TEXTS).splitlines()]
    for r, v in zip(rows, vectors):
        check(close([sum(c) / len(r) for c in zip(*r)], v), "rows of pooling none: mean differs")

    passages = ["the quick brown fox", "hello world", "a b c d e f", "zzz qqq", "hello"]
    path = os.path.join(tmp, "passages.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(passages) + "\n")
    ranked = [l.split("\t") for l in run(cli, "similarity", "-m", model, "--query",
                                         "hello world", "-f", path).splitlines()]
    check(len(ranked) == len(passages), f"{len(ranked)} ranked of {len(passages)}")
    check(ranked[0][1:] == ["2", "hello world"] and abs(float(ranked[0][0]) - 1) < 1e-5,
          f"first: {ranked[0]}")
    scores = [float(r[0]) for r in ranked]
    check(scores == sorted(scores, reverse=True), "not most similar first")
    emb = [json.loads(l) for l in run(cli, "embed", "-m", model, "--normalize", "hello world",
                                      *passages).splitlines()]
    for score, line, text in ranked:
        want = sum(x * y for x, y in zip(emb[0], emb[int(line)]))
        check(abs(float(score) - want) < 1e-5 and passages[int(line) - 1] == text,
              f"line {line}: cosine {score}, the embed vectors give {want}")
    top = run(cli, "similarity", "-m", model, "--query", "hello world", "-f", path, "--top", "2")
    check(len(top.splitlines()) == 2, "--top 2")

    for f in failures:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'ok'}: embed and similarity")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
