"""Python bindings for libvkllm through ctypes, over the C API of include/vkllm.h.

    import vkllm
    for d in vkllm.devices():
        print(d.index, d.name)
    with vkllm.Runtime(validation=True) as rt:
        print(rt.self_check().kernels_failed)

    with vkllm.Runtime() as rt, vkllm.Model(rt, "model.gguf") as model, \\
            vkllm.Session(model, n_ctx=512) as session:
        for piece in session.generate(model.tokenize("Once upon a time"), max_tokens=32):
            print(piece, end="", flush=True)

The library is looked up as $VKLLM_LIBRARY, else libvkllm.so.0.3 on the loader's path, else in
the libdir that `pkg-config --variable=libdir vkllm` names; when none has it, importing raises
ImportError saying how to point at it. Sampling defaults are the C library's
(vkllm_sampling_params_init: temperature 0.8, top_k 40, top_p 0.95, min_p 0.05); pass
temperature=0 for greedy. Every failing call raises vkllm.Error carrying the status code and
the library's message.

The package: _ffi (the raw C API, generated from the header by tools/gen_ffi.py), _lib (the
library, loaded once), and a module per object: runtime, gguf, tokenizer, model, session (with
generation), sampler, grammar, chat, reply, conversation (with completion), errors and
constants. Everything public is importable from `vkllm` itself.
"""

from ._lib import VERSION_MAJOR, VERSION_MINOR
from .chat import chat_apply_template, chat_render
from .constants import *  # noqa: F401,F403 (the constants, listed in constants.__all__)
from .conversation import ChatPiece, Conversation, ConversationResult
from .errors import Error
from .generation import GenerateResult
from .gguf import Gguf, GgufKey, ModelSummary, TensorInfo, ggml_type_name
from .grammar import Grammar, json_schema_to_gbnf
from .model import Model, ModelInfo
from .reply import ReplyParser, ReplyPart, ToolCall, prompt_opens_reasoning, \
    reply_format_of_template
from .runtime import (CoopmatShape, DeviceInfo, Runtime, RuntimeStats, SelfCheckResult,
                      TuneResult, devices, version)
from .sampler import Sampler
from .session import KernelTime, Session, SessionInfo, SessionStats
from .tokenizer import Detokenizer, Tokenizer, TokenizerInfo
