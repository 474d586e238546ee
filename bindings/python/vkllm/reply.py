"""vkllm.ReplyParser: a chat model's reply split into reasoning, answer and tool calls as it
streams; and the tool calls it finds."""

import codecs
import collections
import ctypes

from . import _ffi
from ._lib import Owned, decode, lib, out_struct
from .constants import REPLY_PLAIN
from .errors import check, live

ToolCall = collections.namedtuple("ToolCall", "id name arguments")
ToolCall.__doc__ = ("A tool call: its id ('' where the format has none), name, and arguments as "
                    "JSON text.")

ReplyPart = collections.namedtuple("ReplyPart", "reasoning content tool_calls")
ReplyPart.__doc__ = ("What a push made certain: reasoning and answer text to append, calls "
                     "completed.")


def tool_call_of(call):
    """A ToolCall from a vkllm_tool_call."""
    return ToolCall(decode(call.id), decode(call.name), decode(call.arguments))


def reply_format_of_template(template_source):
    """The REPLY_* format a chat template (Jinja text) teaches its model; REPLY_PLAIN for none."""
    if template_source is None:
        return REPLY_PLAIN
    return lib.vkllm_reply_format_of_template(template_source.encode())


def prompt_opens_reasoning(prompt):
    """Whether a rendered prompt ends inside an open reasoning block (e.g. DeepSeek-R1's)."""
    return lib.vkllm_prompt_opens_reasoning(prompt.encode()) != 0


class ReplyParser(Owned):
    """Splits a chat model's reply into reasoning, answer and tool calls as it streams:

        parser = vkllm.ReplyParser(vkllm.reply_format_of_template(model.chat_template()))
        for piece in session.generate(ids, special=True):
            part = parser.push(piece)
            ...  # part.reasoning, part.content, part.tool_calls
        part = parser.finish()

    Text is str or UTF-8 bytes, split anywhere; the parts' text never ends inside a character.
    finish() ends the reply and readies the parser for the next one."""
    _destroy = staticmethod(lib.vkllm_reply_parser_destroy)

    def __init__(self, format=REPLY_PLAIN, in_reasoning=False):
        self._handle = None
        handle = ctypes.c_void_p()
        check(lib.vkllm_reply_parser_create(int(format), 1 if in_reasoning else 0,
                                            ctypes.byref(handle)))
        self._handle = handle
        self._decoders = [codecs.getincrementaldecoder("utf-8")("replace") for _ in range(2)]

    def _part(self, part, final):
        calls = [tool_call_of(part.tool_calls[i]) for i in range(part.n_tool_calls)]
        reasoning = self._decoders[0].decode(part.reasoning or b"", final)
        content = self._decoders[1].decode(part.content or b"", final)
        return ReplyPart(reasoning, content, calls)

    def push(self, text):
        data = text.encode() if isinstance(text, str) else bytes(text)
        part = out_struct(_ffi.vkllm_reply_part)
        check(lib.vkllm_reply_parser_push(live(self._handle, "reply parser"), data, len(data),
                                          ctypes.byref(part)))
        return self._part(part, False)

    def finish(self):
        part = out_struct(_ffi.vkllm_reply_part)
        check(lib.vkllm_reply_parser_finish(live(self._handle, "reply parser"),
                                            ctypes.byref(part)))
        return self._part(part, True)
