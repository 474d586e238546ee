"""Chat templates: functions that render a conversation as prompt text (no handle)."""

import ctypes
import datetime
import json

from . import _ffi
from ._lib import encode, lib, params
from .errors import live, sized


def chat_render(messages, template=None, template_name=None, model=None, tools=None,
                add_generation_prompt=True, bos_token=None, eos_token=None, now=None, **extra):
    """Renders OpenAI-style messages (dicts: role, content, tool_calls with arguments as
    dicts, tool_call_id, reasoning_content, ...) with a chat template exactly as transformers'
    apply_chat_template does: `template` (Jinja text), else the built-in `template_name`
    ("chatml", "llama3", "gemma", "mistral-v3", "phi4", ...: `vkllm chat --template help` lists
    them), else the model's own. tools: OpenAI function tools; extra keyword arguments become
    template variables (enable_thinking=False, reasoning_effort="low"). bos/eos default to the
    model's; now (datetime or seconds since the epoch) fixes strftime_now. Raises vkllm.Error
    with the template's own message when it refuses."""
    p = params(_ffi.vkllm_chat_params, lib.vkllm_chat_params_init)
    p.model = live(model._handle, "model") if model is not None else None
    p.template_source = encode(template)
    p.template_name = encode(template_name)
    p.tools = json.dumps(tools, ensure_ascii=False).encode() if tools is not None else None
    p.extra = json.dumps(extra, ensure_ascii=False).encode() if extra else None
    p.add_generation_prompt = 1 if add_generation_prompt else 0
    p.bos_token = encode(bos_token)
    p.eos_token = encode(eos_token)
    if now is not None:
        p.now = unix_seconds(now)
    data = json.dumps(list(messages), ensure_ascii=False).encode()
    return sized(lambda b, c, n: lib.vkllm_chat_render_json(ctypes.byref(p), data, b, c, n)
                 ).decode(errors="replace")


def unix_seconds(now):
    """A datetime or a number of seconds since the epoch, as whole seconds."""
    return int(now.timestamp()) if isinstance(now, datetime.datetime) else int(now)


def chat_apply_template(messages, template_name=None, model_template=None, add_assistant=True):
    """The simple form of chat_render: plain turns, (role, content) pairs or dicts with those
    keys, rendered with the built-in `template_name` ("chatml", "llama3", "gemma", "mistral-v3",
    "phi4", ...: `vkllm chat --template help` lists them) or else `model_template` (a model's
    Jinja text, e.g. Model.chat_template()); BOS and EOS are left undefined, so tokenize the
    result with add_special=True, parse_special=True."""
    pairs = [(m["role"], m["content"]) if isinstance(m, dict) else tuple(m) for m in messages]
    encoded = [(r.encode(), c.encode()) for r, c in pairs]
    message = _ffi.vkllm_chat_message
    arr = (message * max(len(encoded), 1))(*[message(r, c) for r, c in encoded])
    name, source = encode(template_name), encode(model_template)
    flag = 1 if add_assistant else 0
    return sized(lambda b, c, n: lib.vkllm_chat_apply_template(
        name, source, arr, len(encoded), flag, b, c, n)).decode(errors="replace")
