"""Tests of the ctypes bindings against the built library (run by ctest, which sets
VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny model file)."""

import gc
import inspect
import json
import math
import os
import unittest

import vkllm


class BindingTest(unittest.TestCase):
    def test_version_is_the_library_version(self):
        self.assertEqual(vkllm.version().split(".")[0], str(vkllm.VERSION_MAJOR))

    def test_devices_have_names_and_limits(self):
        devs = vkllm.devices()
        self.assertGreaterEqual(len(devs), 1)
        self.assertTrue(devs[0].name)
        self.assertGreaterEqual(devs[0].max_storage_buffer_range, 1 << 27)

    def test_runtime_self_check_passes_under_validation(self):
        errors = []
        with vkllm.Runtime(validation=True, log=lambda lvl, m: errors.append(m) if lvl == 3 else None) as rt:
            r = rt.self_check()
            self.assertGreaterEqual(r.kernels_checked, 12)
            self.assertEqual(r.kernels_failed, 0, r.first_failure)
            self.assertEqual(rt.stats().validation_errors, 0, errors[:1])

    def test_errors_carry_status_and_message(self):
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Runtime(device=999)
        self.assertEqual(cm.exception.code, vkllm.ERR_NO_DEVICE)
        self.assertIn("999", cm.exception.message)


    def test_reply_parser_splits_reasoning_answer_and_tool_calls_as_they_stream(self):
        reply = ("<think>\nThe user wants the weather.\n</think>\n\nChecking. <tool_call>\n"
                 '{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>')
        template = "{{ '<tool_call>' }}{{ '<think>' }}"
        self.assertEqual(vkllm.reply_format_of_template(template), vkllm.REPLY_HERMES)
        self.assertTrue(vkllm.prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"))
        with vkllm.ReplyParser(vkllm.REPLY_HERMES) as parser:
            for split in (len(reply), 1, 3):  # whole, a byte at a time, in threes
                data = reply.encode()
                reasoning, content, calls = "", "", []
                for i in range(0, len(data), split):
                    part = parser.push(data[i:i + split])
                    reasoning, content = reasoning + part.reasoning, content + part.content
                    calls += part.tool_calls
                part = parser.finish()
                reasoning, content, calls = (reasoning + part.reasoning,
                                             content + part.content, calls + part.tool_calls)
                self.assertEqual(reasoning, "The user wants the weather.")
                self.assertEqual(content, "Checking.")
                self.assertEqual(calls, [vkllm.ToolCall("", "get_weather",
                                                        '{"city": "Zürich"}')])
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.ReplyParser(17)
        self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)


CALL_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.tool_calls %}"
    "{% for c in m.tool_calls %}<tool_call>\n{{ {'name': c.function.name, "
    "'arguments': c.function.arguments} | tojson }}\n</tool_call>{% endfor %}"
    "{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class ChatTest(unittest.TestCase):
    def test_render_errors_carry_the_templates_message(self):
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.chat_render([{"role": "user", "content": "x"}],
                              template="{{ raise_exception('roles must alternate') }}")
        self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        self.assertIn("roles must alternate", cm.exception.message)
        self.assertEqual(
            vkllm.chat_render([{"role": "user", "content": "Hi"}], template_name="chatml"),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
        self.assertEqual(vkllm.chat_render([], template="{{ strftime_now('%d %B %Y') }}",
                                           now=1768478400), "15 January 2026")

    def test_a_tool_call_round_trips_through_template_model_and_parser(self):
        call = {"id": "abc123XYZ", "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}
        messages = [{"role": "user", "content": "Weather in Zürich?"},
                    {"role": "assistant", "content": None, "tool_calls": [call]}]
        with vkllm.Runtime() as rt, vkllm.Model(rt, os.environ["VKLLM_TEST_MODEL"]) as model:
            prompt = model.chat_render(messages, template=CALL_TEMPLATE,
                                       add_generation_prompt=False)
            self.assertIn('"arguments": {"city": "Zürich"}', prompt)
            ids = model.tokenize(prompt, add_special=False, parse_special=True)
            self.assertEqual(model.detokenize(ids, special=True), prompt)
            reply = prompt.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
            fmt = vkllm.reply_format_of_template(CALL_TEMPLATE)
            with vkllm.ReplyParser(fmt) as parser:
                part = parser.push(reply)
                last = parser.finish()
            calls = part.tool_calls + last.tool_calls
            self.assertEqual([(c.name, json.loads(c.arguments)) for c in calls],
                             [("get_weather", {"city": "Zürich"})])
            with vkllm.Session(model, n_ctx=256) as session:
                text = "".join(session.generate(ids, max_tokens=4, temperature=0))
                self.assertIsInstance(text, str)


class GenerationTest(unittest.TestCase):
    """Models, sessions and streaming generation on a tiny model. VKLLM_TEST_MODEL must be set:
    without it the tests fail rather than skip."""

    @classmethod
    def setUpClass(cls):
        cls.path = os.environ.get("VKLLM_TEST_MODEL")
        if not cls.path:
            raise AssertionError("VKLLM_TEST_MODEL is not set (the tiny model for the tests)")
        cls.runtime = vkllm.Runtime()
        cls.model = vkllm.Model(cls.runtime, cls.path)
        cls.prompt = cls.model.tokenize("Hello world")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        cls.runtime.close()

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
        c = vkllm._params(vkllm._SamplingParams, vkllm._lib.vkllm_sampling_params_init)
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
