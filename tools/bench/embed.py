#!/usr/bin/env python3
"""Embeddings per second through the public API (the Python binding over libvkllm): the texts
of a JSON file (a list of strings) embedded in calls of 1, 16 and 128 texts, mean pooling,
normalized, on one session of 16 sequences (a call of 128 runs as 8 steps of 16 inputs). Prints
one line per batch size: texts per second, best of R repetitions after a warm-up call.

    PYTHONPATH=bindings/python VKLLM_LIBRARY=build/libvkllm.so \\
        python3 tools/bench/embed.py MODEL.gguf TEXTS.json [-r 5]

tools/llamacpp_reference/bench_embed.mjs measures llama.cpp on the same file and texts;
docs/BENCHMARKS.md has both side by side.
"""
import argparse
import json
import time

import vkllm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("texts")
    ap.add_argument("-r", "--reps", type=int, default=5)
    a = ap.parse_args()
    texts = json.load(open(a.texts, encoding="utf-8"))
    with vkllm.Runtime() as rt, vkllm.Model(rt, a.model) as m, vkllm.Session(m, n_seq=16) as s:
        tokens = sum(len(m.tokenize(t)) for t in texts)
        print(f"{len(texts)} texts, {tokens / len(texts):.1f} tokens each ([CLS] and [SEP] counted)")
        for n in (1, 16, 128):
            batch = (texts * ((n + len(texts) - 1) // len(texts)))[:n]
            s.embed(batch, normalize=True)  # warm-up: recordings made, pipelines compiled
            best = float("inf")
            for _ in range(a.reps):
                t0 = time.perf_counter()
                s.embed(batch, normalize=True)
                best = min(best, time.perf_counter() - t0)
            print(f"batch {n:4d}: {n / best:8.1f} embeddings/s ({best * 1000:.1f} ms per call)")


if __name__ == "__main__":
    main()
