"""A tiny random sentence-transformers BERT directory (the files all-MiniLM-L6-v2 ships, with a
made-up 40-piece WordPiece vocabulary and random weights), for the converter's tests."""

import json
import os

import numpy as np

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a",
         "dog", "##s", "##ing", "run", "##ning", "hello", "world", ".", ",", "!", "?", "é",
         "caf", "##é", "un", "##believ", "##able", "new", "york", "it", "is", "big", "small",
         "red", "blue", "##er", "##est", "and", "or"]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def config(hidden=16, layers=2, heads=2, ff=32, positions=24, types=2):
    return {"architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
            "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
            "intermediate_size": ff, "max_position_embeddings": positions,
            "type_vocab_size": types, "vocab_size": len(VOCAB), "layer_norm_eps": 1e-12,
            "position_embedding_type": "absolute", "pad_token_id": 0}


def weights(c, seed=0):
    rng = np.random.default_rng(seed)
    e, ff = c["hidden_size"], c["intermediate_size"]

    def r(*shape):
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    w = {"embeddings.word_embeddings.weight": r(c["vocab_size"], e),
         "embeddings.position_embeddings.weight": r(c["max_position_embeddings"], e),
         "embeddings.token_type_embeddings.weight": r(c["type_vocab_size"], e),
         "embeddings.LayerNorm.weight": 1 + r(e), "embeddings.LayerNorm.bias": r(e),
         "pooler.dense.weight": r(e, e), "pooler.dense.bias": r(e)}
    for b in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{b}."
        for name, shape in (("attention.self.query", (e, e)), ("attention.self.key", (e, e)),
                            ("attention.self.value", (e, e)), ("attention.output.dense", (e, e)),
                            ("intermediate.dense", (ff, e)), ("output.dense", (e, ff))):
            w[p + name + ".weight"] = r(*shape)
            w[p + name + ".bias"] = r(shape[0])
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + name + ".weight"] = 1 + r(e)
            w[p + name + ".bias"] = r(e)
    return w


def safetensors_bytes(tensors, extra=None):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, a in tensors.items():
        raw = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["embeddings.position_ids"] = {"dtype": "I64", "shape": [1, 2], "data_offsets": [offset, offset + 16]}
    blobs.append(np.arange(2, dtype=np.int64).tobytes())
    header.update(extra or {})
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + b"".join(blobs)


def tokenizer_json():
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": VOCAB.index(t), "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True} for t in SPECIAL],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [VOCAB.index(t)], "tokens": [t]} for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(VOCAB)}},
    }


def files(c=None, seed=0):
    """{relative path: bytes} of a whole model directory."""
    c = c or config()

    def js(v):
        return json.dumps(v, indent=1).encode()

    return {
        "config.json": js(c),
        "model.safetensors": safetensors_bytes(weights(c, seed)),
        "tokenizer.json": js(tokenizer_json()),
        "tokenizer_config.json": js({"do_lower_case": True, "unk_token": "[UNK]", "sep_token": "[SEP]",
                                     "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]",
                                     "tokenizer_class": "BertTokenizer", "model_max_length": 512}),
        "sentence_bert_config.json": js({"max_seq_length": 20, "do_lower_case": False}),
        "modules.json": js([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]),
        "1_Pooling/config.json": js({"word_embedding_dimension": c["hidden_size"], "pooling_mode_cls_token": False,
                                     "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                                     "pooling_mode_mean_sqrt_len_tokens": False}),
    }


def write(directory, contents):
    for rel, data in contents.items():
        path = os.path.join(directory, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
