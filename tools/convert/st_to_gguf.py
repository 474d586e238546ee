#!/usr/bin/env python3
"""Converts a sentence-transformers BERT directory (model.safetensors, config.json,
tokenizer.json with a WordPiece vocabulary, tokenizer_config.json, modules.json and the
Pooling module's config.json) into a GGUF that llama.cpp reads: architecture `bert`, llama.cpp's
tensor names and keys, written as llama.cpp's convert_hf_to_gguf.py writes them for BertModel
(docs/EMBEDDINGS.md lists the keys and the few differences).

  PYTHONPATH=build/pydeps /usr/bin/python3 tools/convert/st_to_gguf.py MODEL_DIR OUT.gguf \
      [--outtype f32|f16] [--pooling none|mean|cls|last|rank] [--name NAME]

Needs gguf-py (gguf==0.19.0, `. scripts/deps.sh; vkllm_install_pydeps`) and numpy. Bad input
exits 1 with one line on stderr and leaves OUT untouched; the output is a pure function of the
input files and options (no dates, no paths), so its sha256 can be pinned.
"""

import argparse
import json
import logging
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from convert_error import ConvertError  # noqa: E402
from safetensors_file import read_safetensors  # noqa: E402

try:
    import numpy as np
    import gguf
except ImportError as e:
    sys.exit(f"st_to_gguf: cannot import {e.name} ({e}); gguf-py goes into build/pydeps with "
             "`. scripts/deps.sh; vkllm_install_pydeps`, then PYTHONPATH=build/pydeps")

MAX_VOCAB = 1 << 21
POOLING = {"none": 0, "mean": 1, "cls": 2, "last": 3, "rank": 4}  # llama.cpp's enum
BLOCK_TENSORS = ("attn_q", "attn_k", "attn_v", "attn_output", "attn_output_norm",
                 "ffn_up", "ffn_down", "layer_output_norm")
# Each is a .weight and a .bias in BertModel; token_types may be absent when type_vocab_size is 0.
GLOBAL_TENSORS = ("token_embd", "position_embd", "token_types", "token_embd_norm")


def load_json(path, required=True):
    if not os.path.isfile(path):
        if required:
            raise ConvertError(f"{path}: missing")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ConvertError(f"{path}: not valid JSON ({str(e)[:200]})") from None
    except OSError as e:
        raise ConvertError(f"cannot read {path}: {e.strerror or e}") from None


def expect(cond, message):
    if not cond:
        raise ConvertError(message)


def positive_int(config, key, path, default=None, minimum=1):
    value = config.get(key, default)
    expect(type(value) is int and minimum <= value <= 1 << 24,
           f"{path}: {key} must be an integer from {minimum} to {1 << 24}, not {value!r}")
    return value


def read_hparams(model_dir):
    path = os.path.join(model_dir, "config.json")
    config = load_json(path)
    expect(isinstance(config, dict), f"{path}: not a JSON object")
    archs = config.get("architectures", ["BertModel"])
    expect(isinstance(archs, list) and any(a in ("BertModel", "BertForMaskedLM") for a in archs),
           f"{path}: architectures {archs!r} is not BertModel")
    expect(config.get("hidden_act", "gelu") == "gelu",
           f"{path}: hidden_act {config.get('hidden_act')!r}: only gelu (erf) is BERT's")
    expect(config.get("position_embedding_type", "absolute") == "absolute",
           f"{path}: position_embedding_type must be absolute")
    h = {
        "n_embd": positive_int(config, "hidden_size", path),
        "n_layer": positive_int(config, "num_hidden_layers", path, minimum=1),
        "n_head": positive_int(config, "num_attention_heads", path),
        "n_ff": positive_int(config, "intermediate_size", path),
        "n_ctx": positive_int(config, "max_position_embeddings", path),
        "n_type": positive_int(config, "type_vocab_size", path, default=1, minimum=0),
        "n_vocab": config.get("vocab_size"),
    }
    expect(h["n_embd"] % h["n_head"] == 0,
           f"{path}: hidden_size {h['n_embd']} is not a multiple of num_attention_heads")
    eps = config.get("layer_norm_eps", 1e-12)
    expect(type(eps) in (int, float) and 0 < eps < 1,
           f"{path}: layer_norm_eps must be a number in (0, 1), not {eps!r}")
    h["eps"] = float(eps)
    return h


def read_vocab(model_dir, n_vocab):
    """Token strings and llama.cpp token types by id, as get_vocab_base() gives them."""
    path = os.path.join(model_dir, "tokenizer.json")
    tok = load_json(path)
    expect(isinstance(tok, dict), f"{path}: not a JSON object")
    model = tok.get("model")
    expect(isinstance(model, dict) and model.get("type") == "WordPiece",
           f"{path}: model.type must be WordPiece")
    vocab = model.get("vocab")
    expect(isinstance(vocab, dict) and vocab, f"{path}: model.vocab must be a non-empty object")
    added = tok.get("added_tokens", [])
    expect(isinstance(added, list), f"{path}: added_tokens must be a list")
    for a in added:
        expect(isinstance(a, dict) and type(a.get("id")) is int and isinstance(a.get("content"), str),
               f"{path}: each added token needs an integer id and a string content")
    by_id = {}
    for text, i in list(vocab.items()) + [(a["content"], a["id"]) for a in added]:
        expect(type(i) is int and 0 <= i < MAX_VOCAB, f"{path}: token {text[:40]!r} has id {i!r}")
        expect(by_id.get(i, text) == text, f"{path}: id {i} names two tokens")
        expect(text != "", f"{path}: id {i} is the empty string")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ConvertError(f"{path}: token {i} holds a lone surrogate, not UTF-8") from None
        by_id[i] = text
    if n_vocab is None:
        n_vocab = max(by_id) + 1
    # The cap bounds what a hostile vocab_size makes this list of names cost before the
    # embedding's row count is checked against it; the largest real vocabularies hold ~262k.
    expect(type(n_vocab) is int and max(by_id) < n_vocab <= MAX_VOCAB,
           f"config.json: vocab_size {n_vocab!r} does not hold the tokenizer's ids "
           f"(up to {max(by_id)})")
    special = {a["content"]: a.get("special") is True for a in added}
    tokens, types = [], []
    for i in range(n_vocab):
        text = by_id.get(i)
        if text is None:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        elif text in special:
            look = text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]") or (
                text.startswith("<|") and text.endswith("|>")) or (
                text.startswith("<unused") and text.endswith(">"))
            types.append(gguf.TokenType.CONTROL if special[text] or look
                         else gguf.TokenType.USER_DEFINED)
            tokens.append(text)
        else:
            tokens.append(text)
            types.append(gguf.TokenType.NORMAL)
    # llama.cpp's phantom-space form: a word-start piece gets U+2581, a ## piece loses the ##.
    tokens = [t if ty == gguf.TokenType.CONTROL else t[2:] if t.startswith("##") else "\u2581" + t
              for t, ty in zip(tokens, types)]
    return tokens, types


def read_special(model_dir, n_vocab):
    """gguf-py's SpecialVocab, as llama.cpp's converter uses it, after read_vocab() checked the
    shapes it relies on; what it still trips over is reported, not raised."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        data = load_json(os.path.join(model_dir, name), required=False)
        expect(data is None or isinstance(data, dict), f"{name}: not a JSON object")
    try:
        special = gguf.SpecialVocab(model_dir, n_vocab=n_vocab)
    except (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError) as e:
        raise ConvertError(f"tokenizer.json/tokenizer_config.json: unexpected structure ({e})") from None
    for typ in ("cls", "sep"):
        expect(typ in special.special_token_ids,
               f"tokenizer_config.json: no {typ}_token among tokenizer.json's added_tokens "
               "(llama.cpp's WordPiece tokenizer needs [CLS] and [SEP])")
    return special


def read_pooling(model_dir, override):
    if override is not None:
        return POOLING[override]
    modules = load_json(os.path.join(model_dir, "modules.json"), required=False)
    if modules is None:
        return None
    expect(isinstance(modules, list) and all(isinstance(m, dict) for m in modules),
           "modules.json: must be a list of objects")
    paths = [m.get("path") for m in modules if m.get("type") == "sentence_transformers.models.Pooling"]
    if not paths:
        return None
    path = paths[0]
    expect(isinstance(path, str) and ".." not in path.replace("\\", "/").split("/")
           and not os.path.isabs(path), f"modules.json: bad Pooling path {path!r}")
    config = load_json(os.path.join(model_dir, path, "config.json"))
    expect(isinstance(config, dict), f"{path}/config.json: not a JSON object")
    for key, value in (("pooling_mode_mean_tokens", 1), ("pooling_mode_cls_token", 2),
                       ("pooling_mode_lasttoken", 3)):
        if config.get(key) is True:
            return value
    raise ConvertError(f"{path}/config.json: only mean, CLS and last-token pooling are supported "
                       "(or say --pooling)")


def gguf_tensors(model_dir, h, outtype):
    """(gguf name, array to write) in the checkpoint's (sorted) order, shapes checked."""
    raw = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, h["n_layer"])
    out = {}
    for name in sorted(raw):
        hf = name[5:] if name.startswith("bert.") else name
        if hf.endswith(".gamma"):
            hf = hf[:-6] + ".weight"
        elif hf.endswith(".beta"):
            hf = hf[:-5] + ".bias"
        if hf in ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias") or \
                hf.startswith(("cls.predictions", "cls.seq_relationship")):
            continue  # the pooler and the MLM head are not used for embeddings (llama.cpp drops them)
        new = names.get_name(hf, try_suffixes=(".weight", ".bias"))
        expect(new is not None, f"model.safetensors: cannot map tensor {name!r} to a bert tensor")
        expect(raw[name] is not None, f"model.safetensors: tensor {name!r} is not F32 or F16")
        expect(new not in out, f"model.safetensors: two tensors map to {new}")
        out[new] = raw[name]
    e, ff, L = h["n_embd"], h["n_ff"], h["n_layer"]
    want = {"token_embd.weight": (h["n_vocab"], e), "position_embd.weight": (h["n_ctx"], e),
            "token_embd_norm.weight": (e,), "token_embd_norm.bias": (e,)}
    if h["n_type"]:
        want["token_types.weight"] = (h["n_type"], e)
    for b in range(L):
        for t, shape in (("attn_q", (e, e)), ("attn_k", (e, e)), ("attn_v", (e, e)),
                         ("attn_output", (e, e)), ("attn_output_norm", None),
                         ("ffn_up", (ff, e)), ("ffn_down", (e, ff)), ("layer_output_norm", None)):
            want[f"blk.{b}.{t}.weight"] = shape or (e,)
            want[f"blk.{b}.{t}.bias"] = (shape[0],) if shape else (e,)
    for n, shape in want.items():
        expect(n in out, f"model.safetensors: no tensor for {n}")
        expect(tuple(out[n].shape) == shape,
               f"model.safetensors: {n} has shape {list(out[n].shape)}, config.json says {list(shape)}")
    extra = sorted(set(out) - set(want))
    expect(not extra, f"model.safetensors: unexpected tensors {extra[:3]}")
    for n, a in out.items():
        expect(np.isfinite(a).all(), f"model.safetensors: {n} holds a NaN or an infinity")
        # llama.cpp keeps 1-D tensors, norms, positions and token types in F32.
        keep32 = outtype == "f32" or a.ndim <= 1 or n.endswith("_norm.weight") or \
            n.startswith(("position_embd.", "token_types."))
        dtype = np.float32 if keep32 else np.float16
        yield n, np.ascontiguousarray(a, dtype=dtype)


def convert(model_dir, out_path, outtype, pooling_override, name):
    expect(os.path.isdir(model_dir), f"{model_dir}: not a directory")
    h = read_hparams(model_dir)
    tokens, types = read_vocab(model_dir, h["n_vocab"])
    h["n_vocab"] = len(tokens)
    special = read_special(model_dir, len(tokens))
    pooling = read_pooling(model_dir, pooling_override)
    tensors = list(gguf_tensors(model_dir, h, outtype))

    out_dir = os.path.dirname(os.path.abspath(out_path))
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".st_to_gguf-", suffix=".gguf")
    os.close(fd)
    try:
        w = gguf.GGUFWriter(tmp, "bert")  # writes general.architecture
        w.add_type(gguf.GGUFType.MODEL)
        w.add_name(name or os.path.basename(os.path.normpath(model_dir)))
        w.add_block_count(h["n_layer"])
        w.add_context_length(h["n_ctx"])
        w.add_embedding_length(h["n_embd"])
        w.add_feed_forward_length(h["n_ff"])
        w.add_head_count(h["n_head"])
        w.add_layer_norm_eps(h["eps"])
        w.add_file_type(gguf.LlamaFileType.ALL_F32 if outtype == "f32" else gguf.LlamaFileType.MOSTLY_F16)
        w.add_causal_attention(False)
        if pooling is not None:
            w.add_pooling_type(gguf.PoolingType(pooling))
        w.add_token_type_count(h["n_type"])
        w.add_tokenizer_model("bert")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        special.add_to_gguf(w, quiet=True)
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
        for n, a in tensors:
            w.add_tensor(n, a)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        os.replace(tmp, out_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model_dir")
    p.add_argument("out")
    p.add_argument("--outtype", choices=("f32", "f16"), default="f32")
    p.add_argument("--pooling", choices=sorted(POOLING, key=POOLING.get),
                   help="pooling_type to write (default: the Pooling module's)")
    p.add_argument("--name", help="general.name (default: the directory's name)")
    args = p.parse_args(argv)
    # gguf-py reports that it has no key for cls_token_id: llama.cpp dropped that key and takes
    # [CLS] from bos_token_id, which SpecialVocab sets to the same id.
    logging.getLogger("gguf").setLevel(logging.ERROR)
    try:
        convert(args.model_dir, args.out, args.outtype, args.pooling, args.name)
    except ConvertError as e:
        print(f"st_to_gguf: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"st_to_gguf: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 1
    except (MemoryError, RecursionError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError) as e:
        # A malformed input the checks above did not anticipate: still a message, not a trace.
        print(f"st_to_gguf: malformed input ({type(e).__name__}: {str(e)[:200]})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
