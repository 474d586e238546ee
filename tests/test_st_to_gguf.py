"""tools/convert/st_to_gguf.py on a tiny random sentence-transformers BERT (tests/st_fixture.py):
the GGUF that comes out has llama.cpp's bert names, keys and values, read back by gguf-py's
reader; and truncated, garbled or hostile inputs (a fuzz of every file in the directory) give one
line on stderr and exit 1, never a traceback, and write nothing.

  PYTHONPATH=build/pydeps /usr/bin/python3 tests/test_st_to_gguf.py
"""

import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CONVERTER = os.path.join(HERE, "..", "tools", "convert", "st_to_gguf.py")
sys.path.insert(0, os.path.join(HERE, "..", "tools", "convert"))
sys.path.insert(0, HERE)

try:
    from gguf import GGUFReader
except ImportError as e:
    sys.exit(f"cannot import gguf ({e}); `. scripts/deps.sh; vkllm_install_pydeps` installs it")

import st_fixture  # noqa: E402
import st_to_gguf  # noqa: E402


def convert(directory, out, *options):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = st_to_gguf.main([directory, out, *options])
    return rc, err.getvalue()


def field(reader, key):
    f = reader.get_field(key)
    return None if f is None else f.contents()


class ConvertsATinyBert(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "tiny-bert")
        cls.config = st_fixture.config()
        cls.weights = st_fixture.weights(cls.config)
        st_fixture.write(cls.dir, st_fixture.files(cls.config))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def converted(self, *options):
        out = os.path.join(self.tmp.name, "out-" + "-".join(options or ("f32",)) + ".gguf")
        rc, err = convert(self.dir, out, *options)
        self.assertEqual(rc, 0, err)
        return out, GGUFReader(out)

    def test_keys_are_llama_cpps_bert_keys(self):
        _, r = self.converted()
        c = self.config
        expected = {
            "general.architecture": "bert", "general.name": "tiny-bert", "general.file_type": 0,
            "bert.block_count": c["num_hidden_layers"], "bert.context_length": c["max_position_embeddings"],
            "bert.embedding_length": c["hidden_size"], "bert.feed_forward_length": c["intermediate_size"],
            "bert.attention.head_count": c["num_attention_heads"], "bert.attention.causal": False,
            "bert.pooling_type": 1, "tokenizer.ggml.model": "bert", "tokenizer.ggml.token_type_count": 2,
            "tokenizer.ggml.bos_token_id": 2, "tokenizer.ggml.eos_token_id": 3,
            "tokenizer.ggml.seperator_token_id": 3, "tokenizer.ggml.unknown_token_id": 1,
            "tokenizer.ggml.padding_token_id": 0, "tokenizer.ggml.mask_token_id": 4,
            "tokenizer.ggml.add_bos_token": True, "tokenizer.ggml.add_eos_token": True,
        }
        for key, value in expected.items():
            self.assertEqual(field(r, key), value, key)
        self.assertAlmostEqual(field(r, "bert.attention.layer_norm_epsilon"), 1e-12, delta=1e-18)

    def test_tokens_take_llama_cpps_phantom_space_form(self):
        _, r = self.converted()
        tokens = field(r, "tokenizer.ggml.tokens")
        types = field(r, "tokenizer.ggml.token_type")
        vocab = st_fixture.VOCAB
        self.assertEqual(len(tokens), len(vocab))
        for text, got, ty in zip(vocab, tokens, types):
            if text in st_fixture.SPECIAL:
                self.assertEqual((got, ty), (text, 3))  # CONTROL, unchanged
            elif text.startswith("##"):
                self.assertEqual((got, ty), (text[2:], 1))
            else:
                self.assertEqual((got, ty), ("\u2581" + text, 1))

    def test_tensors_are_the_checkpoints_under_llama_cpps_names(self):
        _, r = self.converted()
        got = {t.name: np.array(t.data) for t in r.tensors}
        names = {"token_embd": "embeddings.word_embeddings", "position_embd": "embeddings.position_embeddings",
                 "token_types": "embeddings.token_type_embeddings", "token_embd_norm": "embeddings.LayerNorm"}
        for b in range(self.config["num_hidden_layers"]):
            for ours, theirs in (("attn_q", "attention.self.query"), ("attn_k", "attention.self.key"),
                                 ("attn_v", "attention.self.value"), ("attn_output", "attention.output.dense"),
                                 ("attn_output_norm", "attention.output.LayerNorm"),
                                 ("ffn_up", "intermediate.dense"), ("ffn_down", "output.dense"),
                                 ("layer_output_norm", "output.LayerNorm")):
                names[f"blk.{b}.{ours}"] = f"encoder.layer.{b}.{theirs}"
        expected = {}
        for ours, theirs in names.items():
            for suffix in (".weight", ".bias"):
                if theirs + suffix in self.weights:
                    expected[ours + suffix] = self.weights[theirs + suffix]
        self.assertEqual(sorted(got), sorted(expected))  # the pooler is dropped
        for name, want in expected.items():
            self.assertEqual(got[name].dtype, np.float32, name)
            np.testing.assert_array_equal(got[name].reshape(want.shape), want, err_msg=name)

    def test_f16_keeps_what_llama_cpp_keeps_in_f32(self):
        _, r = self.converted("--outtype", "f16")
        self.assertEqual(field(r, "general.file_type"), 1)
        for t in r.tensors:
            data = np.array(t.data)
            f16 = len(t.shape) == 2 and t.shape[1] > 1 and not t.name.startswith(("position_embd", "token_types"))
            self.assertEqual(data.dtype, np.float16 if f16 else np.float32, t.name)

    def test_pooling_can_be_overridden(self):
        for name, value in (("none", 0), ("cls", 2), ("last", 3), ("rank", 4)):
            _, r = self.converted("--pooling", name)
            self.assertEqual(field(r, "bert.pooling_type"), value)

    def test_output_is_the_same_bytes_every_time(self):
        a, _ = self.converted()
        b = os.path.join(self.tmp.name, "again.gguf")
        self.assertEqual(convert(self.dir, b)[0], 0)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())


def json_mutations(data, rng):
    """Hostile variants of one JSON document: wrong types at every key, deep nesting, odd ids."""
    yield from (b"", b"[" * 100000, b"null", b"[]", b'"text"', b"1e999", b'{"a": NaN}', b"\xff\xfe{}")
    doc = json.loads(data)
    bad_values = [None, [], {}, "x", -1, 0, 2 ** 64, 1.5, True, [[[]]], {"a": {"b": []}}]

    def paths(v, prefix=()):
        if isinstance(v, dict):
            for k, x in v.items():
                yield prefix + (k,)
                yield from paths(x, prefix + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v[:3]):
                yield prefix + (i,)
                yield from paths(x, prefix + (i,))

    all_paths = list(paths(doc))
    # The tokenizer's vocabulary has thousands of paths: a seeded sample of them.
    for p in rng.sample(all_paths, min(len(all_paths), 120)):
        for bad in rng.sample(bad_values, 3):
            d = json.loads(data)
            target = d
            for k in p[:-1]:
                target = target[k]
            target[p[-1]] = bad
            yield json.dumps(d).encode()
        d = json.loads(data)
        target = d
        for k in p[:-1]:
            target = target[k]
        del target[p[-1]]
        yield json.dumps(d).encode()


def byte_mutations(data, rng, count):
    for cut in sorted({0, 1, 7, 8, 9, len(data) // 3, len(data) // 2, len(data) - 1} | {
            rng.randrange(len(data)) for _ in range(count)}):
        yield data[:cut]
    for _ in range(count):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        yield bytes(b)


def safetensors_mutations(rng):
    c = st_fixture.config()
    w = st_fixture.weights(c)
    yield (2 ** 62).to_bytes(8, "little") + b"{}"
    yield (10).to_bytes(8, "little") + b"not json!!"
    yield st_fixture.safetensors_bytes(w, {"embeddings.LayerNorm.bias": {"dtype": "F32", "shape": [16],
                                                                         "data_offsets": [0, 10 ** 12]}})
    yield st_fixture.safetensors_bytes(w, {"embeddings.LayerNorm.bias": {"dtype": "F32", "shape": [-1],
                                                                         "data_offsets": [0, 64]}})
    yield st_fixture.safetensors_bytes(w, {"embeddings.LayerNorm.bias": {"dtype": "BF16", "shape": [16],
                                                                         "data_offsets": [0, 32]}})
    yield st_fixture.safetensors_bytes(w, {"embeddings.LayerNorm.bias": ["not", "a", "dict"]})
    yield st_fixture.safetensors_bytes(w, {"cls.unknown.weight": {"dtype": "F32", "shape": [1],
                                                                  "data_offsets": [0, 4]}})
    for name in rng.sample(sorted(w), 6):
        v = dict(w)
        del v[name]
        yield st_fixture.safetensors_bytes(v)
        v = dict(w)
        v[name] = np.zeros((3,) + v[name].shape[1:], np.float32)
        yield st_fixture.safetensors_bytes(v)
        v = dict(w)
        v[name] = v[name].copy()
        v[name].flat[0] = np.nan
        yield st_fixture.safetensors_bytes(v)


class RejectsBadInput(unittest.TestCase):
    """Every case must either convert (a harmless mutation) or fail with one clear line."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.good = st_fixture.files()
        self.cases = 0

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, label, replace=None, remove=None):
        self.cases += 1
        directory = os.path.join(self.tmp.name, f"case{self.cases}")
        contents = dict(self.good)
        if replace:
            contents.update(replace)
        if remove:
            del contents[remove]
        st_fixture.write(directory, contents)
        out = os.path.join(self.tmp.name, f"case{self.cases}.gguf")
        rc, err = convert(directory, out)
        if rc == 0:
            GGUFReader(out)  # what it accepted, it wrote whole
            return
        self.assertEqual(rc, 1, label)
        self.assertTrue(err.startswith("st_to_gguf: ") and err.count("\n") == 1, f"{label}: {err!r}")
        self.assertFalse(os.path.exists(out), label)
        self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith(".st_to_gguf")], [], label)

    def test_every_missing_file(self):
        for name in self.good:
            if name not in ("modules.json", "1_Pooling/config.json", "sentence_bert_config.json"):
                self.check(f"without {name}", remove=name)

    def test_hostile_json_files(self):
        rng = random.Random(41)
        for name, data in self.good.items():
            if name.endswith(".json"):
                for i, bad in enumerate(json_mutations(data, rng)):
                    self.check(f"{name} mutation {i}", {name: bad})

    def test_a_token_that_is_not_utf8(self):
        tok = json.loads(self.good["tokenizer.json"])
        tok["model"]["vocab"]["\ud800"] = tok["model"]["vocab"].pop("cat")
        self.check("lone surrogate", {"tokenizer.json": json.dumps(tok).encode()})
        self.assertEqual(convert(os.path.join(self.tmp.name, f"case{self.cases}"),
                                 os.path.join(self.tmp.name, "o.gguf"))[0], 1)

    def test_truncated_and_garbled_files(self):
        rng = random.Random(4141)
        for name, data in self.good.items():
            for i, bad in enumerate(byte_mutations(data, rng, 12)):
                self.check(f"{name} bytes {i}", {name: bad})

    def test_hostile_safetensors(self):
        for i, bad in enumerate(safetensors_mutations(random.Random(7))):
            self.check(f"model.safetensors mutation {i}", {"model.safetensors": bad})

    def test_command_line_prints_no_traceback(self):
        st_fixture.write(self.tmp.name, dict(self.good, **{"tokenizer.json": b'{"model": [1, 2'}))
        p = subprocess.run([sys.executable, CONVERTER, self.tmp.name, os.path.join(self.tmp.name, "o.gguf")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertNotIn("Traceback", p.stderr)
        self.assertIn("tokenizer.json", p.stderr)


if __name__ == "__main__":
    unittest.main()
