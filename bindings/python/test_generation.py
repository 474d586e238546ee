"""Models, sessions and streaming generation through the ctypes bindings (run by ctest as
Python.Bindings, which sets VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny model file)."""

import gc
import inspect
import math
import os
import unittest

import vkllm

import tiny_model


class GenerationTest(unittest.TestCase):
    """Models, sessions and streaming generation on a tiny model. VKLLM_TEST_MODEL must be set:
    without it the tests fail rather than skip."""

    setUpClass = classmethod(tiny_model.open_tiny_model)
    tearDownClass = classmethod(tiny_model.close_tiny_model)

    def greedy(self, session, n):
        session.reset()
        return list(session.generate(self.prompt, max_tokens=n, temperature=0))

    def test_model_info_and_tokenizer(self):
        info = self.model.info()
        self.assertGreater(info.n_vocab, 0)
        self.assertTrue(info.architecture)
        ids = self.model.tokenize("Hello world", add_special=False)
        self.assertGreater(len(ids), 0)
        self.assertEqual(self.model.detokenize(ids), "Hello world")
        self.assertEqual(self.model.tokenize(""), self.model.tokenize(b""))

    def test_generate_streams_text(self):
        with vkllm.Session(self.model, n_ctx=64) as session:
            pieces = list(session.generate(self.prompt, max_tokens=8, temperature=0))
            self.assertTrue(pieces)
            self.assertTrue(all(isinstance(p, str) and p for p in pieces))
            r = session.last_result
            self.assertEqual(r.n_prompt, len(self.prompt))
            self.assertEqual(r.n_generated, 8)
            self.assertEqual(r.stop_reason, vkllm.STOP_MAX_TOKENS)
            # The generated tokens but the last are in the cache.
            self.assertEqual(session.position(), len(self.prompt) + 7)
            # Greedy is deterministic.
            self.assertEqual(self.greedy(session, 8), pieces)

    def test_max_tokens_zero_only_prefills(self):
        with vkllm.Session(self.model, n_ctx=64) as session:
            session.reset()
            want = list(session.generate(self.prompt * 3, max_tokens=4, temperature=0))
            session.reset()
            # The prompt twice, prefilled only: nothing yielded, the position moved on by it.
            for times in (1, 2):
                self.assertEqual(list(session.generate(self.prompt, max_tokens=0)), [])
                r = session.last_result
                self.assertEqual(r.n_prompt, len(self.prompt))
                self.assertEqual(r.n_generated, 0)
                self.assertEqual(r.stop_reason, vkllm.STOP_MAX_TOKENS)
                self.assertEqual(session.position(), times * len(self.prompt))
            # The third time answered: as if the three had come in one generate.
            got = list(session.generate(self.prompt, max_tokens=4, temperature=0))
            self.assertEqual(got, want)

    def test_generate_defaults_are_the_c_librarys_sampling_defaults(self):
        c = vkllm._lib.params(vkllm._ffi.vkllm_sampling_params,
                              vkllm._lib.lib.vkllm_sampling_params_init)
        defaults = inspect.signature(vkllm.Session.generate).parameters
        for name in ("temperature", "top_k", "top_p", "min_p", "repeat_penalty",
                     "repeat_last_n", "seed"):
            self.assertAlmostEqual(defaults[name].default, getattr(c, name), places=6, msg=name)

    def test_sampling_with_a_seed_is_reproducible(self):
        with vkllm.Session(self.model, n_ctx=64) as session:
            runs = []
            for _ in range(2):
                session.reset()
                runs.append("".join(session.generate(self.prompt, 8, temperature=0.9, seed=42)))
            self.assertEqual(runs[0], runs[1])

    def test_eval_logits_of_every_position_are_log_probabilities_and_equal_chosen_ones(self):
        tokens = self.prompt * 3
        n_vocab = self.model.info().n_vocab
        with vkllm.Session(self.model, n_ctx=64, n_batch=4) as session:
            rows = session.eval_logits(tokens, log_softmax=True)
            self.assertEqual(len(rows), len(tokens))
            self.assertEqual(session.position(), len(tokens))
            for row in rows:
                self.assertEqual(len(row), n_vocab)
                self.assertAlmostEqual(sum(math.exp(v) for v in row), 1.0, delta=1e-4)
                self.assertTrue(all(v <= 0 for v in row))
            # The last position alone, and two chosen ones in any order, on a fresh sequence.
            session.reset()
            last = session.eval_logits(tokens, positions=[len(tokens) - 1], log_softmax=True)
            for a, b in zip(last[0], rows[-1]):
                self.assertAlmostEqual(a, b, delta=1e-5)
            session.reset()
            chosen = session.eval_logits(tokens, positions=[2, 0], log_softmax=True)
            for got, want in ((chosen[0], rows[2]), (chosen[1], rows[0])):
                for a, b in zip(got, want):
                    self.assertAlmostEqual(a, b, delta=1e-5)
            # Raw logits: their log-softmax is the rows above.
            session.reset()
            raw = session.eval_logits(tokens, positions=[1])[0]
            lse = math.log(sum(math.exp(v) for v in raw))
            for a, b in zip(raw, rows[1]):
                self.assertAlmostEqual(a - lse, b, delta=1e-4)
            with self.assertRaises(vkllm.Error) as cm:
                session.eval_logits(tokens, positions=[len(tokens)])
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)

    def test_generation_reports_logprobs_of_the_models_distribution(self):
        with vkllm.Session(self.model, n_ctx=64) as session:
            for steps in (1, 8):  # one step per submission, and chained greedy steps
                session.reset()
                list(session.generate(self.prompt, max_tokens=6, temperature=0, ignore_eog=True,
                                      top_logprobs=4, steps_per_submit=steps))
                reports = session.last_logprobs
                self.assertEqual(len(reports), 6)
                # Teacher forcing the same tokens gives the same log-probabilities.
                tokens = self.prompt + [t for t, _, _ in reports]
                session.reset()
                rows = session.eval_logits(tokens, log_softmax=True)
                for k, (token, logprob, top) in enumerate(reports):
                    row = rows[len(self.prompt) - 1 + k]
                    self.assertEqual(len(top), 4)
                    self.assertEqual(top[0][0], token)  # greedy: the most likely
                    self.assertAlmostEqual(logprob, row[token], delta=1e-4)
                    self.assertEqual([lp for _, lp in top], sorted((lp for _, lp in top),
                                                                   reverse=True))
                    for t, lp in top:
                        self.assertAlmostEqual(lp, row[t], delta=1e-4)
                self.assertTrue(all(lp <= 0 for _, lp, _ in reports))
            session.reset()
            list(session.generate(self.prompt, max_tokens=3, temperature=0))
            self.assertIsNone(session.last_logprobs)
            with self.assertRaises(vkllm.Error):
                list(session.generate(self.prompt, max_tokens=3, top_logprobs=21))

    def test_ignore_eog_generates_through_the_end_token(self):
        # The tiny model's greedy continuation of token 89 reaches its end token <|im_end|>
        # (318) after a few tokens.
        prompt = [89]
        with vkllm.Session(self.model, n_ctx=64) as session:
            ended = "".join(session.generate(prompt, max_tokens=32, temperature=0))
            r = session.last_result
            self.assertEqual(r.stop_reason, vkllm.STOP_END_OF_GENERATION)
            n = r.n_generated
            self.assertLess(n, 28)
            session.reset()
            through = "".join(
                session.generate(prompt, max_tokens=n + 4, temperature=0, ignore_eog=True))
            r = session.last_result
            self.assertEqual(r.stop_reason, vkllm.STOP_MAX_TOKENS)
            self.assertEqual(r.n_generated, n + 4)
            self.assertTrue(through.startswith(ended))
            # The end token was decoded like the others: all but the last are in the cache.
            self.assertEqual(session.position(), len(prompt) + n + 3)

    def test_stopping_early_cancels_and_the_session_stays_usable(self):
        with vkllm.Session(self.model, n_ctx=128) as session:
            # 40 tokens: more than the bindings queue (4 pieces) holds, so the generation is
            # still running when the reader stops.
            full = self.greedy(session, 40)
            session.reset()
            gen = session.generate(self.prompt, max_tokens=40, temperature=0)
            first = next(gen)
            self.assertEqual(first, full[0])
            gen.close()
            r = session.last_result
            self.assertEqual(r.stop_reason, vkllm.STOP_CANCELLED)
            self.assertLess(r.n_generated, 40)
            # Breaking out of a loop, then dropping the iterator, does the same.
            session.reset()
            for _piece in session.generate(self.prompt, max_tokens=40):
                break
            gc.collect()
            self.assertEqual(session.last_result.stop_reason, vkllm.STOP_CANCELLED)
            self.assertEqual(self.greedy(session, 40), full)

    def test_a_restored_state_continues_with_the_same_logits(self):
        prompt, more = self.prompt * 3, self.model.tokenize("again", add_special=False)
        with vkllm.Session(self.model, n_ctx=64) as never, \
                vkllm.Session(self.model, n_ctx=64) as saver, \
                vkllm.Session(self.model, n_ctx=64, n_seq=2) as other:
            never.eval(prompt)
            want = never.eval(more)
            saver.eval(prompt)
            state = saver.save_state()
            self.assertEqual(saver.tokens(), prompt)
            saver.reset()
            saver.eval(more)  # replaced by the load
            saver.load_state(state)
            self.assertEqual(saver.position(), len(prompt))
            self.assertEqual(saver.eval(more).tobytes(), want.tobytes())
            path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"vkllm-py-{os.getpid()}.state")
            try:
                never.reset()
                never.eval(prompt)
                never.save_state_file(path)
                other.load_state_file(path, seq=1)
            finally:
                os.remove(path)
            self.assertEqual(other.tokens(1), prompt)
            self.assertEqual(other.position(0), 0)
            with self.assertRaises(vkllm.Error) as cm:
                other.load_state(state[:-1], seq=0)
            self.assertEqual(cm.exception.code, vkllm.ERR_FORMAT)
            self.assertEqual(other.position(0), 0)

    def test_forked_sequences_continue_as_independent_prefills(self):
        more = self.model.tokenize("again", add_special=False)
        with vkllm.Session(self.model, n_ctx=64, n_seq=3) as forked, \
                vkllm.Session(self.model, n_ctx=64, n_seq=3) as prefilled:
            forked.eval(self.prompt)
            forked.fork(0, 1)
            forked.fork(0, 2, n_keep=2)
            prefilled.eval(self.prompt, seq=1)
            self.assertEqual(forked.tokens(1), self.prompt)
            self.assertEqual(forked.eval(more, seq=1).tobytes(),
                             prefilled.eval(more, seq=1).tobytes())
            self.assertEqual(forked.position(2), 2)
            with self.assertRaises(vkllm.Error) as cm:
                forked.fork(0, 0)
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)

    def test_a_session_is_busy_while_generating(self):
        with vkllm.Session(self.model, n_ctx=64) as session:
            session.reset()
            gen = session.generate(self.prompt, max_tokens=8)
            next(gen)
            with self.assertRaises(RuntimeError):
                session.reset()
            gen.close()
            session.reset()

    def test_a_model_over_the_memory_budget_is_out_of_device_memory(self):
        with vkllm.Runtime(memory_budget=4096) as rt:
            with self.assertRaises(vkllm.Error) as cm:
                vkllm.Model(rt, self.path)
            self.assertEqual(cm.exception.code, vkllm.ERR_OUT_OF_DEVICE_MEMORY)
            self.assertIn("budget", str(cm.exception))

    def test_missing_file_raises_an_io_error(self):
        missing = os.path.join(os.path.dirname(self.path), "no-such-model.gguf")
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Model(self.runtime, missing)
        self.assertEqual(cm.exception.code, vkllm.ERR_IO)
        self.assertIn("no-such-model.gguf", cm.exception.message)

    def test_errors_from_generation_carry_status_and_message(self):
        with vkllm.Session(self.model, n_ctx=16) as session:
            with self.assertRaises(vkllm.Error) as cm:
                list(session.generate(list(self.prompt) * 4, max_tokens=4))
            self.assertEqual(cm.exception.code, vkllm.ERR_CONTEXT_FULL)
            with self.assertRaises(vkllm.Error) as cm:
                list(session.generate([10**9], max_tokens=4))
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
            session.reset()
            self.assertTrue(list(session.generate(self.prompt, max_tokens=2)))

    def test_closed_handles_raise_and_close_twice_is_harmless(self):
        session = vkllm.Session(self.model, n_ctx=32)
        session.close()
        session.close()
        with self.assertRaises(vkllm.Error):
            session.position()
        with vkllm.Runtime() as rt, vkllm.Model(rt, self.path) as model:
            pass
        with self.assertRaises(vkllm.Error):
            model.tokenize("x")
        with self.assertRaises(vkllm.Error):
            vkllm.Session(model)


if __name__ == "__main__":
    unittest.main()
