"""Session.create_chat_completion: OpenAI's chat completion (and its streamed chunks) answered
on a session, as llama-cpp-python's create_chat_completion does."""

import datetime
import os

from .constants import (CHAT_PIECE_CONTENT, CHAT_PIECE_REASONING, STOP_MAX_TOKENS,
                        GrammarProgress)
from .conversation import Conversation
from .errors import Error


def _model_name(model):
    try:
        return model.meta_string("general.name")
    except Error:
        return "vkllm"


def _finish_reason(result):
    # A reply cut before its grammar (response_format) was done is not valid JSON: "length", as
    # one cut by max_tokens, whatever cut it (a stop string, say).
    if result.n_tool_calls:
        return "tool_calls"
    cut = (result.stop_reason == STOP_MAX_TOKENS
           or result.grammar_progress == GrammarProgress.INCOMPLETE)
    return "length" if cut else "stop"


def _usage(result):
    return {"prompt_tokens": result.n_prompt, "completion_tokens": result.n_generated,
            "total_tokens": result.n_prompt + result.n_generated,
            "prompt_tokens_details": {"cached_tokens": result.n_reused}}


def _response_schema(response_format):
    """The JSON Schema of OpenAI's response_format: {"type": "json_object"} any JSON object,
    {"type": "json_schema", "json_schema": {"schema": ...}} that schema."""
    if not response_format or response_format.get("type") == "text":
        return None
    if response_format.get("type") == "json_object":
        return response_format.get("schema") or {"type": "object"}
    if response_format.get("type") == "json_schema":
        return response_format["json_schema"].get("schema", {})
    raise ValueError(f"response_format type {response_format.get('type')!r} is not "
                     "text, json_object or json_schema")


def create_chat_completion(session, messages, tools=None, max_tokens=None, stream=False,
                           stop=None, template=None, template_name=None, response_format=None,
                           seq=0, **sampling):
    """Answers OpenAI-style `messages` as llama-cpp-python's create_chat_completion does: a
    "chat.completion" dict ({"id", "object", "created", "model", "choices": [{"index": 0,
    "message": {"role": "assistant", "content", "tool_calls"?}, "finish_reason": "stop" |
    "length" | "tool_calls"}], "usage": {...}}), or with stream=True an iterator of
    "chat.completion.chunk" dicts whose choices[0]["delta"] carry the role, then content,
    reasoning_content and tool_calls as they come, and a last one the finish_reason.
    Each call renders `messages` afresh on sequence `seq` and prefills only what the cache does
    not hold: a conversation resent with one more message reuses everything before it
    (usage["prompt_tokens_details"]["cached_tokens"]). max_tokens None: until an end token or
    the context's end; stop: a string or a list of them the answer ends before.
    tools: OpenAI function tools for the template; response_format:
    {"type": "json_object"} or {"type": "json_schema", "json_schema": {"schema": ...}}
    constrains the answer (finish_reason "length" when it was cut before its JSON was done, by
    a stop string too). Sampling keywords are Session.generate's (temperature 0.8 unless
    given); template/template_name as Conversation's."""
    schema = _response_schema(response_format)
    stop = [stop] if isinstance(stop, str) else list(stop or ())
    conv = Conversation(session, messages, template=template, template_name=template_name,
                        tools=tools, seq=seq)
    cid = "chatcmpl-" + os.urandom(12).hex()
    created = int(datetime.datetime.now().timestamp())
    name = _model_name(session.model)
    if not stream:
        with conv:
            message = conv.reply(max_tokens or 0, stop=stop, json_schema=schema, **sampling)
            result = conv.last_result
        return {"id": cid, "object": "chat.completion", "created": created, "model": name,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": _finish_reason(result)}],
                "usage": _usage(result)}

    def chunk(delta, finish=None):
        return {"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": name, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                            "finish_reason": finish}]}

    def chunks():
        with conv:
            yield chunk({"role": "assistant", "content": ""})
            n_calls = 0
            for piece in conv.reply(max_tokens or 0, stream=True, stop=stop, json_schema=schema,
                                    **sampling):
                if piece.kind == CHAT_PIECE_CONTENT:
                    yield chunk({"content": piece.text})
                elif piece.kind == CHAT_PIECE_REASONING:
                    yield chunk({"reasoning_content": piece.text})
                else:
                    c = piece.tool_call
                    yield chunk({"tool_calls": [{"index": n_calls, "id": c.id, "type": "function",
                                                 "function": {"name": c.name,
                                                              "arguments": c.arguments}}]})
                    n_calls += 1
            yield chunk({}, _finish_reason(conv.last_result))

    return chunks()
