"""A float64 numpy forward pass of a BERT sentence-embedding model, written from the published
architecture (Devlin et al. 2019; sentence-transformers' Transformer -> Pooling -> Normalize),
reading model.safetensors directly: the referee for vkllm's `bert` encoder and for the GGUF
that tools/convert/st_to_gguf.py writes, sharing no code with either.

  embeddings: word + position + token type 0, then LayerNorm
  each layer: bidirectional self-attention (padding keys masked) -> dense -> add & LayerNorm
              -> intermediate dense, GELU (erf) -> output dense -> add & LayerNorm
  pooling:    mean over the non-padding tokens (or CLS / last / none), then L2 normalization

Tokenization is Hugging Face's `tokenizers` package (PyPI tokenizers==0.23.3, into build/pydeps)
on the model's own tokenizer.json, cut as sentence-transformers cuts: at max_seq_length
(sentence_bert_config.json, 256 for all-MiniLM-L6-v2) pieces counting [CLS] and [SEP], not at
tokenizer.json's own 128.

  PYTHONPATH=build/pydeps /usr/bin/python3 tests/reference/bert_f64.py MODEL_DIR TEXT...
prints one JSON vector per text; tools/embeddings_reference.py writes the test data with it.
"""

import json
import math
import os
import sys

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        blob = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] not in ("F32", "F16"):
            continue
        a, b = info["data_offsets"]
        dtype = np.float32 if info["dtype"] == "F32" else np.float16
        out[name] = np.frombuffer(blob[a:b], dtype=dtype).reshape(info["shape"]).astype(np.float64)
    return out


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


class BertF64:
    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
            self.config = json.load(f)
        self.max_seq_length = self.config["max_position_embeddings"]
        st_config = os.path.join(model_dir, "sentence_bert_config.json")
        if os.path.isfile(st_config):
            with open(st_config, encoding="utf-8") as f:
                self.max_seq_length = json.load(f).get("max_seq_length", self.max_seq_length)
        w = read_safetensors(os.path.join(model_dir, "model.safetensors"))
        self.w = {k[5:] if k.startswith("bert.") else k: v for k, v in w.items()}
        from tokenizers import Tokenizer
        self.tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)

    def tokenize(self, text):
        return self.tokenizer.encode(text).ids

    def hidden_states(self, batch_ids):
        """Last-layer states [batch, seq, hidden] and the mask [batch, seq] (1 = a real token)
        for token arrays of different lengths, padded on the right in one batch."""
        c, w = self.config, self.w
        eps = c["layer_norm_eps"]
        n_head = c["num_attention_heads"]
        seq = max(len(ids) for ids in batch_ids)
        mask = np.zeros((len(batch_ids), seq))
        ids = np.zeros((len(batch_ids), seq), dtype=np.int64)
        for i, t in enumerate(batch_ids):
            ids[i, :len(t)] = t
            mask[i, :len(t)] = 1
        x = w["embeddings.word_embeddings.weight"][ids] + \
            w["embeddings.position_embeddings.weight"][:seq][None] + \
            w["embeddings.token_type_embeddings.weight"][0][None, None]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        bsz, _, hidden = x.shape
        dh = hidden // n_head
        # Padding keys get no weight; padding queries compute garbage nobody reads.
        key_bias = np.where(mask[:, None, None, :] > 0, 0.0, -np.inf)
        for layer in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{layer}."

            def dense(v, name):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def heads(v):
                return v.reshape(bsz, seq, n_head, dh).transpose(0, 2, 1, 3)

            q = heads(dense(x, "attention.self.query"))
            k = heads(dense(x, "attention.self.key"))
            v = heads(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh) + key_bias
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, hidden)
            x = layer_norm(x + dense(ctx, "attention.output.dense"),
                           w[p + "attention.output.LayerNorm.weight"],
                           w[p + "attention.output.LayerNorm.bias"], eps)
            ff = dense(gelu(dense(x, "intermediate.dense")), "output.dense")
            x = layer_norm(x + ff, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        return x, mask

    def embed_ids(self, batch_ids, pooling="mean", normalize=True):
        x, mask = self.hidden_states(batch_ids)
        if pooling == "mean":
            out = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        elif pooling == "cls":
            out = x[:, 0]
        elif pooling == "last":
            out = x[np.arange(len(batch_ids)), mask.sum(1).astype(int) - 1]
        else:
            raise ValueError(f"pooling {pooling!r}")
        if normalize:
            out = out / np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def embed(self, texts, pooling="mean", normalize=True, batch=16):
        ids = [self.tokenize(t) for t in texts]
        return np.concatenate([self.embed_ids(ids[i:i + batch], pooling, normalize)
                               for i in range(0, len(ids), batch)])


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    model = BertF64(sys.argv[1])
    for vector in model.embed(sys.argv[2:]):
        print(json.dumps([float(f"{v:.9g}") for v in vector]))
