"""The low-level objects through the ctypes bindings: the GGUF reader, standalone tokenizers,
streaming detokenization, the simple chat template and the session's single steps (run by ctest
as Python.Bindings, which sets VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny model file)."""

import os
import unittest

import vkllm

from test_chat import CALL_TEMPLATE


class LowLevelTest(unittest.TestCase):
    """The GGUF reader, standalone tokenizers, streaming detokenization, the simple chat template
    and the low-level session steps, on the tiny model."""

    TEXT = "Hello world, Zürich 東京 🙂!"

    @classmethod
    def setUpClass(cls):
        cls.path = os.environ.get("VKLLM_TEST_MODEL")
        if not cls.path:
            raise AssertionError("VKLLM_TEST_MODEL is not set (the tiny model for the tests)")
        cls.runtime = vkllm.Runtime()
        cls.model = vkllm.Model(cls.runtime, cls.path)
        cls.n_vocab = cls.model.tokenizer().info().n_vocab
        cls.prompt = cls.model.tokenize("Once upon a time there was")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        cls.runtime.close()

    def argmax(self, row):
        row = row[: self.n_vocab]
        return max(range(len(row)), key=lambda i: (row[i], -i))

    def test_version_string_spells_the_version_number(self):
        v = vkllm._lib.lib.vkllm_version()
        self.assertEqual(vkllm.version(), f"{v // 10000}.{v // 100 % 100}.{v % 100}")

    def test_gguf_reader_reads_the_file_the_model_was_loaded_from(self):
        info = self.model.info()
        with vkllm.Gguf(self.path) as g:
            s = g.summary()
            self.assertEqual(s.architecture, "qwen2")
            self.assertEqual(g.get_string("general.architecture"), "qwen2")
            self.assertEqual(g.get_text("general.architecture"), '"qwen2"')
            self.assertEqual(g.get_int("qwen2.block_count"), info.n_layers)
            self.assertEqual(g.get_float("qwen2.block_count"), float(info.n_layers))
            self.assertEqual((s.n_layers, s.n_embd, s.n_heads), (info.n_layers, info.n_embd,
                                                                  info.n_heads))
            keys = g.keys()
            self.assertEqual(len(keys), s.n_keys)
            self.assertEqual(keys[0], vkllm.GgufKey("general.architecture", vkllm.GGUF_STRING,
                                                    vkllm.GGUF_STRING, 1))
            tensors = g.tensors()
            self.assertEqual(len(tensors), s.n_tensors)
            self.assertEqual(sum(t.n_elements for t in tensors), s.n_params)
            for t in tensors:
                self.assertEqual(t.type_name, vkllm.ggml_type_name(t.type))
                n = 1
                for d in t.dims:
                    n *= d
                self.assertEqual(n, t.n_elements, t.name)
            self.assertEqual(sum(s.tensors_of_type), s.n_tensors)
            self.assertEqual(s.tensors_of_type[0], sum(t.type == 0 for t in tensors))
            with self.assertRaises(vkllm.Error) as cm:
                g.get_int("no.such.key")
            self.assertEqual(cm.exception.code, vkllm.ERR_NOT_FOUND)
            with self.assertRaises(vkllm.Error) as cm:
                g.get_int("general.architecture")
            self.assertEqual(cm.exception.code, vkllm.ERR_FORMAT)
        self.assertEqual(vkllm.ggml_type_name(0), "F32")
        self.assertIsNone(vkllm.ggml_type_name(100000))
        with self.assertRaises(vkllm.Error) as cm:
            g.summary()
        self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Gguf(self.path + ".missing")
        self.assertEqual(cm.exception.code, vkllm.ERR_IO)

    def test_a_tokenizer_from_the_file_encodes_as_the_models_own(self):
        with vkllm.Gguf(self.path) as g:
            tok = g.tokenizer()
        with tok:  # the file is closed: the tokenizer does not need it
            self.assertEqual(tok.tokenize(self.TEXT), self.model.tokenize(self.TEXT))
            info = tok.info()
            self.assertEqual(info.n_vocab, self.n_vocab)
            self.assertEqual(info.model, "gpt2")
            self.assertGreaterEqual(info.eos, 0)
            self.assertTrue(tok.is_end_of_generation(info.eos))
            ids = tok.tokenize(self.TEXT, add_special=False)
            self.assertEqual(b"".join(tok.token_to_piece(i) for i in ids), self.TEXT.encode())
            self.assertEqual(tok.detokenize(ids), self.TEXT)
            with self.assertRaises(vkllm.Error) as cm:
                tok.token_to_piece(self.n_vocab)
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        with self.assertRaises(vkllm.Error):
            tok.info()
        detok = vkllm.Tokenizer(vkllm.Gguf(self.path)).detokenizer()
        detok.tokenizer.close()
        with self.assertRaises(vkllm.Error) as cm:
            detok.push(1)  # its tokenizer is gone: refused, not a use after free
        self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        detok.close()

    def test_detokenizer_streamed_token_by_token_equals_detokenize_of_all_ids(self):
        tok = self.model.tokenizer()
        ids = tok.tokenize(self.TEXT, add_special=False)
        pieces = tok.token_to_piece
        # Some token is only part of a character, so the stream must hold bytes back.
        self.assertTrue(any(not _utf8(pieces(i)) for i in ids))
        with tok.detokenizer() as d:
            for _ in range(2):  # flush readies it for a second stream
                streamed = [d.push(i) for i in ids] + [d.flush()]
                self.assertEqual("".join(streamed), tok.detokenize(ids))
                self.assertNotIn("\ufffd", "".join(streamed))
            with self.assertRaises(vkllm.Error) as cm:
                d.push(-1)
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        eos = tok.info().eos
        with tok.detokenizer(special=True) as d:
            self.assertEqual(d.push(eos) + d.flush(), tok.detokenize([eos], special=True))
            self.assertTrue(d.tokenizer.detokenize([eos], special=True))

    def test_chat_apply_template_renders_plain_turns_as_chat_render_does(self):
        turns = [("system", "Be brief."), {"role": "user", "content": "Hi"}]
        want = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        self.assertEqual(vkllm.chat_apply_template(turns, template_name="chatml",
                                                   add_assistant=False), want)
        self.assertEqual(vkllm.chat_apply_template(turns, template_name="chatml"),
                         want + "<|im_start|>assistant\n")
        self.assertEqual(
            vkllm.chat_apply_template(turns, model_template=CALL_TEMPLATE),
            vkllm.chat_render([{"role": "system", "content": "Be brief."},
                               {"role": "user", "content": "Hi"}], template=CALL_TEMPLATE))
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.chat_apply_template(turns, template_name="no-such-template")
        self.assertEqual(cm.exception.code, vkllm.ERR_NOT_FOUND)

    def test_eval_logits_equal_the_logits_of_the_same_tokens_through_decode(self):
        with vkllm.Session(self.model, n_ctx=64, n_seq=2) as s:
            for seq in (0, 1):
                self.assertIsNone(s.eval(self.prompt[:-1], seq=seq, logits=False))
            by_eval = s.eval(self.prompt[-1:], seq=0)
            by_decode = s.decode(self.prompt[-1:], seqs=[1])
            self.assertEqual(len(by_eval), self.model.info().n_vocab)
            self.assertEqual(by_eval.tobytes(), by_decode[0].tobytes())
            self.assertEqual(s.position(0), s.position(1))
            # Both sequences in one step give each one's own logits.
            nxt = self.argmax(by_eval)
            rows = s.decode([nxt, nxt])
            self.assertEqual(rows[0].tobytes(), rows[1].tobytes())
            self.assertEqual(s.position(1), len(self.prompt) + 1)
            with self.assertRaises(vkllm.Error) as cm:
                s.decode([nxt, nxt], seqs=[0, 0])
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)

    def test_truncate_then_eval_again_gives_the_same_logits_bit_for_bit(self):
        with vkllm.Session(self.model, n_ctx=64) as s:
            s.eval(self.prompt[:-1], logits=False)
            first = s.eval(self.prompt[-1:])
            s.eval([11, 12, 13, 14, 15])
            self.assertEqual(s.position(), len(self.prompt) + 5)
            s.truncate(len(self.prompt) - 1)
            self.assertEqual(s.position(), len(self.prompt) - 1)
            again = s.eval(self.prompt[-1:])
            self.assertEqual(first.tobytes(), again.tobytes())
            with self.assertRaises(vkllm.Error) as cm:
                s.eval([self.model.info().n_vocab])
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
            self.assertEqual(s.position(), len(self.prompt), "a refused eval changes nothing")

    def test_decode_greedy_chains_the_argmax_of_each_decode_step(self):
        prompts = [self.prompt, self.model.tokenize("The sky is")]
        steps = 5
        with vkllm.Session(self.model, n_ctx=64, n_seq=2) as chained, \
                vkllm.Session(self.model, n_ctx=64, n_seq=2) as stepped:
            first = []
            for seq, p in enumerate(prompts):
                chained.eval(p, seq=seq, logits=False)
                first.append(self.argmax(stepped.eval(p, seq=seq)))
            got = chained.decode_greedy(first, steps)
            want, tokens = [], first
            for _ in range(steps):
                tokens = [self.argmax(row) for row in stepped.decode(tokens)]
                want.append(tokens)
            self.assertEqual(got, want)
            self.assertEqual(chained.position(1), len(prompts[1]) + steps)
            with self.assertRaises(vkllm.Error) as cm:
                chained.decode_greedy(first, vkllm.MAX_CHAINED_STEPS + 1)
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)

    def test_stats_and_kv_bytes_count_the_cache_a_session_holds(self):
        n_layers = self.model.info().n_layers
        with vkllm.Session(self.model, n_ctx=64) as f16, \
                vkllm.Session(self.model, n_ctx=64, kv_type=vkllm.KV_F32) as f32:
            f16.eval(self.prompt)
            stats = f16.stats()
            self.assertEqual(stats.tokens_prefilled, len(self.prompt))
            for layer in range(n_layers):
                self.assertGreater(f16.layer_kv_bytes(layer), 0)
                self.assertEqual(f32.layer_kv_bytes(layer), 2 * f16.layer_kv_bytes(layer))
            with self.assertRaises(vkllm.Error) as cm:
                f16.layer_kv_bytes(n_layers)
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)

    def test_a_profiled_session_times_every_kernel_it_ran(self):
        if not self.runtime.device_info().timestamps:
            self.skipTest("the device has no compute timestamps")
        with vkllm.Session(self.model, n_ctx=64, flags=vkllm.SESSION_PROFILE) as s, \
                vkllm.Session(self.model, n_ctx=64) as plain:
            self.assertEqual(s.profile(), [])
            s.eval(self.prompt)
            kernels = s.profile()
            self.assertTrue(kernels)
            self.assertTrue(all(k.dispatches > 0 and k.ms >= 0 and k.kernel for k in kernels))
            self.assertEqual([k.ms for k in kernels], sorted((k.ms for k in kernels),
                                                             reverse=True))
            with self.assertRaises(vkllm.Error) as cm:
                plain.profile()
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)

    def test_runtime_stats_count_the_memory_a_model_holds(self):
        with vkllm.Runtime() as rt:
            before = rt.stats().device_memory_allocated
            with vkllm.Model(rt, self.path) as model:
                self.assertGreaterEqual(rt.stats().device_memory_allocated - before,
                                        model.info().device_bytes)


def _utf8(data):
    try:
        data.decode()
        return True
    except UnicodeDecodeError:
        return False


if __name__ == "__main__":
    unittest.main()
