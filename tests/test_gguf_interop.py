"""Files written by `vkllm quantize` and `vkllm make-model`, read by llama.cpp's own Python
reader (gguf-py).

gguf-py parses the files, and its numpy dequantizers (independent of vkllm's C++ code) must
give back the original F32 weights within each type's error bound. Run by ctest with
VKLLM_CLI (the vkllm tool) and PYTHONPATH (where scripts/test
installed gguf) set. Without gguf this fails: it is a test of interoperability, not optional.
"""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

try:
    from gguf import GGUFReader, GGUFValueType
    from gguf.quants import dequantize
except ImportError as e:
    sys.exit(
        f"cannot import gguf ({e}); install it with "
        "`pip install --target build/pydeps --no-deps gguf==0.19.0` (scripts/test does)"
    )

CLI = os.environ.get("VKLLM_CLI", "")
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "models",
                     "tiny-qwen2-f32.gguf")

# Relative RMS error bounds, as in tests/test_quant.cpp (the tiny model's weights are
# Gaussian).
BOUNDS = {"Q8_0": 0.007, "Q6_K": 0.023, "Q5_0": 0.055, "Q4_0": 0.11, "Q4_K": 0.09}

# The file type and the type of each tensor: 1-D tensors stay F32; Q4_K_M puts output.weight
# and (use_more_bits, layer 1 of 2) blk.1.attn_v in Q6_K; ffn_down rows of 384 do not fit
# 256-element blocks and fall back as llama.cpp's do: Q6_K (blk.1) to Q8_0, Q4_K to Q5_0.
def expected_type(target, name, n_dims):
    if n_dims == 1:
        return "F32"
    if target != "Q4_K_M":
        return target
    if "ffn_down" in name:
        return "Q8_0" if name.startswith("blk.1.") else "Q5_0"
    if name in ("output.weight", "blk.1.attn_v.weight"):
        return "Q6_K"
    return "Q4_K"


FILE_TYPES = {"Q8_0": 7, "Q4_0": 2, "Q4_K_M": 15}


def field_value(field):
    """A scalar or string field's value, through gguf-py's own decoding."""
    part = field.parts[field.data[0]]
    if field.types[0] == GGUFValueType.STRING:
        return bytes(part).decode("utf-8")
    return part.tolist()[0]


class GgufInterop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CLI:
            raise RuntimeError("VKLLM_CLI is not set")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.original = GGUFReader(MODEL)
        cls.reference = {t.name: np.array(t.data, dtype=np.float32) for t in cls.original.tensors}
        cls.files = {}
        for target in FILE_TYPES:
            out = os.path.join(cls.tmp.name, f"tiny-qwen2-{target.lower()}.gguf")
            subprocess.run([CLI, "quantize", "--quiet", MODEL, out, target], check=True,
                           stdout=subprocess.DEVNULL)
            cls.files[target] = out

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, target):
        reader = GGUFReader(self.files[target])
        # Metadata: every key of the original with the same value, plus the file type.
        for name, field in self.original.fields.items():
            if name.startswith("GGUF."):
                continue  # the header, as gguf-py presents it
            self.assertIn(name, reader.fields)
            got = reader.fields[name]
            self.assertEqual(got.types, field.types, name)
            if name == "general.file_type":
                continue
            if field.types[0] == GGUFValueType.ARRAY:
                self.assertEqual(len(got.data), len(field.data), name)
                for a, b in zip(got.data, field.data):
                    self.assertEqual(bytes(got.parts[a]), bytes(field.parts[b]), name)
            else:
                self.assertEqual(field_value(got), field_value(field), name)
        self.assertEqual(field_value(reader.fields["general.file_type"]), FILE_TYPES[target])
        self.assertEqual(field_value(reader.fields["general.quantization_version"]), 2)
        self.assertEqual(field_value(reader.fields["general.architecture"]), "qwen2")

        # Tensors: names and order, shapes, types; values within the type's bound.
        names = [t.name for t in reader.tensors]
        self.assertEqual(names, [t.name for t in self.original.tensors])
        for t in reader.tensors:
            ref = self.reference[t.name]
            orig = next(o for o in self.original.tensors if o.name == t.name)
            self.assertEqual(list(t.shape), list(orig.shape), t.name)
            want = expected_type(target, t.name, len(orig.shape))
            self.assertEqual(t.tensor_type.name, want, t.name)
            self.assertEqual(t.data_offset % reader.alignment, 0, t.name)
            got = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(ref.shape)
            if want == "F32":
                np.testing.assert_array_equal(got, ref, t.name)
                continue
            err = float(np.sqrt(np.mean((got - ref) ** 2)) / np.sqrt(np.mean(ref**2)))
            self.assertLess(err, BOUNDS[want], f"{t.name} as {want}")
            self.assertGreater(err, 0.0, f"{t.name} as {want}")

    def test_q8_0(self):
        self.check("Q8_0")

    def test_q4_0(self):
        self.check("Q4_0")

    def test_q4_k_m(self):
        self.check("Q4_K_M")


class MadeModelInterop(unittest.TestCase):
    """A file of `vkllm make-model` as gguf-py reads it: Qwen2.5-0.5B's metadata and shapes
    (one layer), F16 matrices and F32 vectors, values in the documented ranges."""

    @classmethod
    def setUpClass(cls):
        if not CLI:
            raise RuntimeError("VKLLM_CLI is not set")
        cls.tmp = tempfile.TemporaryDirectory()
        path = os.path.join(cls.tmp.name, "qwen2.5-0.5b-1l.gguf")
        subprocess.run([CLI, "make-model", "--preset", "qwen2.5-0.5b", "--layers", "1",
                        "--type", "F16", path], check=True, stdout=subprocess.DEVNULL)
        cls.reader = GGUFReader(path)

    @classmethod
    def tearDownClass(cls):
        del cls.reader  # unmaps the file before its directory goes
        cls.tmp.cleanup()

    def value(self, key):
        return field_value(self.reader.fields[key])

    def test_metadata_is_qwen2_5_0_5b(self):
        want = {"general.architecture": "qwen2", "qwen2.block_count": 1,
                "qwen2.context_length": 32768, "qwen2.embedding_length": 896,
                "qwen2.feed_forward_length": 4864, "qwen2.attention.head_count": 14,
                "qwen2.attention.head_count_kv": 2, "general.file_type": 1,
                "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "qwen2"}
        for key, value in want.items():
            self.assertEqual(self.value(key), value, key)
        self.assertEqual(self.value("qwen2.rope.freq_base"), 1e6)
        self.assertAlmostEqual(self.value("qwen2.attention.layer_norm_rms_epsilon"), 1e-6)

    def test_tensors_have_the_real_shapes(self):
        want = [("token_embd.weight", [896, 151936]), ("blk.0.attn_norm.weight", [896]),
                ("blk.0.attn_q.weight", [896, 896]), ("blk.0.attn_q.bias", [896]),
                ("blk.0.attn_k.weight", [896, 128]), ("blk.0.attn_k.bias", [128]),
                ("blk.0.attn_v.weight", [896, 128]), ("blk.0.attn_v.bias", [128]),
                ("blk.0.attn_output.weight", [896, 896]), ("blk.0.ffn_norm.weight", [896]),
                ("blk.0.ffn_gate.weight", [896, 4864]), ("blk.0.ffn_up.weight", [896, 4864]),
                ("blk.0.ffn_down.weight", [4864, 896]), ("output_norm.weight", [896])]
        got = [(t.name, [int(d) for d in t.shape]) for t in self.reader.tensors]
        self.assertEqual(got, want)
        for t in self.reader.tensors:
            self.assertEqual(t.tensor_type.name, "F16" if len(t.shape) == 2 else "F32", t.name)

    def test_values_are_in_their_ranges(self):
        tensors = {t.name: t for t in self.reader.tensors}
        # Matrices: uniform in +-sqrt(3 / columns), so a standard deviation of 1 / sqrt(cols).
        for name, cols in (("token_embd.weight", 896), ("blk.0.ffn_down.weight", 4864)):
            w = np.asarray(tensors[name].data[:2000], dtype=np.float32)
            bound = np.sqrt(3.0 / cols)
            self.assertLessEqual(float(np.abs(w).max()), bound * (1 + 2**-10), name)
            self.assertAlmostEqual(float(w.std()) * np.sqrt(cols), 1.0, delta=0.01, msg=name)
            self.assertAlmostEqual(float(w.mean()) / bound, 0.0, delta=0.01, msg=name)
        norm = np.asarray(tensors["blk.0.attn_norm.weight"].data)
        self.assertTrue(np.all((norm >= 0.8) & (norm <= 1.2)))
        bias = np.asarray(tensors["blk.0.attn_q.bias"].data)
        self.assertTrue(np.all(np.abs(bias) <= 0.05))
        self.assertGreater(float(np.abs(bias).max()), 0.04)


if __name__ == "__main__":
    unittest.main(verbosity=2)
