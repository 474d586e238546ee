"""Chat templates and replies through the ctypes bindings: rendering, a tool call from template to
model to reply parser, and the reply parser on streamed text (run by ctest as Python.Bindings,
which sets VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny model file)."""

import json
import os
import unittest

import vkllm


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


class ReplyParserTest(unittest.TestCase):
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


if __name__ == "__main__":
    unittest.main()
