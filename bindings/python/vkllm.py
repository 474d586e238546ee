"""Python bindings for libvkllm through ctypes, over the same C API as include/vkllm.h.

    import vkllm
    for d in vkllm.devices():
        print(d.index, d.name)
    with vkllm.Runtime(validation=True) as rt:
        print(rt.self_check().kernels_failed)

    with vkllm.Runtime() as rt, vkllm.Model(rt, "model.gguf") as model, \
            vkllm.Session(model, n_ctx=512) as session:
        for piece in session.generate(model.tokenize("Once upon a time"), max_tokens=32):
            print(piece, end="", flush=True)

The library is looked up as $VKLLM_LIBRARY, else libvkllm.so.0.3 on the loader's path, else in
the libdir that `pkg-config --variable=libdir vkllm` names; when none has it, importing raises
ImportError saying how to point at it. Sampling defaults are the C library's
(vkllm_sampling_params_init: temperature 0.8, top_k 40, top_p 0.95, min_p 0.05); pass
temperature=0 for greedy.
Every failing call raises vkllm.Error carrying the status code and the library's message.
"""

import array
import codecs
import collections
import ctypes
import datetime
import enum
import json
import os
import queue
import subprocess
import threading

VERSION_MAJOR = 0  # the version these bindings were written for: while the major is 0, a
VERSION_MINOR = 3  # minor version may change the ABI (the SONAME carries both)

OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_NO_DEVICE = 2
ERR_OUT_OF_HOST_MEMORY = 3
ERR_OUT_OF_DEVICE_MEMORY = 4
ERR_VULKAN = 5
ERR_DEVICE_LOST = 6
ERR_IO = 7
ERR_FORMAT = 8
ERR_UNSUPPORTED = 9
ERR_BUFFER_TOO_SMALL = 10
ERR_CONTEXT_FULL = 11
ERR_CANCELLED = 12
ERR_INTERNAL = 13
ERR_NOT_FOUND = 14


class StopReason(enum.IntEnum):
    """Why a generation ended (vkllm_stop_reason); compares equal to the C values."""
    END_OF_GENERATION = 0  # an end-of-generation token, or a grammar nothing can follow
    MAX_TOKENS = 1
    STRING = 2  # a stop string
    CANCELLED = 3


class GrammarProgress(enum.IntEnum):
    """Where a grammar stands after the text generated (vkllm_grammar_progress)."""
    INCOMPLETE = 0  # more text is needed: the text so far is not the grammar's (cut short)
    COMPLETE = 1  # the text may end here, or go on
    FINISHED = 2  # the text is complete and nothing can follow


def _named(kind, value):
    """`value` as a member of the IntEnum `kind`, or the int itself when a newer library
    returns a value this module does not know."""
    try:
        return kind(value)
    except ValueError:
        return value


STOP_END_OF_GENERATION = StopReason.END_OF_GENERATION
STOP_MAX_TOKENS = StopReason.MAX_TOKENS
STOP_STRING = StopReason.STRING
STOP_CANCELLED = StopReason.CANCELLED

TOKENIZE_ADD_SPECIAL = 0x1
TOKENIZE_PARSE_SPECIAL = 0x2
DETOKENIZE_SPECIAL = 0x1

SESSION_STREAMING = 0x2

RUNTIME_VALIDATION = 0x1

SEED_RANDOM = 0xFFFFFFFFFFFFFFFF  # a seed read from the system (Sampler.seed tells which)

KV_F16 = 0  # Session(kv_type=...): the KV cache's type
KV_F32 = 1
KV_Q8_0 = 2

REPLY_PLAIN = 0
REPLY_HERMES = 1
REPLY_MISTRAL = 2
REPLY_LLAMA3 = 3
REPLY_HARMONY = 4

_MAX_HEAPS = 16
MAX_COOPMAT_SHAPES = 32


class CoopmatUse(enum.IntEnum):
    """Whether prefill runs on cooperative matrices on a device, or why not
    (vkllm_coopmat_use)."""
    ABSENT = 0  # no VK_KHR_cooperative_matrix, or VKLLM_VULKAN_MASK_FEATURES hides it
    USED = 1  # prefill's matrix products run on them, with DeviceInfo.coopmat_shape
    UNSUITABLE = 2  # offered without the shape or features the kernels need
    NOT_BUILT = 3  # the library was built without the cooperative-matrix shaders
    NOT_CHOSEN = 4  # VKLLM_COOPMAT=off, or auto (the default) on a CPU device


class ComponentType(enum.IntEnum):
    """A cooperative matrix's element type (vkllm_component_type: Vulkan's values)."""
    F16 = 0
    F32 = 1
    F64 = 2
    S8 = 3
    S16 = 4
    S32 = 5
    S64 = 6
    U8 = 7
    U16 = 8
    U32 = 9
    U64 = 10


class CoopmatShape(ctypes.Structure):
    """Result (m x n) = A (m x k) * B (k x n) + C (m x n), one cooperative product a device
    offers (vkllm_coopmat_shape); str() gives "16x16x16 f16*f16+f32->f32"."""
    _fields_ = [
        ("m", ctypes.c_uint32),
        ("n", ctypes.c_uint32),
        ("k", ctypes.c_uint32),
        ("_a_type", ctypes.c_int32),
        ("_b_type", ctypes.c_int32),
        ("_c_type", ctypes.c_int32),
        ("_result_type", ctypes.c_int32),
        ("subgroup_scope", ctypes.c_int32),
    ]

    a_type = property(lambda self: _named(ComponentType, self._a_type))
    b_type = property(lambda self: _named(ComponentType, self._b_type))
    c_type = property(lambda self: _named(ComponentType, self._c_type))
    result_type = property(lambda self: _named(ComponentType, self._result_type))

    def __str__(self):
        def name(t):
            return t.name.lower() if isinstance(t, ComponentType) else f"type {t}"
        text = (f"{self.m}x{self.n}x{self.k} {name(self.a_type)}*{name(self.b_type)}"
                f"+{name(self.c_type)}->{name(self.result_type)}")
        return text if self.subgroup_scope else text + " workgroup scope"


class Error(Exception):
    """A vkllm call failed: `code` is the vkllm_status, `message` the detail."""

    def __init__(self, code, message):
        super().__init__(f"{message} ({_lib.vkllm_status_string(code).decode()})")
        self.code = code
        self.message = message


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("index", ctypes.c_uint32),
        ("type", ctypes.c_int32),
        ("_name", ctypes.c_char * 256),
        ("_driver_name", ctypes.c_char * 256),
        ("_driver_info", ctypes.c_char * 256),
        ("vendor_id", ctypes.c_uint32),
        ("device_id", ctypes.c_uint32),
        ("api_version", ctypes.c_uint32),
        ("usable", ctypes.c_int32),
        ("unified_memory", ctypes.c_int32),
        ("heap_count", ctypes.c_uint32),
        ("heap_size", ctypes.c_uint64 * _MAX_HEAPS),
        ("heap_device_local", ctypes.c_int32 * _MAX_HEAPS),
        ("max_storage_buffer_range", ctypes.c_uint64),
        ("max_texel_buffer_elements", ctypes.c_uint64),
        ("max_allocation_size", ctypes.c_uint64),
        ("max_compute_shared_memory", ctypes.c_uint32),
        ("max_workgroup_invocations", ctypes.c_uint32),
        ("subgroup_size", ctypes.c_uint32),
        ("shader_float16", ctypes.c_int32),
        ("shader_int8", ctypes.c_int32),
        ("storage_16bit", ctypes.c_int32),
        ("timestamps", ctypes.c_int32),
        ("_cooperative_matrix", ctypes.c_int32),
        ("coopmat_shape", CoopmatShape),
        ("coopmat_shape_count", ctypes.c_uint32),
        ("_coopmat_shapes", CoopmatShape * MAX_COOPMAT_SHAPES),
    ]

    name = property(lambda self: self._name.decode(errors="replace"))
    driver_name = property(lambda self: self._driver_name.decode(errors="replace"))
    driver_info = property(lambda self: self._driver_info.decode(errors="replace"))
    # Whether prefill runs on cooperative matrices (CoopmatUse.USED, with coopmat_shape), or
    # why not; coopmat_shapes: every shape the device offers.
    cooperative_matrix = property(lambda self: _named(CoopmatUse, self._cooperative_matrix))
    coopmat_shapes = property(
        lambda self: list(self._coopmat_shapes[:min(self.coopmat_shape_count,
                                                     MAX_COOPMAT_SHAPES)]))


_LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)


class _RuntimeParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("device_index", ctypes.c_int32),
        ("device_name", ctypes.c_char_p),
        ("flags", ctypes.c_uint32),
        ("pipeline_cache_path", ctypes.c_char_p),
        ("log_fn", _LogFn),
        ("log_user_data", ctypes.c_void_p),
        ("device_memory_budget", ctypes.c_uint64),
    ]


class RuntimeStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("validation_errors", ctypes.c_uint64),
        ("validation_warnings", ctypes.c_uint64),
        ("pipelines_created", ctypes.c_uint64),
        ("pipeline_cache_bytes_loaded", ctypes.c_uint64),
        ("device_memory_allocated", ctypes.c_uint64),
        ("submits", ctypes.c_uint64),
        ("pipeline_compile_ms", ctypes.c_double),
        ("tuned_shapes", ctypes.c_uint64),
    ]


class SelfCheckResult(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("kernels_checked", ctypes.c_uint32),
        ("kernels_failed", ctypes.c_uint32),
        ("max_error", ctypes.c_double),
        ("_first_failure", ctypes.c_char * 128),
        ("elapsed_ms", ctypes.c_double),
    ]

    first_failure = property(lambda self: self._first_failure.decode(errors="replace"))


class TuneResult(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("shapes", ctypes.c_uint32),
        ("candidates_timed", ctypes.c_uint32),
        ("candidates_rejected", ctypes.c_uint32),
        ("shapes_changed", ctypes.c_uint32),
        ("default_us", ctypes.c_double),
        ("tuned_us", ctypes.c_double),
        ("elapsed_ms", ctypes.c_double),
        ("file_written", ctypes.c_uint32),
    ]


_ProgressFn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_float)
_TokenFn = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t
)
_PrefillFn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)


class _TokenLogprob(ctypes.Structure):
    _fields_ = [("token", ctypes.c_int32), ("logprob", ctypes.c_float)]


_LogprobsFn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_float,
                               ctypes.POINTER(_TokenLogprob), ctypes.c_size_t)

# vkllm_logits_kind, and the most alternatives a generated token reports.
LOGITS_RAW = 0
LOGITS_LOG_SOFTMAX = 1
MAX_TOP_LOGPROBS = 20


class _ModelParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("progress", _ProgressFn),
        ("progress_user_data", ctypes.c_void_p),
    ]


class ModelInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("_architecture", ctypes.c_char * 64),
        ("n_vocab", ctypes.c_uint32),
        ("n_embd", ctypes.c_uint32),
        ("n_layers", ctypes.c_uint32),
        ("n_heads", ctypes.c_uint32),
        ("n_kv_heads", ctypes.c_uint32),
        ("head_dim", ctypes.c_uint32),
        ("n_ctx_train", ctypes.c_uint32),
        ("device_bytes", ctypes.c_uint64),
        ("file_bytes", ctypes.c_uint64),
        ("tensor_bytes", ctypes.c_uint64),
    ]

    architecture = property(lambda self: self._architecture.decode(errors="replace"))


class _SessionParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_ctx", ctypes.c_uint32),
        ("n_seq", ctypes.c_uint32),
        ("n_batch", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("n_sink", ctypes.c_uint32),
        ("kv_type", ctypes.c_int32),
    ]


class _SamplingParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("temperature", ctypes.c_float),
        ("top_k", ctypes.c_int32),
        ("top_p", ctypes.c_float),
        ("min_p", ctypes.c_float),
        ("repeat_penalty", ctypes.c_float),
        ("repeat_last_n", ctypes.c_int32),
        ("seed", ctypes.c_uint64),
        ("presence_penalty", ctypes.c_float),
        ("frequency_penalty", ctypes.c_float),
        ("typical_p", ctypes.c_float),
        ("logit_bias", ctypes.c_void_p),
        ("n_logit_bias", ctypes.c_size_t),
        ("grammar", ctypes.c_void_p),
    ]


class _LogitBias(ctypes.Structure):
    _fields_ = [("token", ctypes.c_int32), ("bias", ctypes.c_float)]


class SessionInfo(ctypes.Structure):
    """What a session is: its context, sequences, chunk, KV type and memory."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_ctx", ctypes.c_uint32),
        ("n_seq", ctypes.c_uint32),
        ("n_batch", ctypes.c_uint32),
        ("n_sink", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("kv_type", ctypes.c_int32),
        ("kv_cache_bytes", ctypes.c_uint64),
        ("device_bytes", ctypes.c_uint64),
    ]


class _BatchSequence(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("seq", ctypes.c_uint32),
        ("prompt", ctypes.POINTER(ctypes.c_int32)),
        ("n_prompt", ctypes.c_size_t),
        ("sampler", ctypes.c_void_p),
        ("tokens", ctypes.POINTER(ctypes.c_int32)),
        ("n_generated", ctypes.c_size_t),
        ("stop_reason", ctypes.c_int32),
    ]


class _GgufKey(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int32),
        ("element_type", ctypes.c_int32),
        ("count", ctypes.c_uint64),
    ]


class _GenerateParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("seq", ctypes.c_uint32),
        ("max_tokens", ctypes.c_uint32),
        ("stop", ctypes.POINTER(ctypes.c_char_p)),
        ("n_stop", ctypes.c_size_t),
        ("render_special", ctypes.c_int32),
        ("on_token", _TokenFn),
        ("on_prefill", _PrefillFn),
        ("user_data", ctypes.c_void_p),
        ("steps_per_submit", ctypes.c_uint32),
        ("ignore_eog", ctypes.c_int32),
        ("on_logprobs", _LogprobsFn),
        ("top_logprobs", ctypes.c_int32),
    ]


class _EvalParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("kind", ctypes.c_int32),
        ("positions", ctypes.POINTER(ctypes.c_uint32)),
        ("n_positions", ctypes.c_size_t),
    ]


class GenerateResult(ctypes.Structure):
    """What a generation did: prompt tokens, generated tokens, why it stopped (stop_reason, a
    StopReason), timings, the seed, and whether the text is a finished string of the grammar
    (grammar_progress, a GrammarProgress: INCOMPLETE when a cap, a stop string or a cancel cut
    it short, so it must not be parsed as the grammar's language; COMPLETE without a
    grammar)."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_prompt", ctypes.c_size_t),
        ("n_generated", ctypes.c_size_t),
        ("_stop_reason", ctypes.c_int32),
        ("prefill_ms", ctypes.c_double),
        ("decode_ms", ctypes.c_double),
        ("seed", ctypes.c_uint64),
        ("_grammar_progress", ctypes.c_int32),
    ]

    @property
    def stop_reason(self):
        return _named(StopReason, self._stop_reason)

    @property
    def grammar_progress(self):
        return _named(GrammarProgress, self._grammar_progress)


class SessionStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("command_buffers_recorded", ctypes.c_uint64),
        ("submits", ctypes.c_uint64),
        ("tokens_prefilled", ctypes.c_uint64),
        ("tokens_decoded", ctypes.c_uint64),
        ("prefill_ms", ctypes.c_double),
        ("decode_ms", ctypes.c_double),
        ("kv_cache_bytes", ctypes.c_uint64),
    ]


_SONAME = f"libvkllm.so.{VERSION_MAJOR}.{VERSION_MINOR}"


class _ToolCall(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char_p), ("name", ctypes.c_char_p), ("arguments", ctypes.c_char_p)]


class _ReplyPart(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("reasoning", ctypes.c_char_p),
        ("content", ctypes.c_char_p),
        ("tool_calls", ctypes.POINTER(_ToolCall)),
        ("n_tool_calls", ctypes.c_size_t),
    ]


class _ChatParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("model", ctypes.c_void_p),
        ("template_source", ctypes.c_char_p),
        ("template_name", ctypes.c_char_p),
        ("tools", ctypes.c_char_p),
        ("extra", ctypes.c_char_p),
        ("add_generation_prompt", ctypes.c_int32),
        ("bos_token", ctypes.c_char_p),
        ("eos_token", ctypes.c_char_p),
        ("now", ctypes.c_int64),
    ]


def _pkg_config_libdir():
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "vkllm"], capture_output=True,
                             text=True, check=False)
    except OSError:  # no pkg-config
        return None
    libdir = out.stdout.strip()
    return os.path.normpath(libdir) if out.returncode == 0 and libdir else None


def _open_library():
    # $VKLLM_LIBRARY, else the loader's own search (rpath, LD_LIBRARY_PATH, ldconfig's cache),
    # else where pkg-config says vkllm is installed, so a prefix on PKG_CONFIG_PATH suffices.
    tried = []
    explicit = os.environ.get("VKLLM_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit)
        except OSError as e:
            raise ImportError(f"VKLLM_LIBRARY={explicit} cannot be loaded: {e}") from None
    try:
        return ctypes.CDLL(_SONAME)
    except OSError as e:
        tried.append(f"the loader's search path: {e}")
    libdir = _pkg_config_libdir()
    if libdir:
        path = os.path.join(libdir, _SONAME)
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"pkg-config's libdir: {e}")
    else:
        tried.append("pkg-config: no vkllm.pc (or no pkg-config)")
    raise ImportError(
        f"libvkllm ({_SONAME}) not found. Set VKLLM_LIBRARY to the library's path, add an "
        "installed prefix's lib/pkgconfig to PKG_CONFIG_PATH, or its lib directory to "
        "LD_LIBRARY_PATH (run ldconfig after installing to a system prefix). Tried "
        + "; ".join(tried))


def _load():
    lib = _open_library()
    status = ctypes.c_int32
    sigs = {
        "vkllm_version": (ctypes.c_uint32, []),
        "vkllm_version_string": (ctypes.c_char_p, []),
        "vkllm_status_string": (ctypes.c_char_p, [status]),
        "vkllm_last_error": (ctypes.c_char_p, []),
        "vkllm_devices_enumerate": (
            status,
            [ctypes.POINTER(DeviceInfo), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_runtime_params_init": (None, [ctypes.c_void_p]),
        "vkllm_runtime_create": (
            status,
            [ctypes.POINTER(_RuntimeParams), ctypes.POINTER(ctypes.c_void_p)],
        ),
        "vkllm_runtime_destroy": (None, [ctypes.c_void_p]),
        "vkllm_runtime_get_device_info": (status, [ctypes.c_void_p, ctypes.POINTER(DeviceInfo)]),
        "vkllm_runtime_get_stats": (status, [ctypes.c_void_p, ctypes.POINTER(RuntimeStats)]),
        "vkllm_runtime_self_check": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(SelfCheckResult)],
        ),
        "vkllm_runtime_tune": (
            status,
            [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(TuneResult)],
        ),
        "vkllm_model_params_init": (None, [ctypes.c_void_p]),
        "vkllm_model_load": (
            status,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_ModelParams),
             ctypes.POINTER(ctypes.c_void_p)],
        ),
        "vkllm_model_destroy": (None, [ctypes.c_void_p]),
        "vkllm_model_get_tokenizer": (ctypes.c_void_p, [ctypes.c_void_p]),
        "vkllm_model_get_info": (status, [ctypes.c_void_p, ctypes.POINTER(ModelInfo)]),
        "vkllm_model_get_chat_template": (ctypes.c_char_p, [ctypes.c_void_p]),
        "vkllm_chat_params_init": (None, [ctypes.c_void_p]),
        "vkllm_chat_render_json": (
            status,
            [ctypes.POINTER(_ChatParams), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_reply_format_of_template": (ctypes.c_int32, [ctypes.c_char_p]),
        "vkllm_prompt_opens_reasoning": (ctypes.c_int32, [ctypes.c_char_p]),
        "vkllm_reply_parser_create": (
            status,
            [ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)],
        ),
        "vkllm_reply_parser_destroy": (None, [ctypes.c_void_p]),
        "vkllm_reply_parser_push": (
            status,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_ReplyPart)],
        ),
        "vkllm_reply_parser_finish": (status, [ctypes.c_void_p, ctypes.POINTER(_ReplyPart)]),
        "vkllm_tokenizer_encode": (
            status,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
             ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_tokenizer_decode": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t, ctypes.c_uint32,
             ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_tokenizer_is_end_of_generation": (
            status,
            [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32)],
        ),
        "vkllm_session_params_init": (None, [ctypes.c_void_p]),
        "vkllm_session_create": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(_SessionParams), ctypes.POINTER(ctypes.c_void_p)],
        ),
        "vkllm_session_destroy": (None, [ctypes.c_void_p]),
        "vkllm_session_reset": (status, [ctypes.c_void_p, ctypes.c_int32]),
        "vkllm_session_get_position": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)],
        ),
        "vkllm_session_get_stats": (status, [ctypes.c_void_p, ctypes.POINTER(SessionStats)]),
        "vkllm_session_eval": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_float)],
        ),
        "vkllm_session_get_state_size": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_session_state_save": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_session_state_load": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t],
        ),
        "vkllm_session_state_save_file": (status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p]),
        "vkllm_session_state_load_file": (status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p]),
        "vkllm_session_fork": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32],
        ),
        "vkllm_session_get_tokens": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_sampling_params_init": (None, [ctypes.c_void_p]),
        "vkllm_generate_params_init": (None, [ctypes.c_void_p]),
        "vkllm_eval_params_init": (None, [ctypes.c_void_p]),
        "vkllm_session_eval_logits": (
            status,
            [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
             ctypes.POINTER(_EvalParams), ctypes.POINTER(ctypes.c_float)],
        ),
        "vkllm_session_generate": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
             ctypes.POINTER(_SamplingParams), ctypes.POINTER(_GenerateParams),
             ctypes.POINTER(GenerateResult)],
        ),
        "vkllm_sampler_create": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(_SamplingParams), ctypes.POINTER(ctypes.c_void_p)],
        ),
        "vkllm_sampler_destroy": (None, [ctypes.c_void_p]),
        "vkllm_sampler_sample": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_int32)],
        ),
        "vkllm_sampler_accept": (status, [ctypes.c_void_p, ctypes.c_int32]),
        "vkllm_sampler_reset": (status, [ctypes.c_void_p]),
        "vkllm_sampler_get_seed": (status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64)]),
        "vkllm_session_cancel": (status, [ctypes.c_void_p]),
        "vkllm_session_get_info": (status, [ctypes.c_void_p, ctypes.POINTER(SessionInfo)]),
        "vkllm_session_generate_batch": (
            status,
            [ctypes.c_void_p, ctypes.POINTER(_BatchSequence), ctypes.c_size_t,
             ctypes.POINTER(_GenerateParams)],
        ),
        "vkllm_model_get_gguf": (ctypes.c_void_p, [ctypes.c_void_p]),
        "vkllm_gguf_get_key": (status, [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(_GgufKey)]),
        "vkllm_gguf_get_int": (
            status,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)],
        ),
        "vkllm_gguf_get_float": (
            status,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_double)],
        ),
        "vkllm_gguf_get_string": (
            status,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_size_t)],
        ),
        "vkllm_gguf_get_text": (
            status,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
             ctypes.POINTER(ctypes.c_size_t)],
        ),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    major, minor = lib.vkllm_version() // 10000, lib.vkllm_version() // 100 % 100
    if major != VERSION_MAJOR or (major == 0 and minor != VERSION_MINOR):
        raise ImportError(f"libvkllm version {major}.{minor}, these bindings need "
                          f"{VERSION_MAJOR}.{VERSION_MINOR}")
    return lib


_lib = _load()


def _check(code):
    if code != OK:
        raise Error(code, _lib.vkllm_last_error().decode(errors="replace"))


def _params(cls, init):
    """A params struct with the library's defaults. The *_init functions write the library's
    whole struct, which may be larger than these bindings' copy (a newer library): they write
    into a roomy buffer, and the struct keeps the fields it knows with its own struct_size,
    as an older caller's would (the library fills the rest with defaults)."""
    buf = ctypes.create_string_buffer(max(4096, ctypes.sizeof(cls)))
    init(buf)
    p = cls.from_buffer_copy(buf.raw[: ctypes.sizeof(cls)])
    p.struct_size = ctypes.sizeof(cls)
    return p


def _live(handle, what):
    if not handle:
        raise Error(ERR_INVALID_ARGUMENT, f"the {what} is closed")
    return handle


def _sampling_params(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0,
                     repeat_last_n=64, seed=0, presence_penalty=0.0, frequency_penalty=0.0,
                     typical_p=1.0, logit_bias=None, grammar=None):
    """vkllm_sampling_params from keyword arguments, and the bias array it points to (keep it
    alive while the params are in use). logit_bias: {token: bias}, float("-inf") bans;
    grammar: a Grammar (kept open by the caller while the params are in use)."""
    sp = _params(_SamplingParams, _lib.vkllm_sampling_params_init)
    sp.temperature = temperature
    sp.top_k = top_k
    sp.top_p = top_p
    sp.min_p = min_p
    sp.repeat_penalty = repeat_penalty
    sp.repeat_last_n = repeat_last_n
    sp.seed = seed
    sp.presence_penalty = presence_penalty
    sp.frequency_penalty = frequency_penalty
    sp.typical_p = typical_p
    items = sorted((logit_bias or {}).items())
    biases = (_LogitBias * max(len(items), 1))(*[_LogitBias(t, b) for t, b in items])
    if items:
        sp.logit_bias = ctypes.cast(biases, ctypes.c_void_p)
        sp.n_logit_bias = len(items)
    if grammar is not None:
        sp.grammar = _live(grammar._handle, "grammar")
    return sp, biases


def _text(fill):
    """A string from a C function with vkllm_gguf_get_string's buffer rules."""
    n = ctypes.c_size_t(0)
    code = fill(None, 0, ctypes.byref(n))
    if code not in (OK, ERR_BUFFER_TOO_SMALL):
        _check(code)
    buf = ctypes.create_string_buffer(n.value + 1)
    _check(fill(buf, len(buf), ctypes.byref(n)))
    return buf.raw[: n.value].decode(errors="replace")


def version():
    return _lib.vkllm_version_string().decode()


def devices():
    """The Vulkan devices of this machine, in index order."""
    n = ctypes.c_size_t(0)
    _check(_lib.vkllm_devices_enumerate(None, 0, ctypes.byref(n)))
    infos = (DeviceInfo * n.value)()
    for i in infos:
        i.struct_size = ctypes.sizeof(DeviceInfo)
    _check(_lib.vkllm_devices_enumerate(infos, n.value, ctypes.byref(n)))
    return list(infos)


class Runtime:
    """A Vulkan device ready to run kernels. Use as a context manager or call close()."""

    def __init__(self, device=None, validation=False, pipeline_cache=None, log=None,
                 memory_budget=None):
        """memory_budget: the most bytes of device memory the runtime may hold (models,
        sessions); past it loads fail with ERR_OUT_OF_DEVICE_MEMORY. None: no limit."""
        self._handle = None
        p = _params(_RuntimeParams, _lib.vkllm_runtime_params_init)
        if memory_budget is not None:
            p.device_memory_budget = memory_budget
        if isinstance(device, int):
            p.device_index = device
        elif device is not None:
            p.device_name = device.encode()
        if validation:
            p.flags |= RUNTIME_VALIDATION
        if pipeline_cache is not None:
            p.pipeline_cache_path = os.fsencode(pipeline_cache)
        # The callback object must outlive the runtime: keep it on self.
        self._log = _LogFn(lambda _u, level, msg: log(level, msg.decode(errors="replace")))
        if log is not None:
            p.log_fn = self._log
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_runtime_create(ctypes.byref(p), ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_runtime_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def device_info(self):
        info = DeviceInfo()
        info.struct_size = ctypes.sizeof(DeviceInfo)
        _check(_lib.vkllm_runtime_get_device_info(self._handle, ctypes.byref(info)))
        return info

    def stats(self):
        s = RuntimeStats()
        s.struct_size = ctypes.sizeof(RuntimeStats)
        _check(_lib.vkllm_runtime_get_stats(self._handle, ctypes.byref(s)))
        return s

    def self_check(self):
        r = SelfCheckResult()
        r.struct_size = ctypes.sizeof(SelfCheckResult)
        _check(_lib.vkllm_runtime_self_check(self._handle, ctypes.byref(r)))
        return r

    def tune(self, model):
        """Times the decode kernels' variants on `model`'s weight shapes and keeps the fastest
        for sessions created afterwards (and in the tune file beside the pipeline cache, when
        the runtime has one: file_written). What each shape tried goes to the log at INFO.
        Raises vkllm.Error for a closed or missing (None) model, or one of another runtime."""
        r = TuneResult()
        r.struct_size = ctypes.sizeof(TuneResult)
        handle = _live(model._handle, "model") if model is not None else None
        _check(_lib.vkllm_runtime_tune(_live(self._handle, "runtime"), handle, ctypes.byref(r)))
        return r


ToolCall = collections.namedtuple("ToolCall", "id name arguments")
ToolCall.__doc__ = "A tool call: its id ('' where the format has none), name, and arguments as JSON text."

ReplyPart = collections.namedtuple("ReplyPart", "reasoning content tool_calls")
ReplyPart.__doc__ = "What a push made certain: reasoning and answer text to append, calls completed."


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
    p = _params(_ChatParams, _lib.vkllm_chat_params_init)
    p.model = _live(model._handle, "model") if model is not None else None
    p.template_source = template.encode() if template is not None else None
    p.template_name = template_name.encode() if template_name is not None else None
    p.tools = json.dumps(tools, ensure_ascii=False).encode() if tools is not None else None
    p.extra = json.dumps(extra, ensure_ascii=False).encode() if extra else None
    p.add_generation_prompt = 1 if add_generation_prompt else 0
    p.bos_token = bos_token.encode() if bos_token is not None else None
    p.eos_token = eos_token.encode() if eos_token is not None else None
    if isinstance(now, datetime.datetime):
        now = int(now.timestamp())
    if now is not None:
        p.now = int(now)
    data = json.dumps(list(messages), ensure_ascii=False).encode()
    n = ctypes.c_size_t(0)
    code = _lib.vkllm_chat_render_json(ctypes.byref(p), data, None, 0, ctypes.byref(n))
    if code not in (OK, ERR_BUFFER_TOO_SMALL):
        _check(code)
    buf = ctypes.create_string_buffer(n.value + 1)
    _check(_lib.vkllm_chat_render_json(ctypes.byref(p), data, buf, len(buf), ctypes.byref(n)))
    return buf.raw[: n.value].decode(errors="replace")


def reply_format_of_template(template_source):
    """The REPLY_* format a chat template (Jinja text) teaches its model; REPLY_PLAIN for none."""
    if template_source is None:
        return REPLY_PLAIN
    return _lib.vkllm_reply_format_of_template(template_source.encode())


def prompt_opens_reasoning(prompt):
    """Whether a rendered prompt ends inside an open reasoning block (e.g. DeepSeek-R1's)."""
    return _lib.vkllm_prompt_opens_reasoning(prompt.encode()) != 0


class ReplyParser:
    """Splits a chat model's reply into reasoning, answer and tool calls as it streams:

        parser = vkllm.ReplyParser(vkllm.reply_format_of_template(model.chat_template()))
        for piece in session.generate(ids, special=True):
            part = parser.push(piece)
            ...  # part.reasoning, part.content, part.tool_calls
        part = parser.finish()

    Text is str or UTF-8 bytes, split anywhere; the parts' text never ends inside a character.
    finish() ends the reply and readies the parser for the next one."""

    def __init__(self, format=REPLY_PLAIN, in_reasoning=False):
        self._handle = None
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_reply_parser_create(int(format), 1 if in_reasoning else 0,
                                              ctypes.byref(handle)))
        self._handle = handle
        self._decoders = [codecs.getincrementaldecoder("utf-8")("replace") for _ in range(2)]

    def _part(self, part, final):
        calls = [
            ToolCall(part.tool_calls[i].id.decode(errors="replace"),
                     part.tool_calls[i].name.decode(errors="replace"),
                     part.tool_calls[i].arguments.decode(errors="replace"))
            for i in range(part.n_tool_calls)
        ]
        reasoning = self._decoders[0].decode(part.reasoning or b"", final)
        content = self._decoders[1].decode(part.content or b"", final)
        return ReplyPart(reasoning, content, calls)

    def push(self, text):
        data = text.encode() if isinstance(text, str) else bytes(text)
        part = _ReplyPart()
        part.struct_size = ctypes.sizeof(_ReplyPart)
        _check(_lib.vkllm_reply_parser_push(_live(self._handle, "reply parser"), data, len(data),
                                            ctypes.byref(part)))
        return self._part(part, False)

    def finish(self):
        part = _ReplyPart()
        part.struct_size = ctypes.sizeof(_ReplyPart)
        _check(_lib.vkllm_reply_parser_finish(_live(self._handle, "reply parser"),
                                              ctypes.byref(part)))
        return self._part(part, True)

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_reply_parser_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Sampler:
    """llama.cpp's sampler chain (logit bias, repetition/presence/frequency penalties, top-k,
    typical, top-p, min-p, temperature) with its seed and token history, for the logits of any
    session row. `model` (optional) limits the candidates to its tokenizer's ids. The keyword
    arguments and their defaults are Session.generate's; seed=SEED_RANDOM draws one (see
    `seed`). grammar (a Grammar, or GBNF text compiled for `model`) or json_schema (a dict or
    JSON text, compiled for `model`) constrains the tokens it chooses (see progress()). Use as
    a context manager or call close()."""

    def __init__(self, model=None, grammar=None, json_schema=None, **sampling):
        self._handle = None
        compiled, owned = _grammar_of(model, grammar, json_schema)
        try:
            sp, biases = _sampling_params(grammar=compiled, **sampling)
            tok = (_lib.vkllm_model_get_tokenizer(_live(model._handle, "model"))
                   if model is not None else None)
            handle = ctypes.c_void_p()
            _check(_lib.vkllm_sampler_create(tok, ctypes.byref(sp), ctypes.byref(handle)))
            del biases  # copied by the library
        finally:
            if owned:
                compiled.close()  # the sampler holds its own reference
        self._handle = handle
        self.model = model

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_sampler_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def sample(self, logits):
        """A token chosen from one row of logits (a sequence of floats: the model's n_vocab).
        It is not recorded: call accept() with the token the sequence keeps."""
        row = (ctypes.c_float * max(len(logits), 1))(*logits)
        token = ctypes.c_int32(0)
        _check(_lib.vkllm_sampler_sample(_live(self._handle, "sampler"), row, len(logits),
                                         ctypes.byref(token)))
        return token.value

    def accept(self, token):
        """A token of the sequence (prompt or generated), for the penalties."""
        _check(_lib.vkllm_sampler_accept(_live(self._handle, "sampler"), token))

    def reset(self):
        """Forgets the history and restarts the draws from the seed."""
        _check(_lib.vkllm_sampler_reset(_live(self._handle, "sampler")))

    @property
    def seed(self):
        """The seed the draws come from (the one drawn for SEED_RANDOM)."""
        out = ctypes.c_uint64(0)
        _check(_lib.vkllm_sampler_get_seed(_live(self._handle, "sampler"), ctypes.byref(out)))
        return out.value


class Model:
    """A model's weights on a runtime's device (immutable; shared by sessions). Use as a
    context manager or call close(); the library keeps the memory until the last session of
    the model is gone."""

    def __init__(self, runtime, path, progress=None):
        self._handle = None
        p = _params(_ModelParams, _lib.vkllm_model_params_init)
        # progress(fraction) -> True/None to go on, False to cancel the load.
        self._progress = _ProgressFn(lambda _u, f: 0 if progress(f) is not False else 1)
        if progress is not None:
            p.progress = self._progress
        handle = ctypes.c_void_p()
        _check(
            _lib.vkllm_model_load(
                _live(runtime._handle, "runtime"), os.fsencode(path), ctypes.byref(p),
                ctypes.byref(handle),
            )
        )
        self._handle = handle
        self.runtime = runtime

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_model_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def info(self):
        info = ModelInfo()
        info.struct_size = ctypes.sizeof(ModelInfo)
        _check(_lib.vkllm_model_get_info(_live(self._handle, "model"), ctypes.byref(info)))
        return info

    def chat_render(self, messages, **kwargs):
        """vkllm.chat_render with this model's template, BOS and EOS as the defaults."""
        return chat_render(messages, model=self, **kwargs)

    def chat_template(self):
        return _lib.vkllm_model_get_chat_template(_live(self._handle, "model")).decode(
            errors="replace"
        )

    def tokenize(self, text, add_special=True, parse_special=False):
        """The token ids of `text` (str or UTF-8 bytes), BOS added where the model wants it.
        Special tokens are parsed only with parse_special=True: by default "<|im_end|>" in the
        text is plain text. Text rendered by a chat template needs parse_special=True (and
        add_special=False where the template writes BOS); Conversation and
        Session.create_chat_completion tokenize it so themselves."""
        return self.tokenizer().tokenize(text, add_special, parse_special)

    def detokenize(self, ids, special=False):
        """The text of a list of token ids."""
        return self.tokenizer().detokenize(ids, special)

    def _gguf(self):
        return _lib.vkllm_model_get_gguf(_live(self._handle, "model"))

    def meta_keys(self):
        """The names of the model file's metadata keys, in file order (read from the copy the
        model keeps: the file is not opened again)."""
        names, key = [], _GgufKey()
        key.struct_size = ctypes.sizeof(_GgufKey)
        g = self._gguf()
        while True:
            code = _lib.vkllm_gguf_get_key(g, len(names), ctypes.byref(key))
            if code == ERR_NOT_FOUND:
                return names
            _check(code)
            names.append(key.name.decode(errors="replace"))

    def meta_int(self, key):
        out = ctypes.c_int64(0)
        _check(_lib.vkllm_gguf_get_int(self._gguf(), key.encode(), ctypes.byref(out)))
        return out.value

    def meta_float(self, key):
        out = ctypes.c_double(0)
        _check(_lib.vkllm_gguf_get_float(self._gguf(), key.encode(), ctypes.byref(out)))
        return out.value

    def meta_string(self, key):
        g = self._gguf()
        return _text(lambda buf, cap, n: _lib.vkllm_gguf_get_string(g, key.encode(), buf, cap, n))

    def meta_text(self, key):
        """Any value as readable text (arrays as their first elements and length)."""
        g = self._gguf()
        return _text(lambda buf, cap, n: _lib.vkllm_gguf_get_text(g, key.encode(), buf, cap, n))

    def is_end_of_generation(self, token):
        return self.tokenizer().is_end_of_generation(token)


class Session:
    """KV caches of one or more sequences of a model. Used by one thread at a time; a
    generation in progress (a generate() iterator not yet exhausted or closed) holds it."""

    def __init__(self, model, n_ctx=0, n_seq=1, n_batch=None, flags=0, n_sink=None, kv_type=KV_F16):
        self._handle = None
        self._busy = False
        self._cancel_asked = False
        self.last_result = None
        self.last_batch = None
        self.last_logprobs = None
        p = _params(_SessionParams, _lib.vkllm_session_params_init)
        p.n_ctx = n_ctx
        p.n_seq = n_seq
        p.flags = flags
        p.kv_type = kv_type
        if n_batch is not None:
            p.n_batch = n_batch
        if n_sink is not None:
            p.n_sink = n_sink
        handle = ctypes.c_void_p()
        _check(
            _lib.vkllm_session_create(
                _live(model._handle, "model"), ctypes.byref(p), ctypes.byref(handle)
            )
        )
        self._handle = handle
        self.model = model

    def close(self):
        if getattr(self, "_handle", None):
            if self._busy:
                raise RuntimeError("vkllm.Session.close: a generation is in progress")
            _lib.vkllm_session_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # A generator still holding the session keeps a reference to it, so it is not busy.
        if not getattr(self, "_busy", False):
            self.close()

    def _idle(self):
        h = _live(self._handle, "session")
        if self._busy:
            raise RuntimeError("vkllm.Session: a generation is in progress on this session")
        return h

    def reset(self, seq=-1):
        """Empties sequence `seq`, or all of them."""
        _check(_lib.vkllm_session_reset(self._idle(), seq))

    def position(self, seq=0):
        """Tokens in the sequence's cache so far."""
        n = ctypes.c_uint32(0)
        _check(_lib.vkllm_session_get_position(self._idle(), seq, ctypes.byref(n)))
        return n.value

    def save_state(self, seq=0):
        """Sequence `seq`'s state (its KV cache, position and token ids) as bytes, for
        load_state() on any session of the same model."""
        handle = self._idle()
        size = ctypes.c_size_t(0)
        _check(_lib.vkllm_session_get_state_size(handle, seq, ctypes.byref(size)))
        buf = ctypes.create_string_buffer(max(size.value, 1))
        _check(_lib.vkllm_session_state_save(handle, seq, buf, size.value, ctypes.byref(size)))
        return buf.raw[: size.value]

    def load_state(self, data, seq=0):
        """Replaces sequence `seq` with a state save_state() returned. vkllm.Error
        (ERR_FORMAT, ERR_INVALID_ARGUMENT), with the sequence unchanged, for bytes that are not
        an intact state of this model and session's settings."""
        data = bytes(data)
        _check(_lib.vkllm_session_state_load(self._idle(), seq, data, len(data)))

    def save_state_file(self, path, seq=0):
        _check(_lib.vkllm_session_state_save_file(self._idle(), seq, os.fsencode(path)))

    def load_state_file(self, path, seq=0):
        _check(_lib.vkllm_session_state_load_file(self._idle(), seq, os.fsencode(path)))

    def fork(self, src_seq, dst_seq, n_keep=None):
        """Replaces sequence `dst_seq` with the first `n_keep` positions of `src_seq` (all of
        them by default), copied on the device."""
        if n_keep is None:
            n_keep = self.position(src_seq)
        _check(_lib.vkllm_session_fork(self._idle(), src_seq, dst_seq, n_keep))

    def tokens(self, seq=0):
        """The token ids in sequence `seq`'s cache, in position order."""
        handle = self._idle()
        n = ctypes.c_size_t(0)
        code = _lib.vkllm_session_get_tokens(handle, seq, None, 0, ctypes.byref(n))
        if code not in (OK, ERR_BUFFER_TOO_SMALL):
            _check(code)
        ids = (ctypes.c_int32 * max(n.value, 1))()
        _check(_lib.vkllm_session_get_tokens(handle, seq, ids, n.value, ctypes.byref(n)))
        return list(ids[: n.value])

    def cancel(self):
        """From any thread: stops the running generation (or prefill) at its next step or
        chunk; it ends as if stopped early (last_result.stop_reason STOP_CANCELLED). A cancel
        while nothing runs is dropped."""
        self._cancel_asked = True
        _check(_lib.vkllm_session_cancel(_live(self._handle, "session")))

    def info(self):
        """SessionInfo: the context it got (n_ctx 0 asks for the model's, at most 4096), its
        sequences, prefill chunk, KV type, KV bytes and device memory."""
        s = SessionInfo()
        s.struct_size = ctypes.sizeof(SessionInfo)
        _check(_lib.vkllm_session_get_info(_live(self._handle, "session"), ctypes.byref(s)))
        return s

    def generate_batch(self, prompts, max_tokens=256, samplers=None, ignore_eog=False):
        """Generates for several prompts at once, prompt i in sequence i (the session needs
        n_seq >= len(prompts)), all decoded together one step per token; samplers[i] (a
        Sampler, or None for greedy) chooses sequence i's tokens. Returns one list of token ids
        per prompt. Raises vkllm.Error(ERR_CANCELLED) after cancel(), with `last_batch` holding
        the tokens so far."""
        handle = self._idle()
        samplers = samplers or [None] * len(prompts)
        if len(samplers) != len(prompts):
            raise ValueError("one sampler (or None) per prompt")
        seqs = (_BatchSequence * max(len(prompts), 1))()
        keep = []
        for i, prompt in enumerate(prompts):
            ids = (ctypes.c_int32 * max(len(prompt), 1))(*prompt)
            out = (ctypes.c_int32 * max(max_tokens, 1))()
            keep += [ids, out]
            seqs[i].struct_size = ctypes.sizeof(_BatchSequence)
            seqs[i].seq = i
            seqs[i].prompt = ids
            seqs[i].n_prompt = len(prompt)
            seqs[i].sampler = _live(samplers[i]._handle, "sampler") if samplers[i] else None
            seqs[i].tokens = out
        gp = _params(_GenerateParams, _lib.vkllm_generate_params_init)
        gp.max_tokens = max_tokens
        gp.ignore_eog = 1 if ignore_eog else 0
        self._busy = True
        try:
            code = _lib.vkllm_session_generate_batch(handle, seqs, len(prompts), ctypes.byref(gp))
        finally:
            self._busy = False
        self.last_batch = [list(seqs[i].tokens[: seqs[i].n_generated])
                           for i in range(len(prompts))]
        _check(code)
        return self.last_batch

    def stats(self):
        s = SessionStats()
        s.struct_size = ctypes.sizeof(SessionStats)
        _check(_lib.vkllm_session_get_stats(self._idle(), ctypes.byref(s)))
        return s

    def eval_logits(self, tokens, seq=0, positions=None, log_softmax=False):
        """Appends `tokens` (ids) to sequence `seq` and returns the logits after each position
        (a list of rows of vkllm_model_info.n_vocab floats), or after each of `positions`
        (indices into `tokens`, any order); log_softmax: the log-probabilities over the
        tokenizer's ids instead (the padded ids past them -inf). See
        vkllm_session_eval_logits."""
        handle = self._idle()
        n_vocab = self.model.info().n_vocab
        ids = (ctypes.c_int32 * max(len(tokens), 1))(*tokens)
        p = _params(_EvalParams, _lib.vkllm_eval_params_init)
        p.kind = LOGITS_LOG_SOFTMAX if log_softmax else LOGITS_RAW
        rows = len(tokens)
        if positions is not None:
            pos = (ctypes.c_uint32 * max(len(positions), 1))(*positions)
            p.positions = pos
            p.n_positions = len(positions)
            rows = len(positions)
        out = (ctypes.c_float * max(rows * n_vocab, 1))()
        _check(_lib.vkllm_session_eval_logits(handle, seq, ids, len(tokens), ctypes.byref(p),
                                              out))
        return [list(out[r * n_vocab:(r + 1) * n_vocab]) for r in range(rows)]

    def generate(self, prompt, max_tokens=256, temperature=0.8, top_k=40, top_p=0.95,
                 min_p=0.05, repeat_penalty=1.0, repeat_last_n=64, seed=0, stop=(), seq=0,
                 steps_per_submit=0, ignore_eog=False, presence_penalty=0.0,
                 frequency_penalty=0.0, typical_p=1.0, logit_bias=None, logprobs=False,
                 top_logprobs=0, grammar=None, json_schema=None):
        """Appends `prompt` (token ids) to sequence `seq` and yields the generated text as it
        streams, piece by piece (str; never half a UTF-8 character). The defaults are C's
        (vkllm_sampling_params_init); temperature 0: greedy.

        Stopping early (break, close() on the iterator, or dropping it) cancels the generation
        on the library's side; the session stays usable. Afterwards `last_result` holds the
        GenerateResult (stop_reason STOP_CANCELLED when stopped early). A failure raises
        vkllm.Error from the iteration. steps_per_submit: decode steps per submission, greedy ones or
        sampled ones the device's sampler takes (0: the library's choice; see
        vkllm_generate_params). ignore_eog: end-of-generation
        tokens are generated and decoded like any other (only max_tokens, a stop string or
        stopping early ends it), for benchmarks and comparisons with other runners.

        max_tokens=0 only prefills: the prompt goes into the cache and nothing is yielded
        (last_result.n_generated 0, STOP_MAX_TOKENS); position() grows by len(prompt), so a
        later generate continues after it. As for any generation, the work runs as the iterator
        is consumed: list(session.generate(system_prompt, max_tokens=0)).

        The sampler chain is Sampler's: presence_penalty, frequency_penalty, typical_p and
        logit_bias ({token: bias}, float("-inf") bans) as there; seed=SEED_RANDOM draws a
        seed, reported as last_result.seed.

        logprobs (or top_logprobs > 0): `last_logprobs` gets, for each generated token, a tuple
        (token, logprob, [(id, logprob), ...]) with the top_logprobs (0 to MAX_TOP_LOGPROBS)
        most likely ids at its position, most likely first: the model's log-probabilities,
        before temperature and penalties, computed on the device (vkllm_logprobs_fn).

        grammar (a Grammar, or GBNF text) or json_schema (a dict, or JSON text) constrains the
        generated text to the grammar's language: it stops (STOP_END_OF_GENERATION) when the
        model ends a complete text or when nothing more can follow. A bad grammar or schema
        raises vkllm.Error here, before anything runs."""
        handle = self._idle()
        ids = (ctypes.c_int32 * max(len(prompt), 1))(*prompt)
        compiled, _ = _grammar_of(self.model, grammar, json_schema)
        sp, biases = _sampling_params(
            temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed,
            presence_penalty, frequency_penalty, typical_p, logit_bias, compiled)
        gp = _params(_GenerateParams, _lib.vkllm_generate_params_init)
        gp.seq = seq
        gp.max_tokens = max_tokens
        gp.steps_per_submit = steps_per_submit
        gp.ignore_eog = 1 if ignore_eog else 0
        gp.top_logprobs = top_logprobs
        self.last_logprobs = [] if logprobs or top_logprobs else None
        stops = [s.encode() if isinstance(s, str) else bytes(s) for s in stop]
        stop_arr = (ctypes.c_char_p * max(len(stops), 1))(*stops)
        if stops:
            gp.stop = stop_arr
            gp.n_stop = len(stops)
        # The worker's vkllm_session_generate reads the stop strings, the biases and the grammar: alive
        # till then, even if the Grammar is closed before the stream starts.
        return self._stream(handle, ids, len(prompt), sp, gp,
                            (stop_arr, biases, compiled._ref if compiled else None))

    def _stream(self, handle, ids, n_prompt, sp, gp, keep_alive):
        # vkllm_session_generate runs on a worker thread and streams through on_token into a queue;
        # this generator hands the pieces out. The session is used by that one thread only.
        pieces = queue.Queue(maxsize=4)  # back-pressure: the worker waits for the reader
        cancel = threading.Event()
        done = object()

        def on_token(_user, _token, text, length):
            if cancel.is_set():
                return 1
            if length:
                pieces.put(ctypes.string_at(text, length))
            return 1 if cancel.is_set() else 0

        callback = _TokenFn(on_token)
        gp.on_token = callback
        reports = self.last_logprobs

        def on_logprobs(_user, token, logprob, top, n_top):
            reports.append((token, logprob, [(top[i].token, top[i].logprob)
                                             for i in range(n_top)]))
            return 1 if cancel.is_set() else 0

        logprobs_callback = _LogprobsFn(on_logprobs) if reports is not None else _LogprobsFn()
        gp.on_logprobs = logprobs_callback
        result = GenerateResult()
        result.struct_size = ctypes.sizeof(GenerateResult)
        outcome = {}

        def work():
            code = _lib.vkllm_session_generate(
                handle, ids, n_prompt, ctypes.byref(sp), ctypes.byref(gp), ctypes.byref(result)
            )
            outcome["code"] = code
            # The message is thread-local: read it on this thread.
            outcome["message"] = _lib.vkllm_last_error().decode(errors="replace")
            pieces.put(done)

        self._busy = True
        self._cancel_asked = False
        worker = threading.Thread(target=work, name="vkllm-generate", daemon=True)
        worker.start()
        finished = False
        try:
            while True:
                item = pieces.get()
                if item is done:
                    finished = True
                    break
                yield item.decode(errors="replace")
        finally:
            if not finished:
                cancel.set()
                while pieces.get() is not done:  # unblock the worker if the queue is full
                    pass
            worker.join()
            # alive until the library is done with them
            del callback, logprobs_callback, keep_alive
            self._busy = False
            self.last_result = result
        code = outcome["code"]
        asked = cancel.is_set() or self._cancel_asked
        if code != OK and not (code == ERR_CANCELLED and asked):
            raise Error(code, outcome["message"])


# ---------------------------------------------------------------------------------------------
# Model files, standalone tokenizers, streaming detokenization, the simple chat template form
# and the low-level session steps (issue 26: every public C function reaches the bindings).
# ---------------------------------------------------------------------------------------------

SESSION_RECORD_EVERY_STEP = 0x8
SESSION_PROFILE = 0x10

GGUF_UINT8, GGUF_INT8, GGUF_UINT16, GGUF_INT16, GGUF_UINT32, GGUF_INT32 = 0, 1, 2, 3, 4, 5
GGUF_FLOAT32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY = 6, 7, 8, 9
GGUF_UINT64, GGUF_INT64, GGUF_FLOAT64 = 10, 11, 12

MAX_CHAINED_STEPS = 64

_GGML_TYPE_COUNT = 48


class ModelSummary(ctypes.Structure):
    """What a model file is (vkllm_model_summary); fields the file does not state are 0 or ''."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("gguf_version", ctypes.c_uint32),
        ("_architecture", ctypes.c_char * 64),
        ("_name", ctypes.c_char * 256),
        ("file_bytes", ctypes.c_uint64),
        ("tensor_bytes", ctypes.c_uint64),
        ("n_params", ctypes.c_uint64),
        ("n_tensors", ctypes.c_uint64),
        ("n_keys", ctypes.c_uint64),
        ("context_length", ctypes.c_uint32),
        ("n_layers", ctypes.c_uint32),
        ("n_embd", ctypes.c_uint32),
        ("n_heads", ctypes.c_uint32),
        ("n_kv_heads", ctypes.c_uint32),
        ("n_experts", ctypes.c_uint32),
        ("n_experts_used", ctypes.c_uint32),
        ("n_vocab", ctypes.c_uint32),
        ("_tokenizer_model", ctypes.c_char * 32),
        ("_tokenizer_pre", ctypes.c_char * 32),
        ("tensors_of_type", ctypes.c_uint64 * _GGML_TYPE_COUNT),
    ]

    architecture = property(lambda self: self._architecture.decode(errors="replace"))
    name = property(lambda self: self._name.decode(errors="replace"))
    tokenizer_model = property(lambda self: self._tokenizer_model.decode(errors="replace"))
    tokenizer_pre = property(lambda self: self._tokenizer_pre.decode(errors="replace"))


class _GgufKey(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int32),
        ("element_type", ctypes.c_int32),
        ("count", ctypes.c_uint64),
    ]


class _TensorInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_uint32),
        ("type_name", ctypes.c_char_p),
        ("n_dims", ctypes.c_uint32),
        ("dims", ctypes.c_uint64 * 4),
        ("n_elements", ctypes.c_uint64),
        ("n_bytes", ctypes.c_uint64),
        ("file_offset", ctypes.c_uint64),
    ]


class TokenizerInfo(ctypes.Structure):
    """A tokenizer's vocabulary size and special ids (-1: none) (vkllm_tokenizer_info)."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_vocab", ctypes.c_uint32),
        ("bos", ctypes.c_int32),
        ("eos", ctypes.c_int32),
        ("eot", ctypes.c_int32),
        ("unk", ctypes.c_int32),
        ("pad", ctypes.c_int32),
        ("add_bos", ctypes.c_int32),
        ("add_eos", ctypes.c_int32),
        ("_model", ctypes.c_char * 32),
        ("_pre", ctypes.c_char * 32),
    ]

    model = property(lambda self: self._model.decode(errors="replace"))
    pre = property(lambda self: self._pre.decode(errors="replace"))


class _ChatMessage(ctypes.Structure):
    _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p)]


class _KernelTime(ctypes.Structure):
    _fields_ = [
        ("kernel", ctypes.c_char_p),
        ("dispatches", ctypes.c_uint64),
        ("ms", ctypes.c_double),
    ]


GgufKey = collections.namedtuple("GgufKey", "name type element_type count")
GgufKey.__doc__ = ("A metadata key: its GGUF_* type; for arrays the elements' type and count, "
                   "for scalars element_type == type and count 1.")

TensorInfo = collections.namedtuple(
    "TensorInfo", "name type type_name dims n_elements n_bytes file_offset")
TensorInfo.__doc__ = "A tensor of a model file: ggml type, dims innermost first, its bytes."

KernelTime = collections.namedtuple("KernelTime", "kernel dispatches ms")
KernelTime.__doc__ = "Device time of one compute kernel in a profiled session, summed."


def _declare(sigs):
    for name, (res, args) in sigs.items():
        f = getattr(_lib, name)
        f.restype = res
        f.argtypes = args


_status = ctypes.c_int32
_p_size = ctypes.POINTER(ctypes.c_size_t)
_declare({
    "vkllm_gguf_open": (_status, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "vkllm_gguf_destroy": (None, [ctypes.c_void_p]),
    "vkllm_gguf_get_summary": (_status, [ctypes.c_void_p, ctypes.POINTER(ModelSummary)]),
    "vkllm_gguf_get_key": (_status, [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(_GgufKey)]),
    "vkllm_gguf_get_int": (_status, [ctypes.c_void_p, ctypes.c_char_p,
                                     ctypes.POINTER(ctypes.c_int64)]),
    "vkllm_gguf_get_float": (_status, [ctypes.c_void_p, ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_double)]),
    "vkllm_gguf_get_string": (_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_size_t, _p_size]),
    "vkllm_gguf_get_text": (_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t, _p_size]),
    "vkllm_gguf_get_tensor": (_status, [ctypes.c_void_p, ctypes.c_size_t,
                                       ctypes.POINTER(_TensorInfo)]),
    "vkllm_ggml_type_name": (ctypes.c_char_p, [ctypes.c_uint32]),
    "vkllm_tokenizer_create": (_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    "vkllm_tokenizer_destroy": (None, [ctypes.c_void_p]),
    "vkllm_tokenizer_get_info": (_status, [ctypes.c_void_p, ctypes.POINTER(TokenizerInfo)]),
    "vkllm_tokenizer_get_piece": (_status, [ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32,
                                       ctypes.c_char_p, ctypes.c_size_t, _p_size]),
    "vkllm_detokenizer_create": (_status, [ctypes.c_void_p, ctypes.c_uint32,
                                           ctypes.POINTER(ctypes.c_void_p)]),
    "vkllm_detokenizer_destroy": (None, [ctypes.c_void_p]),
    "vkllm_detokenizer_push": (_status, [ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p,
                                         ctypes.c_size_t, _p_size]),
    "vkllm_detokenizer_flush": (_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                          _p_size]),
    "vkllm_chat_apply_template": (_status, [ctypes.c_char_p, ctypes.c_char_p,
                                            ctypes.POINTER(_ChatMessage), ctypes.c_size_t,
                                            ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t,
                                            _p_size]),
    "vkllm_session_truncate": (_status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]),
    "vkllm_session_eval": (_status, [ctypes.c_void_p, ctypes.c_uint32,
                                     ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
                                     ctypes.POINTER(ctypes.c_float)]),
    "vkllm_session_decode": (_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32),
                                       ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
                                       ctypes.POINTER(ctypes.c_float)]),
    "vkllm_session_decode_greedy": (_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32),
                                              ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
                                              ctypes.c_uint32, ctypes.POINTER(ctypes.c_int32)]),
    "vkllm_session_get_layer_kv_bytes": (_status, [ctypes.c_void_p, ctypes.c_uint32,
                                               ctypes.POINTER(ctypes.c_uint64)]),
    "vkllm_session_get_profile": (_status, [ctypes.c_void_p, ctypes.POINTER(_KernelTime),
                                        ctypes.c_size_t, _p_size]),
})


def _sized(call):
    """Bytes from a C function with the buffer rules of vkllm_gguf_get_string: `call(buf,
    capacity, length)` is tried with a small buffer, then, when that is too small, with one of
    the length it reported (a refused call changes nothing, so the retry is the same call)."""
    n = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(64)
    code = call(buf, len(buf), ctypes.byref(n))
    if code == ERR_BUFFER_TOO_SMALL:
        buf = ctypes.create_string_buffer(n.value + 1)
        code = call(buf, len(buf), ctypes.byref(n))
    _check(code)
    return buf.raw[: n.value]


def ggml_type_name(type_id):
    """The name of a ggml tensor type ("Q4_K"), or None for an id ggml does not define."""
    name = _lib.vkllm_ggml_type_name(type_id)
    return name.decode() if name is not None else None


class Gguf:
    """An opened model file (vkllm_gguf): its metadata and tensor table, without the weights.
    Use as a context manager or call close(); strings read from it are copies."""

    def __init__(self, path):
        self._handle = None
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_gguf_open(os.fsencode(path), ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_gguf_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _h(self):
        return _live(self._handle, "gguf file")

    def summary(self):
        s = ModelSummary()
        s.struct_size = ctypes.sizeof(ModelSummary)
        _check(_lib.vkllm_gguf_get_summary(self._h(), ctypes.byref(s)))
        return s

    def keys(self):
        """Every metadata key, in file order (GgufKey)."""
        out = []
        while True:
            k = _GgufKey()
            k.struct_size = ctypes.sizeof(_GgufKey)
            code = _lib.vkllm_gguf_get_key(self._h(), len(out), ctypes.byref(k))
            if code == ERR_NOT_FOUND:
                return out
            _check(code)
            out.append(GgufKey(k.name.decode(errors="replace"), k.type, k.element_type, k.count))

    def get_int(self, key):
        """An integer or bool value; Error ERR_NOT_FOUND when absent, ERR_FORMAT when another
        type."""
        v = ctypes.c_int64(0)
        _check(_lib.vkllm_gguf_get_int(self._h(), key.encode(), ctypes.byref(v)))
        return v.value

    def get_float(self, key):
        """A float (or integer) value as a float."""
        v = ctypes.c_double(0)
        _check(_lib.vkllm_gguf_get_float(self._h(), key.encode(), ctypes.byref(v)))
        return v.value

    def get_bytes(self, key):
        """A string value's bytes as stored (they may hold NUL bytes or invalid UTF-8)."""
        h, k = self._h(), key.encode()
        return _sized(lambda b, c, n: _lib.vkllm_gguf_get_string(h, k, b, c, n))

    def get_string(self, key):
        return self.get_bytes(key).decode(errors="replace")

    def get_text(self, key):
        """Any value as readable text (arrays as their first elements and length)."""
        h, k = self._h(), key.encode()
        return _sized(lambda b, c, n: _lib.vkllm_gguf_get_text(h, k, b, c, n)).decode(
            errors="replace")

    def tensors(self):
        """Every tensor, in file order (TensorInfo)."""
        out = []
        while True:
            t = _TensorInfo()
            t.struct_size = ctypes.sizeof(_TensorInfo)
            code = _lib.vkllm_gguf_get_tensor(self._h(), len(out), ctypes.byref(t))
            if code == ERR_NOT_FOUND:
                return out
            _check(code)
            out.append(TensorInfo(t.name.decode(errors="replace"), t.type,
                                  t.type_name.decode() if t.type_name else None,
                                  tuple(t.dims[: t.n_dims]), t.n_elements, t.n_bytes,
                                  t.file_offset))

    def tokenizer(self):
        """The file's tokenizer (it needs no device; the file may be closed afterwards)."""
        return Tokenizer(self)


class Tokenizer:
    """Text <-> token ids. Tokenizer(gguf) builds one from a model file and owns it (close() or
    a context manager frees it); Model.tokenizer() lends the model's, valid while the model is
    open."""

    def __init__(self, gguf):
        self._handle = None
        self._model = None
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_tokenizer_create(gguf._h(), ctypes.byref(handle)))
        self._handle = handle

    @classmethod
    def _of_model(cls, model):
        tok = cls.__new__(cls)
        tok._handle = None
        tok._model = model
        return tok

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_tokenizer_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _h(self):
        if self._model is not None:
            return _lib.vkllm_model_get_tokenizer(_live(self._model._handle, "model"))
        return _live(self._handle, "tokenizer")

    def info(self):
        info = TokenizerInfo()
        info.struct_size = ctypes.sizeof(TokenizerInfo)
        _check(_lib.vkllm_tokenizer_get_info(self._h(), ctypes.byref(info)))
        return info

    def tokenize(self, text, add_special=True, parse_special=False):
        """The token ids of `text` (str or UTF-8 bytes), BOS added where the model wants it.
        Special tokens are parsed only with parse_special=True (see Model.tokenize)."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        flags = (TOKENIZE_ADD_SPECIAL if add_special else 0) | (
            TOKENIZE_PARSE_SPECIAL if parse_special else 0
        )
        tok = self._h()
        n = ctypes.c_size_t(0)
        code = _lib.vkllm_tokenizer_encode(tok, data, len(data), flags, None, 0, ctypes.byref(n))
        if code not in (OK, ERR_BUFFER_TOO_SMALL):
            _check(code)
        ids = (ctypes.c_int32 * max(n.value, 1))()
        _check(_lib.vkllm_tokenizer_encode(tok, data, len(data), flags, ids, n.value, ctypes.byref(n)))
        return list(ids[: n.value])

    def detokenize(self, ids, special=False):
        """The text of a list of token ids."""
        arr = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        flags = DETOKENIZE_SPECIAL if special else 0
        tok = self._h()
        return _sized(lambda b, c, n: _lib.vkllm_tokenizer_decode(tok, arr, len(ids), flags, b, c, n)
                      ).decode(errors="replace")

    def token_to_piece(self, token, special=False):
        """The bytes of one token (maybe part of a UTF-8 character)."""
        tok, flags = self._h(), DETOKENIZE_SPECIAL if special else 0
        return _sized(lambda b, c, n: _lib.vkllm_tokenizer_get_piece(tok, token, flags, b, c, n))

    def is_end_of_generation(self, token):
        out = ctypes.c_int32(0)
        _check(_lib.vkllm_tokenizer_is_end_of_generation(self._h(), token, ctypes.byref(out)))
        return out.value != 0

    def detokenizer(self, special=False):
        """A Detokenizer for one stream of this tokenizer's ids."""
        return Detokenizer(self, special)


class Detokenizer:
    """Streaming detokenization: push(token) returns the text it completed, never ending inside
    a UTF-8 character; flush() ends the stream with what is held. One stream at a time; the
    tokenizer (and the model it may belong to) is kept alive by it."""

    def __init__(self, tokenizer, special=False):
        self._handle = None
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_detokenizer_create(tokenizer._h(),
                                             DETOKENIZE_SPECIAL if special else 0,
                                             ctypes.byref(handle)))
        self._handle = handle
        self.tokenizer = tokenizer

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_detokenizer_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _h(self):
        self.tokenizer._h()  # raises once the tokenizer (or its model) is closed
        return _live(self._handle, "detokenizer")

    def push(self, token):
        h = self._h()
        return _sized(lambda b, c, n: _lib.vkllm_detokenizer_push(h, token, b, c, n)).decode(
            errors="replace")

    def flush(self):
        h = self._h()
        return _sized(lambda b, c, n: _lib.vkllm_detokenizer_flush(h, b, c, n)).decode(
            errors="replace")


# Model.tokenizer and the Session methods below are attached from this section, apart from the
# class bodies, so that the API added here reads (and merges) as one unit.
def _model_tokenizer(self):
    """The model's own tokenizer (valid while the model is open; nothing to close)."""
    return Tokenizer._of_model(self)


Model.tokenizer = _model_tokenizer


def chat_apply_template(messages, template_name=None, model_template=None, add_assistant=True):
    """The simple form of chat_render: plain turns, (role, content) pairs or dicts with those
    keys, rendered with the built-in `template_name` ("chatml", "llama3", "gemma", "mistral-v3",
    "phi4", ...: `vkllm chat --template help` lists them) or else `model_template` (a model's
    Jinja text, e.g. Model.chat_template()); BOS and EOS are left undefined, so tokenize the
    result with add_special=True, parse_special=True."""
    pairs = [(m["role"], m["content"]) if isinstance(m, dict) else tuple(m) for m in messages]
    encoded = [(r.encode(), c.encode()) for r, c in pairs]
    arr = (_ChatMessage * max(len(encoded), 1))(*[_ChatMessage(r, c) for r, c in encoded])
    name = template_name.encode() if template_name is not None else None
    source = model_template.encode() if model_template is not None else None
    flag = 1 if add_assistant else 0
    return _sized(lambda b, c, n: _lib.vkllm_chat_apply_template(
        name, source, arr, len(encoded), flag, b, c, n)).decode(errors="replace")


# The low-level steps of a session, below generate(): they run the model and hand back logits
# (array.array('f'), one row of model.info().n_vocab floats per token asked for).

def _int32s(values):
    return (ctypes.c_int32 * max(len(values), 1))(*values)


def _session_rows(self, n):
    width = self.model.info().n_vocab
    return width, array.array("f", bytes(4 * width * n))


def _session_truncate(self, n_keep, seq=0):
    """Keeps the first n_keep positions of sequence `seq` and forgets the rest."""
    _check(_lib.vkllm_session_truncate(self._idle(), seq, n_keep))


def _session_eval(self, tokens, seq=0, logits=True):
    """Appends `tokens` to sequence `seq` (prefill, in chunks); returns the logits after the
    last one (array.array('f')), or None with logits=False (nothing is copied back)."""
    h = self._idle()
    ids = _int32s(tokens)
    if not logits:
        _check(_lib.vkllm_session_eval(h, seq, ids, len(tokens), None))
        return None
    _, row = _session_rows(self, 1)
    ptr = (ctypes.c_float * len(row)).from_buffer(row)
    _check(_lib.vkllm_session_eval(h, seq, ids, len(tokens), ptr))
    return row


def _session_decode(self, tokens, seqs=None):
    """One token for each of several distinct sequences (seqs; default 0, 1, ...), decoded
    together in one step; returns one row of logits per sequence."""
    h = self._idle()
    seqs = list(range(len(tokens))) if seqs is None else list(seqs)
    if len(seqs) != len(tokens):
        raise Error(ERR_INVALID_ARGUMENT, "decode: as many sequences as tokens are needed")
    width, rows = _session_rows(self, len(tokens))
    ptr = (ctypes.c_float * max(len(rows), 1)).from_buffer(rows) if rows else None
    _check(_lib.vkllm_session_decode(h, (ctypes.c_uint32 * max(len(seqs), 1))(*seqs),
                                     _int32s(tokens), len(tokens), ptr))
    return [rows[i * width:(i + 1) * width] for i in range(len(tokens))]


def _session_decode_greedy(self, tokens, steps, seqs=None):
    """`steps` greedy decode steps for each sequence, chained in one submission: the first
    decodes `tokens`, each later one the token the step before chose. Returns a list of steps,
    each the chosen id of every sequence."""
    h = self._idle()
    seqs = list(range(len(tokens))) if seqs is None else list(seqs)
    if len(seqs) != len(tokens):
        raise Error(ERR_INVALID_ARGUMENT, "decode_greedy: as many sequences as tokens are needed")
    out = (ctypes.c_int32 * max(steps * len(tokens), 1))()
    _check(_lib.vkllm_session_decode_greedy(h, (ctypes.c_uint32 * max(len(seqs), 1))(*seqs),
                                            _int32s(tokens), len(tokens), steps, out))
    n = len(tokens)
    return [list(out[s * n:(s + 1) * n]) for s in range(steps)]


def _session_layer_kv_bytes(self, layer):
    """K and V cache bytes of one layer of the model (all sequences)."""
    v = ctypes.c_uint64(0)
    _check(_lib.vkllm_session_get_layer_kv_bytes(self._idle(), layer, ctypes.byref(v)))
    return v.value


def _session_profile(self):
    """Device time per kernel since the session was created (flags=SESSION_PROFILE), most time
    first: a list of KernelTime."""
    h = self._idle()
    n = ctypes.c_size_t(0)
    _check(_lib.vkllm_session_get_profile(h, None, 0, ctypes.byref(n)))
    arr = (_KernelTime * max(n.value, 1))()
    _check(_lib.vkllm_session_get_profile(h, arr, n.value, ctypes.byref(n)))
    return [KernelTime(k.kernel.decode(errors="replace"), k.dispatches, k.ms)
            for k in arr[: n.value]]


for _f in (_session_truncate, _session_eval, _session_decode, _session_decode_greedy,
           _session_layer_kv_bytes, _session_profile):
    setattr(Session, _f.__name__[len("_session_"):], _f)
del _f


# ---------------------------------------------------------------------------------------------
# Grammars: output an app can parse (issue 27). Sampler and Session.generate take grammar= and
# json_schema=; the Sampler methods below are attached as the low-level steps above are.
# ---------------------------------------------------------------------------------------------

GRAMMAR_INCOMPLETE = GrammarProgress.INCOMPLETE  # more text is needed: no end token yet
GRAMMAR_COMPLETE = GrammarProgress.COMPLETE  # the text may end here, or go on
GRAMMAR_FINISHED = GrammarProgress.FINISHED  # the text is complete and nothing can follow

_declare({
    "vkllm_grammar_create": (_status, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_void_p)]),
    "vkllm_grammar_create_from_json_schema": (_status, [ctypes.c_void_p, ctypes.c_char_p,
                                                        ctypes.POINTER(ctypes.c_void_p)]),
    "vkllm_json_schema_to_gbnf": (_status, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                            _p_size]),
    "vkllm_grammar_destroy": (None, [ctypes.c_void_p]),
    "vkllm_sampler_get_grammar_progress": (_status, [ctypes.c_void_p,
                                                     ctypes.POINTER(ctypes.c_int32)]),
    "vkllm_sampler_accept_prompt": (_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32),
                                              ctypes.c_size_t]),
    "vkllm_sampler_apply_grammar": (_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float),
                                              ctypes.c_size_t]),
})


def _schema_text(schema):
    """A JSON Schema as the JSON text the library reads: a str is taken as it is, anything else
    (a dict, True) is json.dumps'ed."""
    return (schema if isinstance(schema, str) else json.dumps(schema)).encode()


def _vocabulary(model_or_tokenizer):
    """The vkllm_tokenizer of a Model or a Tokenizer."""
    if isinstance(model_or_tokenizer, Tokenizer):
        return model_or_tokenizer._h()
    return _lib.vkllm_model_get_tokenizer(_live(model_or_tokenizer._handle, "model"))


class _GrammarRef:
    """Owns a vkllm_grammar until its last Python reference goes: the Grammar's, and those of
    the generations given it that have not run yet (Grammar.close() must not free a handle one
    of them will still pass to the library; the library keeps its own once a sampler or a
    generation has started)."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        _lib.vkllm_grammar_destroy(self.handle)


class Grammar:
    """A grammar compiled for a vocabulary (vkllm_grammar): generated text must be a string of
    its language. Grammar(model, gbnf, root=None) compiles GBNF text (llama.cpp's format; root:
    the rule to start from, "root" by default) for a Model's or Tokenizer's vocabulary;
    Grammar.from_json_schema(model, schema) compiles a JSON Schema (a dict, or JSON text). A bad
    grammar raises vkllm.Error (ERR_INVALID_ARGUMENT, "line L, column C: ..."); a schema keyword
    the converter cannot enforce raises ERR_UNSUPPORTED naming it. Read-only once compiled: any
    number of Samplers and generations share it, and they keep working after close(). Use as a
    context manager or call close()."""

    def __init__(self, model, gbnf, root=None):
        self._ref = None
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_grammar_create(
            _vocabulary(model), gbnf.encode() if isinstance(gbnf, str) else bytes(gbnf),
            root.encode() if root is not None else None, ctypes.byref(handle)))
        self._ref = _GrammarRef(handle)

    @classmethod
    def from_json_schema(cls, model, schema):
        g = cls.__new__(cls)
        g._ref = None
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_grammar_create_from_json_schema(
            _vocabulary(model), _schema_text(schema), ctypes.byref(handle)))
        g._ref = _GrammarRef(handle)
        return g

    @property
    def _handle(self):
        return self._ref.handle if self._ref is not None else None

    def close(self):
        self._ref = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def json_schema_to_gbnf(schema):
    """The GBNF text a JSON Schema (a dict, or JSON text) converts to, to read or edit and pass
    to Grammar."""
    text = _schema_text(schema)
    return _sized(lambda b, c, n: _lib.vkllm_json_schema_to_gbnf(text, b, c, n)).decode()


def _grammar_of(model, grammar, json_schema):
    """The Grammar that grammar= or json_schema= asks for, and whether it was compiled here
    (for `model`) and is the caller's to close."""
    if grammar is not None and json_schema is not None:
        raise ValueError("pass grammar= or json_schema=, not both")
    if isinstance(grammar, Grammar):
        return grammar, False
    if grammar is None and json_schema is None:
        return None, False
    if model is None:
        raise ValueError("a grammar given as text needs a model to compile it for")
    if grammar is not None:
        return Grammar(model, grammar), True
    return Grammar.from_json_schema(model, json_schema), True


def _sampler_progress(self):
    """A GrammarProgress (INCOMPLETE, COMPLETE or FINISHED): where the sampler's grammar
    stands after the tokens accepted (FINISHED: the text is done, stop; COMPLETE without a
    grammar)."""
    out = ctypes.c_int32(0)
    _check(_lib.vkllm_sampler_get_grammar_progress(_live(self._handle, "sampler"),
                                                   ctypes.byref(out)))
    return _named(GrammarProgress, out.value)


def _sampler_accept_prompt(self, tokens):
    """Prompt tokens, for the penalties' history only: they do not advance the grammar (accept()
    does, for generated tokens, and raises for one the grammar does not allow)."""
    _check(_lib.vkllm_sampler_accept_prompt(_live(self._handle, "sampler"), _int32s(tokens),
                                            len(tokens)))


def _sampler_apply_grammar(self, logits):
    """Sets to -inf each logit whose token the grammar does not allow next, for an app's own
    sampling chain. An array.array('f') is changed in place and returned; any other sequence of
    floats gives a new array.array('f')."""
    row = logits if isinstance(logits, array.array) and logits.typecode == "f" else array.array(
        "f", logits)
    ptr = (ctypes.c_float * max(len(row), 1)).from_buffer(row) if len(row) else None
    _check(_lib.vkllm_sampler_apply_grammar(_live(self._handle, "sampler"), ptr, len(row)))
    return row


for _f in (_sampler_progress, _sampler_accept_prompt, _sampler_apply_grammar):
    setattr(Sampler, _f.__name__[len("_sampler_"):], _f)
del _f


# ---------------------------------------------------------------------------------------------
# Conversations and chat completions (issue 37): a chat on a session's sequence whose replies
# prefill only what the cache lacks, and create_chat_completion in OpenAI's shape.
# ---------------------------------------------------------------------------------------------

CHAT_PIECE_CONTENT = 0  # answer text
CHAT_PIECE_REASONING = 1  # reasoning text
CHAT_PIECE_TOOL_CALL = 2  # a complete tool call

ChatPiece = collections.namedtuple("ChatPiece", "kind text tool_call")
ChatPiece.__doc__ = ("A piece of a streamed reply: CHAT_PIECE_* kind, its text (a tool call's "
                     "arguments), and the ToolCall for CHAT_PIECE_TOOL_CALL (else None).")


class _ChatTurn(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("role", ctypes.c_char_p),
        ("content", ctypes.c_char_p),
        ("reasoning_content", ctypes.c_char_p),
        ("tool_calls", ctypes.POINTER(_ToolCall)),
        ("n_tool_calls", ctypes.c_size_t),
        ("tool_call_id", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
    ]


class _ConversationParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("seq", ctypes.c_uint32),
        ("template_source", ctypes.c_char_p),
        ("template_name", ctypes.c_char_p),
        ("tools", ctypes.c_char_p),
        ("extra", ctypes.c_char_p),
        ("now", ctypes.c_int64),
    ]


_ChatPieceFn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p,
                                ctypes.c_size_t, ctypes.POINTER(_ToolCall))


class _ConversationReplyParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("max_tokens", ctypes.c_uint32),
        ("on_piece", _ChatPieceFn),
        ("user_data", ctypes.c_void_p),
        ("stop", ctypes.POINTER(ctypes.c_char_p)),
        ("n_stop", ctypes.c_size_t),
    ]


class ConversationResult(ctypes.Structure):
    """What a reply did: n_prompt tokens of the rendered conversation, of which n_reused were in
    the cache and n_prefilled were prefilled; n_generated, stop_reason (a StopReason),
    n_tool_calls, timings, the seed, and whether the reply's raw text is a finished string of
    the grammar (grammar_progress, a GrammarProgress: INCOMPLETE when a cap, the context's end, a
    stop string or a cancel cut it short, so it must not be parsed as the grammar's language;
    COMPLETE without a grammar)."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n_prompt", ctypes.c_size_t),
        ("n_reused", ctypes.c_size_t),
        ("n_prefilled", ctypes.c_size_t),
        ("n_generated", ctypes.c_size_t),
        ("_stop_reason", ctypes.c_int32),
        ("n_tool_calls", ctypes.c_size_t),
        ("prefill_ms", ctypes.c_double),
        ("decode_ms", ctypes.c_double),
        ("seed", ctypes.c_uint64),
        ("_grammar_progress", ctypes.c_int32),
    ]

    @property
    def stop_reason(self):
        return _named(StopReason, self._stop_reason)

    @property
    def grammar_progress(self):
        return _named(GrammarProgress, self._grammar_progress)


_declare({
    "vkllm_conversation_params_init": (None, [ctypes.c_void_p]),
    "vkllm_conversation_create": (_status, [ctypes.c_void_p, ctypes.POINTER(_ConversationParams),
                                            ctypes.POINTER(ctypes.c_void_p)]),
    "vkllm_conversation_destroy": (None, [ctypes.c_void_p]),
    "vkllm_conversation_add": (_status, [ctypes.c_void_p, ctypes.POINTER(_ChatTurn)]),
    "vkllm_conversation_add_json": (_status, [ctypes.c_void_p, ctypes.c_char_p]),
    "vkllm_conversation_get_count": (_status, [ctypes.c_void_p, _p_size]),
    "vkllm_conversation_get_message": (_status, [ctypes.c_void_p, ctypes.c_size_t,
                                                 ctypes.POINTER(_ChatTurn)]),
    "vkllm_conversation_truncate": (_status, [ctypes.c_void_p, ctypes.c_size_t]),
    "vkllm_conversation_reply_params_init": (None, [ctypes.c_void_p]),
    "vkllm_conversation_reply": (_status, [ctypes.c_void_p, ctypes.POINTER(_SamplingParams),
                                           ctypes.POINTER(_ConversationReplyParams),
                                           ctypes.POINTER(ConversationResult)]),
})


def _str(b):
    return b.decode(errors="replace") if b is not None else None


def _call_of(call):
    """A ToolCall, or an OpenAI tool-call dict (arguments as a dict or JSON text)."""
    if isinstance(call, ToolCall):
        return call
    f = call["function"]
    args = f["arguments"]
    return ToolCall(call.get("id") or "", f["name"],
                    args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))


class Conversation:
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

    def __init__(self, session, messages=(), template=None, template_name=None, tools=None,
                 seq=0, now=None, **extra):
        self._handle = None
        p = _params(_ConversationParams, _lib.vkllm_conversation_params_init)
        p.seq = seq
        p.template_source = template.encode() if template is not None else None
        p.template_name = template_name.encode() if template_name is not None else None
        p.tools = json.dumps(tools, ensure_ascii=False).encode() if tools is not None else None
        p.extra = json.dumps(extra, ensure_ascii=False).encode() if extra else None
        if isinstance(now, datetime.datetime):
            now = int(now.timestamp())
        if now is not None:
            p.now = int(now)
        handle = ctypes.c_void_p()
        _check(_lib.vkllm_conversation_create(session._idle(), ctypes.byref(p),
                                              ctypes.byref(handle)))
        self._handle = handle
        self.session = session
        self.last_result = None
        if messages:
            self.extend(messages)

    def close(self):
        if getattr(self, "_handle", None):
            _lib.vkllm_conversation_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def add(self, role, content=None, tool_calls=None, tool_call_id=None, name=None,
            reasoning_content=None):
        """Appends a message: "system", "user", "assistant" (tool_calls: ToolCalls or OpenAI
        dicts) or "tool" (a call's result: content with tool_call_id and name)."""
        calls = [_call_of(c) for c in tool_calls or ()]
        arr = (_ToolCall * max(len(calls), 1))(
            *[_ToolCall(c.id.encode(), c.name.encode(), c.arguments.encode()) for c in calls])
        enc = lambda s: s.encode() if s is not None else None  # noqa: E731
        t = _ChatTurn(ctypes.sizeof(_ChatTurn), role.encode(), enc(content),
                      enc(reasoning_content), arr if calls else None, len(calls),
                      enc(tool_call_id), enc(name))
        _check(_lib.vkllm_conversation_add(_live(self._handle, "conversation"), ctypes.byref(t)))

    def extend(self, messages):
        """Appends OpenAI-style message dicts (tool-call arguments as dicts or JSON text)."""
        data = json.dumps(list(messages), ensure_ascii=False).encode()
        _check(_lib.vkllm_conversation_add_json(_live(self._handle, "conversation"), data))

    def __len__(self):
        n = ctypes.c_size_t(0)
        _check(_lib.vkllm_conversation_get_count(_live(self._handle, "conversation"),
                                                 ctypes.byref(n)))
        return n.value

    def __getitem__(self, index):
        """Message `index` as an OpenAI-style dict (tool-call arguments as JSON text)."""
        if index < 0:
            index += len(self)
        t = _ChatTurn()
        t.struct_size = ctypes.sizeof(_ChatTurn)
        code = (_lib.vkllm_conversation_get_message(_live(self._handle, "conversation"), index,
                                                    ctypes.byref(t))
                if index >= 0 else ERR_NOT_FOUND)
        if code == ERR_NOT_FOUND:
            raise IndexError("conversation message index out of range")
        _check(code)
        m = {"role": _str(t.role), "content": _str(t.content)}
        if t.reasoning_content is not None:
            m["reasoning_content"] = _str(t.reasoning_content)
        if t.n_tool_calls:
            m["tool_calls"] = [
                {"id": _str(t.tool_calls[i].id), "type": "function",
                 "function": {"name": _str(t.tool_calls[i].name),
                              "arguments": _str(t.tool_calls[i].arguments)}}
                for i in range(t.n_tool_calls)]
        if t.tool_call_id is not None:
            m["tool_call_id"] = _str(t.tool_call_id)
        if t.name is not None:
            m["name"] = _str(t.name)
        return m

    @property
    def messages(self):
        return [self[i] for i in range(len(self))]

    def truncate(self, n_keep):
        """Keeps the first n_keep messages (0: start over; len - 1 after a reply: retry it)."""
        _check(_lib.vkllm_conversation_truncate(_live(self._handle, "conversation"), n_keep))

    def reply(self, max_tokens=0, stream=False, stop=(), grammar=None, json_schema=None,
              **sampling):
        """Generates the assistant's reply and appends it. Returns its message dict, or with
        stream=True an iterator of ChatPiece as the reply streams (stopping early cancels the
        reply; what came so far is appended). max_tokens 0: until an end token or the context's
        end. stop: strings the reply ends before (STOP_STRING). Sampling keywords are
        Session.generate's (C's defaults: temperature 0.8); grammar or json_schema constrain the
        reply's raw text. last_result: a ConversationResult."""
        handle = _live(self._handle, "conversation")
        session_handle = self.session._idle()
        compiled, _ = _grammar_of(self.session.model, grammar, json_schema)
        sp, biases = _sampling_params(grammar=compiled, **sampling)
        rp = _params(_ConversationReplyParams, _lib.vkllm_conversation_reply_params_init)
        rp.max_tokens = max_tokens or 0
        stops = [s.encode() if isinstance(s, str) else bytes(s) for s in stop]
        stop_arr = (ctypes.c_char_p * max(len(stops), 1))(*stops)
        if stops:
            rp.stop = stop_arr
            rp.n_stop = len(stops)
        keep = (biases, compiled._ref if compiled else None, stop_arr)
        if stream:
            return self._stream(handle, session_handle, sp, rp, keep)
        result = ConversationResult()
        result.struct_size = ctypes.sizeof(ConversationResult)
        self.session._busy = True
        try:
            code = _lib.vkllm_conversation_reply(handle, ctypes.byref(sp), ctypes.byref(rp),
                                                 ctypes.byref(result))
        finally:
            self.session._busy = False
        self.last_result = result
        if code != OK and not (code == ERR_CANCELLED and self.session._cancel_asked):
            _check(code)
        del keep
        return self[-1]

    def _stream(self, handle, session_handle, sp, rp, keep_alive):
        # As Session._stream: the reply runs on a worker thread and its pieces reach this
        # generator through a queue; returning 1 from the callback cancels it.
        pieces = queue.Queue(maxsize=4)
        cancel = threading.Event()
        done = object()
        decoders = [codecs.getincrementaldecoder("utf-8")("replace") for _ in range(3)]

        def on_piece(_user, kind, text, length, call):
            if cancel.is_set():
                return 1
            data = ctypes.string_at(text, length) if length else b""
            tool_call = (ToolCall(_str(call[0].id), _str(call[0].name), _str(call[0].arguments))
                         if kind == CHAT_PIECE_TOOL_CALL else None)
            pieces.put(ChatPiece(kind, decoders[min(kind, 2)].decode(data), tool_call))
            return 1 if cancel.is_set() else 0

        callback = _ChatPieceFn(on_piece)
        rp.on_piece = callback
        result = ConversationResult()
        result.struct_size = ctypes.sizeof(ConversationResult)
        outcome = {}

        def work():
            outcome["code"] = _lib.vkllm_conversation_reply(handle, ctypes.byref(sp),
                                                            ctypes.byref(rp), ctypes.byref(result))
            outcome["message"] = _lib.vkllm_last_error().decode(errors="replace")
            pieces.put(done)

        self.session._busy = True
        self.session._cancel_asked = False
        worker = threading.Thread(target=work, name="vkllm-conversation", daemon=True)
        worker.start()
        finished = False
        try:
            while True:
                item = pieces.get()
                if item is done:
                    finished = True
                    break
                yield item
        finally:
            if not finished:
                cancel.set()
                while pieces.get() is not done:
                    pass
            worker.join()
            del callback, keep_alive
            self.session._busy = False
            self.last_result = result
        code = outcome["code"]
        asked = cancel.is_set() or self.session._cancel_asked
        if code != OK and not (code == ERR_CANCELLED and asked):
            raise Error(code, outcome["message"])


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


def _session_create_chat_completion(self, messages, tools=None, max_tokens=None, stream=False,
                                    stop=None, template=None, template_name=None,
                                    response_format=None, seq=0, **sampling):
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
    conv = Conversation(self, messages, template=template, template_name=template_name,
                        tools=tools, seq=seq)
    cid = "chatcmpl-" + os.urandom(12).hex()
    created = int(datetime.datetime.now().timestamp())
    name = _model_name(self.model)
    if not stream:
        with conv:
            message = conv.reply(max_tokens or 0, stop=stop, json_schema=schema, **sampling)
            result = conv.last_result
        return {"id": cid, "object": "chat.completion", "created": created, "model": name,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": _finish_reason(result)}],
                "usage": _usage(result)}

    def chunks():
        def chunk(delta, finish=None):
            return {"id": cid, "object": "chat.completion.chunk", "created": created,
                    "model": name, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                                "finish_reason": finish}]}
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


Session.create_chat_completion = _session_create_chat_completion
