"""vkllm.Conversation: a chat on one sequence of a session, whose replies prefill only what the
cache lacks."""

import codecs
import collections
import ctypes
import json

from . import _ffi
from ._lib import Owned, decode, encode, enum_field, lib, out_struct, params, stop_strings
from ._stream import Stream
from .chat import unix_seconds
from .constants import (CHAT_PIECE_TOOL_CALL, ERR_CANCELLED, ERR_NOT_FOUND, OK,
                        GrammarProgress, StopReason)
from .errors import check, live
from .grammar import grammar_of
from .reply import ToolCall, tool_call_of
from .sampler import sampling_params

ChatPiece = collections.namedtuple("ChatPiece", "kind text tool_call")
ChatPiece.__doc__ = ("A piece of a streamed reply: CHAT_PIECE_* kind, its text (a tool call's "
                     "arguments), and the ToolCall for CHAT_PIECE_TOOL_CALL (else None).")


class ConversationResult(_ffi.vkllm_conversation_result):
    """What a reply did: n_prompt tokens of the rendered conversation, of which n_reused were in
    the cache and n_prefilled were prefilled; n_generated, stop_reason (a StopReason),
    n_tool_calls, timings, the seed, and whether the reply's raw text is a finished string of
    the grammar (grammar_progress, a GrammarProgress: INCOMPLETE when a cap, the context's end, a
    stop string or a cancel cut it short, so it must not be parsed as the grammar's language;
    COMPLETE without a grammar)."""

    stop_reason = enum_field(_ffi.vkllm_conversation_result.stop_reason, StopReason)
    grammar_progress = enum_field(_ffi.vkllm_conversation_result.grammar_progress,
                                  GrammarProgress)


def _call_of(call):
    """A ToolCall, or an OpenAI tool-call dict (arguments as a dict or JSON text)."""
    if isinstance(call, ToolCall):
        return call
    f = call["function"]
    args = f["arguments"]
    return ToolCall(call.get("id") or "", f["name"],
                    args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))


class Conversation(Owned):
    """A chat on one sequence of a Session (vkllm_conversation): it keeps the messages, renders
    them through the model's chat template (or `template`, Jinja text, or the built-in
    `template_name`) and generates each reply prefilling only the tokens the cache does not hold
    yet (last_result.n_reused and n_prefilled say how many). Replies are parsed as they stream
    into content, reasoning and tool calls, and join the messages as assistant turns; add the
    tools' results as "tool" messages and reply again.

        with vkllm.Conversation(session, [{"role": "system", "content": "Be brief."}]) as chat:
            chat.add("user", "Hello!")
            print(chat.reply(temperature=0)["content"])

    The rendered text is tokenized with its special tokens parsed ("<|im_end|>" is the control
    token), as the model was trained on it; Model.tokenize() parses them only when asked
    (parse_special=True). tools: OpenAI function tools, given to the template; extra keyword
    arguments are template variables (enable_thinking=False). Uses the session, which must stay
    open, from one thread at a time. Use as a context manager or call close()."""
    _destroy = staticmethod(lib.vkllm_conversation_destroy)

    def __init__(self, session, messages=(), template=None, template_name=None, tools=None,
                 seq=0, now=None, **extra):
        self._handle = None
        p = params(_ffi.vkllm_conversation_params, lib.vkllm_conversation_params_init)
        p.seq = seq
        p.template_source = encode(template)
        p.template_name = encode(template_name)
        p.tools = json.dumps(tools, ensure_ascii=False).encode() if tools is not None else None
        p.extra = json.dumps(extra, ensure_ascii=False).encode() if extra else None
        if now is not None:
            p.now = unix_seconds(now)
        handle = ctypes.c_void_p()
        check(lib.vkllm_conversation_create(session._idle(), ctypes.byref(p),
                                            ctypes.byref(handle)))
        self._handle = handle
        self.session = session
        self.last_result = None
        if messages:
            self.extend(messages)

    def _h(self):
        return live(self._handle, "conversation")

    def add(self, role, content=None, tool_calls=None, tool_call_id=None, name=None,
            reasoning_content=None):
        """Appends a message: "system", "user", "assistant" (tool_calls: ToolCalls or OpenAI
        dicts) or "tool" (a call's result: content with tool_call_id and name)."""
        calls = [_call_of(c) for c in tool_calls or ()]
        call_type = _ffi.vkllm_tool_call
        arr = (call_type * max(len(calls), 1))(
            *[call_type(c.id.encode(), c.name.encode(), c.arguments.encode()) for c in calls])
        t = _ffi.vkllm_chat_turn(ctypes.sizeof(_ffi.vkllm_chat_turn), role.encode(),
                                 encode(content), encode(reasoning_content),
                                 arr if calls else None, len(calls), encode(tool_call_id),
                                 encode(name))
        check(lib.vkllm_conversation_add(self._h(), ctypes.byref(t)))

    def extend(self, messages):
        """Appends OpenAI-style message dicts (tool-call arguments as dicts or JSON text)."""
        data = json.dumps(list(messages), ensure_ascii=False).encode()
        check(lib.vkllm_conversation_add_json(self._h(), data))

    def __len__(self):
        n = ctypes.c_size_t(0)
        check(lib.vkllm_conversation_get_count(self._h(), ctypes.byref(n)))
        return n.value

    def __getitem__(self, index):
        """Message `index` as an OpenAI-style dict (tool-call arguments as JSON text)."""
        if index < 0:
            index += len(self)
        t = out_struct(_ffi.vkllm_chat_turn)
        code = (lib.vkllm_conversation_get_message(self._h(), index, ctypes.byref(t))
                if index >= 0 else ERR_NOT_FOUND)
        if code == ERR_NOT_FOUND:
            raise IndexError("conversation message index out of range")
        check(code)
        m = {"role": decode(t.role), "content": decode(t.content)}
        if t.reasoning_content is not None:
            m["reasoning_content"] = decode(t.reasoning_content)
        if t.n_tool_calls:
            m["tool_calls"] = [
                {"id": decode(t.tool_calls[i].id), "type": "function",
                 "function": {"name": decode(t.tool_calls[i].name),
                              "arguments": decode(t.tool_calls[i].arguments)}}
                for i in range(t.n_tool_calls)]
        if t.tool_call_id is not None:
            m["tool_call_id"] = decode(t.tool_call_id)
        if t.name is not None:
            m["name"] = decode(t.name)
        return m

    @property
    def messages(self):
        return [self[i] for i in range(len(self))]

    def truncate(self, n_keep):
        """Keeps the first n_keep messages (0: start over; len - 1 after a reply: retry it)."""
        check(lib.vkllm_conversation_truncate(self._h(), n_keep))

    def reply(self, max_tokens=0, stream=False, stop=(), grammar=None, json_schema=None,
              **sampling):
        """Generates the assistant's reply and appends it. Returns its message dict, or with
        stream=True an iterator of ChatPiece as the reply streams (stopping early cancels the
        reply; what came so far is appended). max_tokens 0: until an end token or the context's
        end. stop: strings the reply ends before (STOP_STRING). Sampling keywords are
        Session.generate's (C's defaults: temperature 0.8); grammar or json_schema constrain the
        reply's raw text. last_result: a ConversationResult."""
        handle = self._h()
        self.session._idle()
        compiled, _ = grammar_of(self.session.model, grammar, json_schema)
        sp, biases = sampling_params(grammar=compiled, **sampling)
        rp = params(_ffi.vkllm_conversation_reply_params,
                    lib.vkllm_conversation_reply_params_init)
        rp.max_tokens = max_tokens or 0
        stop_arr, n_stop = stop_strings(stop)
        if n_stop:
            rp.stop = stop_arr
            rp.n_stop = n_stop
        keep_alive = (biases, compiled._ref if compiled else None, stop_arr)
        if stream:
            return self._stream(handle, sp, rp, keep_alive)
        result = out_struct(ConversationResult)
        self.session._busy = True
        try:
            code = lib.vkllm_conversation_reply(handle, ctypes.byref(sp), ctypes.byref(rp),
                                                ctypes.byref(result))
        finally:
            self.session._busy = False
        self.last_result = result
        if code != OK and not (code == ERR_CANCELLED and self.session._cancel_asked):
            check(code)
        del keep_alive
        return self[-1]

    def _stream(self, handle, sp, rp, keep_alive):
        stream = Stream()
        decoders = [codecs.getincrementaldecoder("utf-8")("replace") for _ in range(3)]

        def on_piece(_user, kind, text, length, call):
            data = ctypes.string_at(text, length) if length else b""
            tool_call = tool_call_of(call[0]) if kind == CHAT_PIECE_TOOL_CALL else None
            return stream.put(ChatPiece(kind, decoders[min(kind, 2)].decode(data), tool_call))

        callback = _ffi.vkllm_chat_piece_fn(on_piece)
        rp.on_piece = callback
        result = out_struct(ConversationResult)

        def call():
            return lib.vkllm_conversation_reply(handle, ctypes.byref(sp), ctypes.byref(rp),
                                                ctypes.byref(result))

        def finished():
            self.last_result = result

        yield from stream.run(self.session, call, finished, "vkllm-conversation")
        del callback, keep_alive  # alive until the library is done with them
