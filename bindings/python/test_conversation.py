"""Conversations and create_chat_completion (issue 37) on the tiny model VKLLM_TEST_MODEL (its
vocabulary has ChatML's control tokens; it has no template, so the built-in "chatml" is named),
under the validation layer, and on SmolLM2-135M-Instruct when it is cached (run by ctest, which
sets VKLLM_LIBRARY and VKLLM_TEST_MODEL)."""

import json
import os
import subprocess
import sys
import unittest

import vkllm

HERE = os.path.dirname(os.path.abspath(__file__))

# A Hermes-style ChatML template (Qwen 2.5's shape), short enough for the tiny model's 256
# positions: tools by name, calls as <tool_call> blocks, results as <tool_response>.
HERMES = (
    "{%- if tools %}{{ '<|im_start|>system\\n<tools>' }}{% for t in tools %}"
    "{{ t.function.name }}{% endfor %}{{ '</tools><|im_end|>\\n' }}{% endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' and m.tool_calls %}{{ '<|im_start|>assistant\\n' }}"
    "{%- for c in m.tool_calls %}{{ '<tool_call>\\n' + ({'name': c.function.name, "
    "'arguments': c.function.arguments} | tojson) + '\\n</tool_call>' }}{% endfor %}"
    "{{ '<|im_end|>\\n' }}"
    "{%- elif m.role == 'tool' %}{{ '<|im_start|>user\\n<tool_response>\\n' + m.content + "
    "'\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}{{ '<|im_start|>' + m.role + '\\n' + (m.content or '') + '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
TOOLS = [{"type": "function", "function": {"name": "get_weather"}}]
# What the tiny model writes under this grammar: one call in Hermes' markers.
CALL_GRAMMAR = ('root ::= "<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": '
                '{\\"city\\": \\"Paris\\"}}\\n</tool_call>"')


def _cached_model(name):
    cache = os.environ.get("VKLLM_MODEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "vkllm", "models")
    path = os.path.join(cache, name)
    return path if os.path.isfile(path) else None


class ConversationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        path = os.environ.get("VKLLM_TEST_MODEL")
        if not path:
            raise AssertionError("VKLLM_TEST_MODEL is not set (the tiny model for the tests)")
        cls.errors = []
        cls.runtime = vkllm.Runtime(
            validation=True, log=lambda level, m: cls.errors.append(m) if level == 3 else None)
        cls.model = vkllm.Model(cls.runtime, path)

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        cls.runtime.close()
        assert not cls.errors, cls.errors

    def session(self, n_ctx=256):
        s = vkllm.Session(self.model, n_ctx=n_ctx, kv_type=vkllm.KV_F32)
        self.addCleanup(s.close)
        return s

    def test_a_second_reply_prefills_only_the_new_tokens(self):
        s = self.session()
        with vkllm.Conversation(s, [{"role": "system", "content": "Be terse."}],
                                template_name="chatml") as chat:
            chat.add("user", "Hello there")
            first = chat.reply(max_tokens=8, temperature=0)
            r1 = chat.last_result
            self.assertEqual((r1.n_reused, r1.n_prefilled), (0, r1.n_prompt))
            self.assertEqual(first["role"], "assistant")
            self.assertEqual(chat[-1], first)
            chat.add("user", "And again")
            chat.reply(max_tokens=8, temperature=0)
            r2 = chat.last_result
            self.assertGreaterEqual(r2.n_reused, r1.n_prompt)
            self.assertEqual(r2.n_reused + r2.n_prefilled, r2.n_prompt)
            self.assertLess(r2.n_prefilled, r2.n_prompt - r1.n_prompt)
            self.assertEqual([m["role"] for m in chat.messages],
                             ["system", "user", "assistant", "user", "assistant"])

    def test_a_multi_turn_greedy_reply_is_the_reply_to_the_whole_conversation(self):
        # The tiny model's replies are kept to letters: Python's str cannot carry back the
        # invalid UTF-8 it writes otherwise, and the conversation from scratch starts from str.
        letters = "root ::= [a-z ]+"
        with vkllm.Conversation(self.session(), template_name="chatml") as chat:
            for question in ("Tell me a story", "Go on", "And then?"):
                chat.add("user", question)
                last = chat.reply(max_tokens=12, temperature=0, grammar=letters)
            self.assertGreater(chat.last_result.n_reused, 0)
            self.assertTrue(last["content"])
            history = chat.messages[:-1]
        with vkllm.Conversation(self.session(), history, template_name="chatml") as scratch:
            again = scratch.reply(max_tokens=12, temperature=0, grammar=letters)
            self.assertEqual(scratch.last_result.n_reused, 0)
        self.assertEqual(again, last)

    def test_streamed_pieces_make_the_reply_and_stopping_early_keeps_what_came(self):
        with vkllm.Conversation(self.session(), [{"role": "user", "content": "Count"}],
                                template_name="chatml") as chat:
            pieces = list(chat.reply(max_tokens=10, temperature=0, stream=True))
            self.assertTrue(all(p.kind == vkllm.CHAT_PIECE_CONTENT for p in pieces))
            self.assertEqual("".join(p.text for p in pieces), chat[-1]["content"])
            chat.truncate(1)
            gen = chat.reply(max_tokens=10, temperature=0, stream=True)
            head = next(gen)
            gen.close()
            self.assertEqual(chat.last_result.stop_reason, vkllm.STOP_CANCELLED)
            self.assertTrue(chat[-1]["content"].startswith(head.text))
            self.assertEqual(len(chat), 2)

    def test_tool_calls_come_out_parsed_and_results_go_back_in(self):
        s = self.session()
        messages = [{"role": "user", "content": "Paris?"}]
        out = s.create_chat_completion(messages, tools=TOOLS, template=HERMES, temperature=0,
                                       grammar=CALL_GRAMMAR)
        choice = out["choices"][0]
        self.assertEqual(choice["finish_reason"], "tool_calls")
        self.assertIsNone(choice["message"]["content"])
        [call] = choice["message"]["tool_calls"]
        self.assertEqual(call["function"]["name"], "get_weather")
        self.assertEqual(json.loads(call["function"]["arguments"]), {"city": "Paris"})
        # The result goes back as a "tool" message; the conversation so far is in the cache.
        messages += [choice["message"], {"role": "tool", "tool_call_id": call["id"],
                                         "name": "get_weather", "content": "18 C"}]
        out2 = s.create_chat_completion(messages, tools=TOOLS, template=HERMES, temperature=0,
                                        max_tokens=4)
        self.assertGreaterEqual(out2["usage"]["prompt_tokens_details"]["cached_tokens"],
                                out["usage"]["prompt_tokens"])
        self.assertEqual(out2["choices"][0]["finish_reason"], "length")
        # Streamed: the call arrives as a tool_calls delta.
        chunks = list(s.create_chat_completion(messages[:1], tools=TOOLS, template=HERMES,
                                               temperature=0, grammar=CALL_GRAMMAR, stream=True))
        calls = [c["choices"][0]["delta"]["tool_calls"] for c in chunks
                 if "tool_calls" in c["choices"][0]["delta"]]
        self.assertEqual([c[0]["function"]["name"] for c in calls], ["get_weather"])
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "tool_calls")

    def test_create_chat_completion_has_openais_shape_and_streams_the_same_text(self):
        s = self.session()
        messages = [{"role": "user", "content": "Hi"}]
        out = s.create_chat_completion(messages, template_name="chatml", max_tokens=6,
                                       temperature=0)
        self.assertEqual(out["object"], "chat.completion")
        self.assertTrue(out["id"].startswith("chatcmpl-"))
        choice = out["choices"][0]
        self.assertEqual((choice["index"], choice["message"]["role"]), (0, "assistant"))
        self.assertIn(choice["finish_reason"], ("stop", "length"))
        usage = out["usage"]
        self.assertEqual(usage["total_tokens"],
                         usage["prompt_tokens"] + usage["completion_tokens"])
        chunks = list(s.create_chat_completion(messages, template_name="chatml", max_tokens=6,
                                               temperature=0, stream=True))
        self.assertTrue(all(c["object"] == "chat.completion.chunk" for c in chunks))
        self.assertEqual(chunks[0]["choices"][0]["delta"]["role"], "assistant")
        text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
        self.assertEqual(text, choice["message"]["content"])
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], choice["finish_reason"])

    def test_an_answer_ends_before_a_stop_string(self):
        s = self.session()
        messages = [{"role": "user", "content": "Say something"}]
        letters = "root ::= [a-z ]+"
        whole = s.create_chat_completion(messages, template_name="chatml", max_tokens=12,
                                         temperature=0, grammar=letters)
        text = whole["choices"][0]["message"]["content"]
        self.assertGreaterEqual(len(text), 4, text)
        stop = text[2:4]
        cut = s.create_chat_completion(messages, template_name="chatml", max_tokens=12,
                                       temperature=0, grammar=letters, stop=stop)
        self.assertEqual(cut["choices"][0]["message"]["content"], text[:text.find(stop)])
        self.assertEqual(cut["choices"][0]["finish_reason"], "stop")

    def test_a_reply_cut_before_its_json_is_done_is_incomplete_and_finishes_for_length(self):
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}},
                  "required": ["ok"], "additionalProperties": False}
        messages = [{"role": "user", "content": "Is it ok?"}]
        s = self.session()
        with vkllm.Conversation(s, messages, template_name="chatml") as chat:
            chat.reply(max_tokens=3, temperature=0, json_schema=schema)
            self.assertIs(chat.last_result.stop_reason, vkllm.StopReason.MAX_TOKENS)
            self.assertIs(chat.last_result.grammar_progress, vkllm.GrammarProgress.INCOMPLETE)
            chat.truncate(1)
            whole = chat.reply(temperature=0, json_schema=schema)["content"]
            self.assertIn(chat.last_result.grammar_progress,
                          (vkllm.GrammarProgress.COMPLETE, vkllm.GrammarProgress.FINISHED))
            self.assertIn(json.loads(whole)["ok"], (True, False))
            chat.truncate(1)
            chat.reply(max_tokens=3, temperature=0)
            self.assertIs(chat.last_result.grammar_progress, vkllm.GrammarProgress.COMPLETE)
        # A stop string that cuts the JSON short: not valid JSON, so "length", not "stop".
        fmt = {"type": "json_schema", "json_schema": {"schema": schema}}
        done = s.create_chat_completion(messages, template_name="chatml", temperature=0,
                                        response_format=fmt)
        self.assertEqual(done["choices"][0]["finish_reason"], "stop")
        cut = s.create_chat_completion(messages, template_name="chatml", temperature=0,
                                       response_format=fmt, stop="}")
        self.assertEqual(cut["choices"][0]["message"]["content"], whole[:whole.find("}")])
        self.assertEqual(cut["choices"][0]["finish_reason"], "length")

    def test_messages_are_kept_as_given_and_bad_ones_change_nothing(self):
        with vkllm.Conversation(self.session(), template=HERMES, tools=TOOLS) as chat:
            chat.add("user", "Weather?")
            chat.add("assistant", tool_calls=[vkllm.ToolCall("abc", "get_weather",
                                                             '{"city": "Oslo"}')])
            chat.extend([{"role": "tool", "tool_call_id": "abc", "name": "get_weather",
                          "content": "-3 C"}])
            self.assertEqual(chat[1]["tool_calls"][0]["function"],
                             {"name": "get_weather", "arguments": '{"city": "Oslo"}'})
            self.assertEqual(chat[2]["tool_call_id"], "abc")
            with self.assertRaises(vkllm.Error) as cm:
                chat.extend([{"role": "user", "content": "ok"}, {"content": "no role"}])
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
            self.assertEqual(len(chat), 3)
            with self.assertRaises(IndexError):
                chat[3]
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Conversation(self.session())  # the tiny model has no template of its own
        self.assertEqual(cm.exception.code, vkllm.ERR_NOT_FOUND)

    def test_tokenize_parses_special_tokens_only_when_asked(self):
        text = "<|im_end|>"
        self.assertGreater(len(self.model.tokenize(text, add_special=False)), 1)
        self.assertEqual(len(self.model.tokenize(text, add_special=False, parse_special=True)), 1)

    def test_smollm2_answers_and_stops_at_its_end_token(self):
        path = _cached_model("SmolLM2-135M-Instruct.Q4_1.gguf")
        if path is None:
            self.skipTest("SmolLM2-135M-Instruct is not cached: run scripts/fetch-models")
        with vkllm.Model(self.runtime, path) as model, \
                vkllm.Session(model, n_ctx=512) as s:
            out = s.create_chat_completion(
                [{"role": "user", "content": "What is the capital of France?"}],
                max_tokens=48, temperature=0)
        choice = out["choices"][0]
        self.assertEqual(choice["finish_reason"], "stop", choice)
        self.assertIn("Paris", choice["message"]["content"])
        self.assertNotIn("<|im_end|>", choice["message"]["content"])

    def test_the_readme_example_runs(self):
        path = _cached_model("SmolLM2-135M-Instruct.Q4_1.gguf")
        if path is None:
            self.skipTest("SmolLM2-135M-Instruct is not cached: run scripts/fetch-models")
        p = subprocess.run([sys.executable, os.path.join(HERE, "examples", "chat.py"), path],
                           capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, PYTHONPATH=HERE))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Paris", p.stdout)
        self.assertRegex(p.stdout, r"\[\d+ new tokens, [1-9]\d* reused\]")


if __name__ == "__main__":
    unittest.main()
