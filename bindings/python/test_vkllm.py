"""Tests of the ctypes bindings against the built library (run by ctest, which sets
VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny model file)."""

import array
import contextlib
import ctypes
import gc
import inspect
import json
import math
import os
import unittest

import vkllm


@contextlib.contextmanager
def _environment(name, value):
    """The variable set to value for the block, then as it was."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


class BindingTest(unittest.TestCase):
    def test_version_is_the_library_version(self):
        self.assertEqual(vkllm.version().split(".")[0], str(vkllm.VERSION_MAJOR))

    def test_devices_have_names_and_limits(self):
        devs = vkllm.devices()
        self.assertGreaterEqual(len(devs), 1)
        self.assertTrue(devs[0].name)
        self.assertGreaterEqual(devs[0].max_storage_buffer_range, 1 << 27)

    def test_devices_say_whether_prefill_runs_on_cooperative_matrices(self):
        # The struct as the C header lays it out (x86-64 and aarch64: LP64; test_ffi_layout
        # compares every struct with the C compiler's layout on any target).
        self.assertEqual(ctypes.sizeof(vkllm.DeviceInfo), 2120)
        self.assertEqual(vkllm._ffi.vkllm_device_info.cooperative_matrix.offset, 1052)
        self.assertEqual(vkllm._ffi.vkllm_device_info.coopmat_shapes.offset, 1092)
        for d in vkllm.devices():
            self.assertIsInstance(d.cooperative_matrix, vkllm.CoopmatUse)
            self.assertEqual(len(d.coopmat_shapes), d.coopmat_shape_count)
            self.assertLessEqual(d.coopmat_shape_count, vkllm.MAX_COOPMAT_SHAPES)
            if d.cooperative_matrix == vkllm.CoopmatUse.ABSENT:
                self.assertEqual(d.coopmat_shapes, [])
            if d.cooperative_matrix == vkllm.CoopmatUse.USED:
                # The kernels' shape is one the device lists: f16 operands, f32 accumulator.
                self.assertIn(str(d.coopmat_shape), [str(s) for s in d.coopmat_shapes])
                self.assertEqual(str(d.coopmat_shape).split(" ", 1)[1], "f16*f16+f32->f32")
            for s in d.coopmat_shapes:
                self.assertRegex(str(s), r"^\d+x\d+x\d+ \w+\*\w+\+\w+->\w+")

    def test_the_mask_hides_cooperative_matrices_from_every_device(self):
        if not any(d.coopmat_shape_count for d in vkllm.devices()):
            self.skipTest("no device here offers VK_KHR_cooperative_matrix (Mesa 26 does)")
        with _environment("VKLLM_VULKAN_MASK_FEATURES", "VK_KHR_cooperative_matrix"):
            for d in vkllm.devices():
                self.assertEqual(d.cooperative_matrix, vkllm.CoopmatUse.ABSENT)
                self.assertEqual(d.coopmat_shapes, [])

    def test_a_misspelt_vkllm_coopmat_is_refused_naming_its_values(self):
        with _environment("VKLLM_COOPMAT", "yes"):
            for make in (vkllm.devices, vkllm.Runtime):
                with self.assertRaises(vkllm.Error) as cm:
                    make()
                self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
                self.assertIn('VKLLM_COOPMAT is "yes"', cm.exception.message)
                self.assertIn("auto, on or off", cm.exception.message)

    def test_runtime_self_check_passes_under_validation(self):
        errors = []
        with vkllm.Runtime(validation=True, log=lambda lvl, m: errors.append(m) if lvl == 3 else None) as rt:
            r = rt.self_check()
            self.assertGreaterEqual(r.kernels_checked, 12)
            self.assertEqual(r.kernels_failed, 0, r.first_failure)
            self.assertEqual(rt.stats().validation_errors, 0, errors[:1])
            self.assertGreater(rt.stats().pipeline_compile_ms, 0)

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



class SamplerAndControlTest(unittest.TestCase):
    """The sampler object, batched generation, cancel, session info and model metadata, on
    GenerationTest's tiny model."""

    setUpClass = classmethod(GenerationTest.setUpClass.__func__)
    tearDownClass = classmethod(GenerationTest.tearDownClass.__func__)

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


def _cached_model(name):
    """A real model of scripts/fetch-models' cache (tests/model_cache.h's rule: $VKLLM_MODEL_CACHE,
    else $XDG_CACHE_HOME/vkllm/models, else ~/.cache/vkllm/models), or None when absent."""
    cache = os.environ.get("VKLLM_MODEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "vkllm", "models")
    path = os.path.join(cache, name)
    return path if os.path.isfile(path) else None


PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 20},
                   "age": {"type": "integer", "minimum": 0, "maximum": 150}},
    "required": ["name", "age"],
}

# Nine places for whitespace of at most 21 characters each (the converter's `space`) and every
# value bounded: at most 214 characters, so that even the tiny model's random continuation ends
# within its 256 positions (a prompt and 240 tokens of at least one character).
BOUNDED_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "tag": {"enum": ["red", "green"]}},
    "required": ["ok", "tag"],
}


class GrammarTest(unittest.TestCase):
    """Grammars and JSON Schemas constraining sampling (issue 27), on GenerationTest's tiny model
    and, for output a real model writes, SmolLM2-135M-Instruct when cached."""

    setUpClass = classmethod(GenerationTest.setUpClass.__func__)
    tearDownClass = classmethod(GenerationTest.tearDownClass.__func__)

    def test_json_schema_to_gbnf_writes_a_root_rule(self):
        gbnf = vkllm.json_schema_to_gbnf(PERSON_SCHEMA)
        self.assertIn("root ::=", gbnf)
        self.assertEqual(vkllm.json_schema_to_gbnf(json.dumps(PERSON_SCHEMA)), gbnf)
        # The text compiles as a grammar of its own, for the model or for its tokenizer.
        with vkllm.Grammar(self.model, gbnf), vkllm.Grammar(self.model.tokenizer(), gbnf, "root"):
            pass

    def test_a_bad_grammar_raises_with_its_line_and_column(self):
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Grammar(self.model, 'root = "yes"')
        self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        self.assertIn("line 1, column", cm.exception.message)
        with vkllm.Session(self.model, n_ctx=64) as session:
            with self.assertRaises(vkllm.Error) as cm:
                session.generate(self.prompt, grammar='root ::= "a" missing')
            self.assertIn("line 1, column", cm.exception.message)
            self.assertIn("missing", cm.exception.message)

    def test_an_unsupported_schema_keyword_raises_naming_it(self):
        schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Grammar.from_json_schema(self.model, schema)
        self.assertEqual(cm.exception.code, vkllm.ERR_UNSUPPORTED)
        self.assertIn("uniqueItems", cm.exception.message)
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.json_schema_to_gbnf(schema)
        self.assertIn("uniqueItems", cm.exception.message)
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Sampler(self.model, json_schema=schema)
        self.assertIn("uniqueItems", cm.exception.message)

    def test_apply_grammar_leaves_finite_only_tokens_spelling_a_prefix_of_the_text(self):
        tok = self.model.tokenizer()
        n_vocab = self.model.info().n_vocab
        with vkllm.Grammar(self.model, 'root ::= "a"') as g, \
                vkllm.Sampler(self.model, grammar=g) as s:
            row = s.apply_grammar([0.5] * n_vocab)
        self.assertEqual(len(row), n_vocab)
        finite = {i for i, x in enumerate(row) if math.isfinite(x)}
        self.assertTrue(all(row[i] == 0.5 for i in finite))
        n_tok = tok.info().n_vocab
        want = {i for i in range(n_tok) if tok.token_to_piece(i) == b"a"}
        self.assertTrue(want)
        self.assertEqual(finite, want)
        # In place for an array.array('f'); a sampler without a grammar changes nothing.
        row = array.array("f", [1.0] * n_vocab)
        with vkllm.Sampler(self.model) as plain:
            self.assertIs(plain.apply_grammar(row), row)
            self.assertEqual(plain.progress(), vkllm.GRAMMAR_COMPLETE)
        self.assertTrue(all(x == 1.0 for x in row))

    def test_progress_goes_from_incomplete_to_finished_over_the_tokens_of_the_text(self):
        ids = self.model.tokenize("yes", add_special=False)
        with vkllm.Sampler(self.model, grammar='root ::= "yes"', temperature=0) as s:
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)
            s.accept_prompt(self.prompt)  # the prompt does not advance the grammar
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)
            for i, t in enumerate(ids):
                self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE, i)
                s.accept(t)
            self.assertEqual(s.progress(), vkllm.GRAMMAR_FINISHED)
            s.reset()
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)
            # A token the grammar does not allow is refused and changes nothing.
            no = self.model.tokenize("no", add_special=False)[0]
            with self.assertRaises(vkllm.Error) as cm:
                s.accept(no)
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)

    def test_a_choice_grammar_generates_one_of_its_labels(self):
        labels = ["positive", "negative", "neutral"]
        gbnf = "root ::= " + " | ".join(f'"{label}"' for label in labels)
        with vkllm.Session(self.model, n_ctx=128) as session:
            for seed in (1, 2, 3):
                session.reset()
                text = "".join(session.generate(self.prompt, max_tokens=16, temperature=1.0,
                                                seed=seed, grammar=gbnf))
                self.assertIn(text, labels)
                self.assertEqual(session.last_result.stop_reason, vkllm.STOP_END_OF_GENERATION)
            # A compiled grammar serves any number of generations and may close meanwhile.
            g = vkllm.Grammar(self.model, gbnf)
            session.reset()
            gen = session.generate(self.prompt, max_tokens=16, temperature=0, grammar=g)
            g.close()
            self.assertIn("".join(gen), labels)
        # Batched: each sequence's sampler ends it when its grammar is finished.
        with vkllm.Session(self.model, n_ctx=128, n_seq=2) as session, \
                vkllm.Sampler(self.model, grammar=gbnf, temperature=1.0, seed=4) as s0, \
                vkllm.Sampler(self.model, grammar=gbnf, temperature=1.0, seed=5) as s1:
            out = session.generate_batch([self.prompt, self.prompt], max_tokens=16,
                                         samplers=[s0, s1])
            self.assertEqual([self.model.detokenize(ids) in labels for ids in out], [True, True])
            self.assertEqual([s0.progress(), s1.progress()], [vkllm.GRAMMAR_FINISHED] * 2)

    def test_a_result_names_why_it_stopped_and_whether_the_grammar_is_finished(self):
        # Enum members by name that still compare equal to the C values.
        self.assertIs(vkllm.STOP_MAX_TOKENS, vkllm.StopReason.MAX_TOKENS)
        self.assertEqual(vkllm.StopReason.MAX_TOKENS, 1)
        self.assertEqual(vkllm.GrammarProgress.FINISHED, 2)
        with vkllm.Session(self.model, n_ctx=256) as session:
            cut = "".join(session.generate(self.prompt, max_tokens=3, temperature=0.8, seed=7,
                                           json_schema=BOUNDED_SCHEMA))
            r = session.last_result
            self.assertIs(r.stop_reason, vkllm.StopReason.MAX_TOKENS)
            self.assertIs(r.grammar_progress, vkllm.GrammarProgress.INCOMPLETE)
            self.assertEqual(r.grammar_progress.name, "INCOMPLETE")
            with self.assertRaises(ValueError):
                json.loads(cut)
            session.reset()
            whole = "".join(session.generate(self.prompt, max_tokens=240, temperature=0.8,
                                             seed=7, json_schema=BOUNDED_SCHEMA))
            r = session.last_result
            self.assertIs(r.stop_reason, vkllm.StopReason.END_OF_GENERATION)
            self.assertIs(r.grammar_progress, vkllm.GrammarProgress.FINISHED)
            self.assertTrue(whole.startswith(cut), (cut, whole))
            json.loads(whole)
            session.reset()
            list(session.generate(self.prompt, max_tokens=3, temperature=0))
            self.assertIs(session.last_result.grammar_progress, vkllm.GrammarProgress.COMPLETE)
        with vkllm.Sampler(self.model, grammar='root ::= "yes"') as s:
            self.assertIs(s.progress(), vkllm.GrammarProgress.INCOMPLETE)

    def test_a_bounded_json_schema_gives_json_with_the_required_keys(self):
        with vkllm.Session(self.model, n_ctx=256) as session:
            text = "".join(session.generate(self.prompt, max_tokens=240, temperature=0.8,
                                            seed=7, json_schema=BOUNDED_SCHEMA))
            self.assertEqual(session.last_result.stop_reason, vkllm.STOP_END_OF_GENERATION)
        value = json.loads(text)
        self.assertEqual(set(value), {"ok", "tag"})
        self.assertIsInstance(value["ok"], bool)
        self.assertIn(value["tag"], ("red", "green"))

    def test_smollm2_under_a_json_schema_writes_json_with_the_required_keys(self):
        path = _cached_model("SmolLM2-135M-Instruct.Q4_1.gguf")
        if path is None:
            self.skipTest("SmolLM2-135M-Instruct is not cached: run scripts/fetch-models")
        with vkllm.Model(self.runtime, path) as model, \
                vkllm.Session(model, n_ctx=512) as session:
            prompt = model.chat_render(
                [{"role": "user", "content": "Describe a person as JSON: name and age."}],
                add_generation_prompt=True)
            ids = model.tokenize(prompt, add_special=False, parse_special=True)
            text = "".join(session.generate(ids, max_tokens=96, temperature=0,
                                            json_schema=PERSON_SCHEMA))
            self.assertEqual(session.last_result.stop_reason, vkllm.STOP_END_OF_GENERATION,
                             text)
            value = json.loads(text)
            self.assertEqual(set(value), {"name", "age"}, text)
            self.assertIsInstance(value["name"], str)
            self.assertIsInstance(value["age"], int)
            # Through a Sampler in a loop of the app's own: the same text.
            with vkllm.Sampler(model, json_schema=json.dumps(PERSON_SCHEMA),
                               temperature=0) as s:
                session.reset()
                s.accept_prompt(ids)
                logits, out = session.eval(ids), []
                while s.progress() != vkllm.GRAMMAR_FINISHED and len(out) < 96:
                    t = s.sample(logits)
                    if model.is_end_of_generation(t):
                        break
                    s.accept(t)
                    out.append(t)
                    logits = session.eval([t])
            self.assertEqual(model.detokenize(out), text)


if __name__ == "__main__":
    unittest.main()
