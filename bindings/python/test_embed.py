"""Session.embed and Session.embed_tokens through the ctypes bindings (run by ctest as
Python.Embed, which sets VKLLM_LIBRARY, VKLLM_TEST_BERT (tests/data/models/tiny-bert-mean-f32.gguf)
and VKLLM_TEST_MODEL (the tiny qwen2 decoder))."""

import math
import os
import unittest

import vkllm
from vkllm import Pooling


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (norm(a) * norm(b))


class EmbedTest(unittest.TestCase):
    """Shapes, normalization, batching and the pooling types on a tiny bert encoder; last-token
    pooling on a decoder."""

    TEXTS = ["hello world", "a b c d e f", "", "the quick brown fox"]

    @classmethod
    def setUpClass(cls):
        bert, decoder = os.environ.get("VKLLM_TEST_BERT"), os.environ.get("VKLLM_TEST_MODEL")
        if not bert or not decoder:
            raise AssertionError("VKLLM_TEST_BERT and VKLLM_TEST_MODEL must be set")
        cls.runtime = vkllm.Runtime()
        cls.bert = vkllm.Model(cls.runtime, bert)
        cls.decoder = vkllm.Model(cls.runtime, decoder)
        cls.session = vkllm.Session(cls.bert, n_seq=4)
        cls.n_embd = cls.bert.info().n_embd

    @classmethod
    def tearDownClass(cls):
        cls.session.close()
        cls.decoder.close()
        cls.bert.close()
        cls.runtime.close()

    def assert_close(self, a, b, tol=1e-4):
        self.assertEqual(len(a), len(b))
        for x, y in zip(a, b):
            self.assertAlmostEqual(x, y, delta=tol)

    def test_model_states_mean_pooling(self):
        self.assertEqual(self.bert.info().pooling, Pooling.MEAN)

    def test_one_vector_of_n_embd_per_text(self):
        out = self.session.embed(self.TEXTS)
        self.assertEqual(len(out), len(self.TEXTS))
        for v in out:
            self.assertEqual(len(v), self.n_embd)
            self.assertTrue(all(math.isfinite(x) for x in v))
            self.assertGreater(norm(v), 0)

    def test_normalize_gives_unit_vectors_in_the_same_direction(self):
        raw = self.session.embed(self.TEXTS)
        unit = self.session.embed(self.TEXTS, normalize=True)
        for r, u in zip(raw, unit):
            self.assertAlmostEqual(norm(u), 1.0, delta=1e-5)
            self.assertGreater(cosine(r, u), 0.99999)

    def test_batched_equals_one_at_a_time(self):
        batched = self.session.embed(self.TEXTS, pooling=Pooling.CLS)
        for text, b in zip(self.TEXTS, batched):
            self.assert_close(self.session.embed([text], pooling=Pooling.CLS)[0], b)

    def test_pooled_vectors_are_the_mean_first_and_last_of_the_token_rows(self):
        ids = [self.bert.tokenize(t, add_special=True) for t in self.TEXTS]
        rows = self.session.embed_tokens(ids, pooling=Pooling.NONE)
        self.assertEqual([len(r) for r in rows], [len(i) for i in ids])
        mean = self.session.embed_tokens(ids, pooling=Pooling.MEAN)
        cls = self.session.embed_tokens(ids, pooling=Pooling.CLS)
        last = self.session.embed_tokens(ids, pooling=Pooling.LAST)
        for r, m, c, la in zip(rows, mean, cls, last):
            self.assert_close([sum(col) / len(r) for col in zip(*r)], m)
            self.assert_close(r[0], c)
            self.assert_close(r[-1], la)

    def test_text_and_its_special_tokens_embed_alike(self):
        ids = self.bert.tokenize("hello world", add_special=True)
        self.assert_close(self.session.embed(["hello world"])[0],
                          self.session.embed_tokens([ids])[0])

    def test_too_long_is_refused_unless_truncated(self):
        text = " ".join(["hello"] * 40)
        with self.assertRaises(vkllm.Error) as e:
            self.session.embed([text], max_tokens=8)
        self.assertEqual(e.exception.code, vkllm.ERR_CONTEXT_FULL)
        cut = self.session.embed([text], max_tokens=8, truncate=True)[0]
        ids = self.bert.tokenize(text, add_special=True)
        self.assert_close(cut, self.session.embed_tokens([ids[:7] + ids[-1:]])[0])

    def test_pooling_none_is_refused_for_texts(self):
        with self.assertRaises(vkllm.Error) as e:
            self.session.embed(["hello"], pooling=Pooling.NONE)
        self.assertEqual(e.exception.code, vkllm.ERR_INVALID_ARGUMENT)

    def test_decoder_last_token_pooling_is_the_last_row(self):
        with vkllm.Session(self.decoder, n_ctx=64) as s:
            ids = [self.decoder.tokenize("Hello world"), self.decoder.tokenize("Once upon")]
            last = s.embed_tokens(ids, pooling=Pooling.LAST, normalize=True)
            rows = s.embed_tokens(ids, pooling=Pooling.NONE)
            for v, r in zip(last, rows):
                self.assertAlmostEqual(norm(v), 1.0, delta=1e-5)
                self.assertGreater(cosine(v, r[-1]), 0.99999)
            self.assertEqual(len(s.embed(["Hello world"], pooling=Pooling.LAST)[0]),
                             self.decoder.info().n_embd)


if __name__ == "__main__":
    unittest.main()
