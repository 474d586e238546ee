"""The sampler, batched generation, cancel, session info and model metadata through the ctypes
bindings (run by ctest as Python.Bindings, which sets VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny
model file)."""

import unittest

import vkllm

import tiny_model


class SamplerAndControlTest(unittest.TestCase):
    """The sampler object, batched generation, cancel, session info and model metadata, on
    the tiny model."""

    setUpClass = classmethod(tiny_model.open_tiny_model)
    tearDownClass = classmethod(tiny_model.close_tiny_model)

    def test_sampler_chain_bias_seed_and_reset(self):
        logits = [0.0, 1.0, 2.0, 3.0]
        with vkllm.Sampler(temperature=0) as greedy:
            self.assertEqual(greedy.sample(logits), 3)
        with vkllm.Sampler(temperature=0, logit_bias={3: float("-inf")}) as banned:
            self.assertEqual(banned.sample(logits), 2)
        with vkllm.Sampler(temperature=0, frequency_penalty=2.0) as penalised:
            penalised.accept(3)
            self.assertEqual(penalised.sample(logits), 2)  # 3 - 2 < 2
            penalised.reset()
            self.assertEqual(penalised.sample(logits), 3)
        with vkllm.Sampler(top_k=2, seed=5) as a, vkllm.Sampler(top_k=2, seed=5) as b:
            draws = [a.sample(logits) for _ in range(50)]
            self.assertEqual(draws, [b.sample(logits) for _ in range(50)])
            self.assertEqual(set(draws), {2, 3})  # top-k 2
            self.assertEqual(a.seed, 5)
        with vkllm.Sampler(seed=vkllm.SEED_RANDOM) as r1, \
                vkllm.Sampler(seed=vkllm.SEED_RANDOM) as r2:
            self.assertNotEqual(r1.seed, r2.seed)
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Sampler(top_k=-2)
        self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        self.assertIn("top_k", cm.exception.message)
        # With a model, only its tokenizer's ids are candidates: a shorter row is refused.
        with vkllm.Sampler(self.model) as s, self.assertRaises(vkllm.Error):
            s.sample(logits)

    def test_generate_takes_the_new_penalties_and_reports_a_random_seed(self):
        with vkllm.Session(self.model, n_ctx=64) as session:
            got = list(session.generate(self.prompt, 6, temperature=0.9, seed=vkllm.SEED_RANDOM,
                                        presence_penalty=0.5, frequency_penalty=0.5,
                                        typical_p=0.9, logit_bias={5: -1.0}))
            seed = session.last_result.seed
            self.assertNotEqual(seed, vkllm.SEED_RANDOM)
            session.reset()
            again = list(session.generate(self.prompt, 6, temperature=0.9, seed=seed,
                                          presence_penalty=0.5, frequency_penalty=0.5,
                                          typical_p=0.9, logit_bias={5: -1.0}))
            self.assertEqual(got, again)

    def test_generate_batch_reproduces_per_seed_and_matches_greedy_alone(self):
        prompts = [self.prompt, self.model.tokenize("Once upon a time")]
        with vkllm.Session(self.model, n_ctx=64, n_seq=2) as session:
            runs = []
            for _ in range(2):
                session.reset()
                with vkllm.Sampler(self.model, temperature=1.0, seed=9) as s:
                    runs.append(session.generate_batch(prompts, max_tokens=6, samplers=[s, None],
                                                       ignore_eog=True))
            self.assertEqual(runs[0], runs[1])
            self.assertEqual(len(runs[0][0]), 6)
        with vkllm.Session(self.model, n_ctx=64) as alone:
            list(alone.generate(prompts[1], max_tokens=6, temperature=0, ignore_eog=True))
            self.assertEqual(alone.last_result.n_generated, 6)
            text = self.model.detokenize(runs[0][1])
            alone.reset()
            self.assertEqual("".join(alone.generate(prompts[1], 6, temperature=0,
                                                    ignore_eog=True)), text)

    def test_cancel_stops_a_generation_and_the_session_stays_usable(self):
        with vkllm.Session(self.model, n_ctx=128) as session:
            gen = session.generate(self.prompt, max_tokens=60, temperature=0, ignore_eog=True)
            next(gen)
            session.cancel()
            rest = list(gen)  # ends early, no error
            r = session.last_result
            self.assertEqual(r.stop_reason, vkllm.STOP_CANCELLED)
            self.assertLess(r.n_generated, 60)
            self.assertLessEqual(len(rest), 10)
            session.reset()
            self.assertTrue(list(session.generate(self.prompt, max_tokens=2)))

    def test_session_info_and_model_metadata(self):
        with vkllm.Session(self.model, n_seq=2, kv_type=vkllm.KV_F32) as session:
            info = session.info()
            self.assertEqual(info.n_ctx, min(self.model.info().n_ctx_train, 4096))
            self.assertEqual(info.n_seq, 2)
            self.assertEqual(info.kv_type, vkllm.KV_F32)
            self.assertEqual(info.kv_cache_bytes, session.stats().kv_cache_bytes)
            self.assertGreater(info.device_bytes, info.kv_cache_bytes)
        keys = self.model.meta_keys()
        self.assertIn("general.architecture", keys)
        self.assertEqual(self.model.meta_string("general.architecture"),
                         self.model.info().architecture)
        arch = self.model.info().architecture
        self.assertEqual(self.model.meta_int(arch + ".context_length"),
                         self.model.info().n_ctx_train)
        self.assertIsInstance(self.model.meta_float(arch + ".context_length"), float)
        self.assertTrue(self.model.meta_text("tokenizer.ggml.tokens"))
        with self.assertRaises(vkllm.Error) as cm:
            self.model.meta_int("no.such.key")
        self.assertEqual(cm.exception.code, vkllm.ERR_NOT_FOUND)


if __name__ == "__main__":
    unittest.main()
