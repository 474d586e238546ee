"""The raw C API of libvkllm as ctypes declarations: every struct, enum constant, callback
type, #define constant and function prototype of include/vkllm.h, under their C names.

GENERATED from include/vkllm.h by bindings/python/tools/gen_ffi.py: do not edit. After changing
the header, regenerate it with
    python3 bindings/python/tools/gen_ffi.py
(ctest Python.FfiIsGeneratedFromTheHeader fails while it differs; Python.FfiLayoutMatchesC
compares every struct's size and field offsets, and every constant, with the C compiler's).

Handles are ctypes.c_void_p; a char pointer is ctypes.c_char_p, except among a callback's
parameters, where it is ctypes.POINTER(ctypes.c_char) (read it with ctypes.string_at). The
idiomatic layer (the other modules of this package) is written by hand on top of this one.
"""

import ctypes


# --- Stable ---

VKLLM_VERSION_MAJOR = 0
VKLLM_VERSION_MINOR = 3
VKLLM_VERSION_PATCH = 0
VKLLM_VERSION_NUMBER = 300

vkllm_status = ctypes.c_int  # an enum
VKLLM_OK = 0
VKLLM_ERR_INVALID_ARGUMENT = 1
VKLLM_ERR_NO_DEVICE = 2
VKLLM_ERR_OUT_OF_HOST_MEMORY = 3
VKLLM_ERR_OUT_OF_DEVICE_MEMORY = 4
VKLLM_ERR_VULKAN = 5
VKLLM_ERR_DEVICE_LOST = 6
VKLLM_ERR_IO = 7
VKLLM_ERR_FORMAT = 8
VKLLM_ERR_UNSUPPORTED = 9
VKLLM_ERR_BUFFER_TOO_SMALL = 10
VKLLM_ERR_CONTEXT_FULL = 11
VKLLM_ERR_CANCELLED = 12
VKLLM_ERR_INTERNAL = 13
VKLLM_ERR_NOT_FOUND = 14
VKLLM_STATUS_FORCE32 = 0x7fffffff

vkllm_log_level = ctypes.c_int  # an enum
VKLLM_LOG_DEBUG = 0
VKLLM_LOG_INFO = 1
VKLLM_LOG_WARNING = 2
VKLLM_LOG_ERROR = 3
VKLLM_LOG_LEVEL_FORCE32 = 0x7fffffff

# (user_data, level, message)
vkllm_log_fn = ctypes.CFUNCTYPE(
    None,
    ctypes.c_void_p,
    vkllm_log_level,
    ctypes.POINTER(ctypes.c_char),
)

vkllm_device_type = ctypes.c_int  # an enum
VKLLM_DEVICE_OTHER = 0
VKLLM_DEVICE_INTEGRATED_GPU = 1
VKLLM_DEVICE_DISCRETE_GPU = 2
VKLLM_DEVICE_VIRTUAL_GPU = 3
VKLLM_DEVICE_CPU = 4
VKLLM_DEVICE_TYPE_FORCE32 = 0x7fffffff

VKLLM_MAX_MEMORY_HEAPS = 16

vkllm_coopmat_use = ctypes.c_int  # an enum
VKLLM_COOPMAT_ABSENT = 0
VKLLM_COOPMAT_USED = 1
VKLLM_COOPMAT_UNSUITABLE = 2
VKLLM_COOPMAT_NOT_BUILT = 3
VKLLM_COOPMAT_NOT_CHOSEN = 4
VKLLM_COOPMAT_USE_FORCE32 = 0x7fffffff

vkllm_component_type = ctypes.c_int  # an enum
VKLLM_COMPONENT_F16 = 0
VKLLM_COMPONENT_F32 = 1
VKLLM_COMPONENT_F64 = 2
VKLLM_COMPONENT_S8 = 3
VKLLM_COMPONENT_S16 = 4
VKLLM_COMPONENT_S32 = 5
VKLLM_COMPONENT_S64 = 6
VKLLM_COMPONENT_U8 = 7
VKLLM_COMPONENT_U16 = 8
VKLLM_COMPONENT_U32 = 9
VKLLM_COMPONENT_U64 = 10
VKLLM_COMPONENT_TYPE_FORCE32 = 0x7fffffff


class vkllm_coopmat_shape(ctypes.Structure):
    _fields_ = [
        ('m', ctypes.c_uint32),
        ('n', ctypes.c_uint32),
        ('k', ctypes.c_uint32),
        ('a_type', vkllm_component_type),
        ('b_type', vkllm_component_type),
        ('c_type', vkllm_component_type),
        ('result_type', vkllm_component_type),
        ('subgroup_scope', ctypes.c_int32),
    ]


VKLLM_MAX_COOPMAT_SHAPES = 32


class vkllm_device_info(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('index', ctypes.c_uint32),
        ('type', vkllm_device_type),
        ('name', ctypes.c_char * 256),
        ('driver_name', ctypes.c_char * 256),
        ('driver_info', ctypes.c_char * 256),
        ('vendor_id', ctypes.c_uint32),
        ('device_id', ctypes.c_uint32),
        ('api_version', ctypes.c_uint32),
        ('usable', ctypes.c_int32),
        ('unified_memory', ctypes.c_int32),
        ('heap_count', ctypes.c_uint32),
        ('heap_size', ctypes.c_uint64 * VKLLM_MAX_MEMORY_HEAPS),
        ('heap_device_local', ctypes.c_int32 * VKLLM_MAX_MEMORY_HEAPS),
        ('max_storage_buffer_range', ctypes.c_uint64),
        ('max_texel_buffer_elements', ctypes.c_uint64),
        ('max_allocation_size', ctypes.c_uint64),
        ('max_compute_shared_memory', ctypes.c_uint32),
        ('max_workgroup_invocations', ctypes.c_uint32),
        ('subgroup_size', ctypes.c_uint32),
        ('shader_float16', ctypes.c_int32),
        ('shader_int8', ctypes.c_int32),
        ('storage_16bit', ctypes.c_int32),
        ('timestamps', ctypes.c_int32),
        ('cooperative_matrix', vkllm_coopmat_use),
        ('coopmat_shape', vkllm_coopmat_shape),
        ('coopmat_shape_count', ctypes.c_uint32),
        ('coopmat_shapes', vkllm_coopmat_shape * VKLLM_MAX_COOPMAT_SHAPES),
    ]


# vkllm_runtime: an opaque handle, passed as ctypes.c_void_p

# vkllm_model: an opaque handle, passed as ctypes.c_void_p

VKLLM_RUNTIME_VALIDATION = 1


class vkllm_runtime_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('device_index', ctypes.c_int32),
        ('device_name', ctypes.c_char_p),
        ('flags', ctypes.c_uint32),
        ('pipeline_cache_path', ctypes.c_char_p),
        ('log_fn', vkllm_log_fn),
        ('log_user_data', ctypes.c_void_p),
        ('device_memory_budget', ctypes.c_uint64),
    ]


class vkllm_runtime_stats(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('validation_errors', ctypes.c_uint64),
        ('validation_warnings', ctypes.c_uint64),
        ('pipelines_created', ctypes.c_uint64),
        ('pipeline_cache_bytes_loaded', ctypes.c_uint64),
        ('device_memory_allocated', ctypes.c_uint64),
        ('submits', ctypes.c_uint64),
        ('pipeline_compile_ms', ctypes.c_double),
        ('tuned_shapes', ctypes.c_uint64),
    ]


class vkllm_self_check_result(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('kernels_checked', ctypes.c_uint32),
        ('kernels_failed', ctypes.c_uint32),
        ('max_error', ctypes.c_double),
        ('first_failure', ctypes.c_char * 128),
        ('elapsed_ms', ctypes.c_double),
    ]


class vkllm_tune_result(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('shapes', ctypes.c_uint32),
        ('candidates_timed', ctypes.c_uint32),
        ('candidates_rejected', ctypes.c_uint32),
        ('shapes_changed', ctypes.c_uint32),
        ('default_us', ctypes.c_double),
        ('tuned_us', ctypes.c_double),
        ('elapsed_ms', ctypes.c_double),
        ('file_written', ctypes.c_uint32),
    ]


# vkllm_gguf: an opaque handle, passed as ctypes.c_void_p

vkllm_gguf_type = ctypes.c_int  # an enum
VKLLM_GGUF_UINT8 = 0
VKLLM_GGUF_INT8 = 1
VKLLM_GGUF_UINT16 = 2
VKLLM_GGUF_INT16 = 3
VKLLM_GGUF_UINT32 = 4
VKLLM_GGUF_INT32 = 5
VKLLM_GGUF_FLOAT32 = 6
VKLLM_GGUF_BOOL = 7
VKLLM_GGUF_STRING = 8
VKLLM_GGUF_ARRAY = 9
VKLLM_GGUF_UINT64 = 10
VKLLM_GGUF_INT64 = 11
VKLLM_GGUF_FLOAT64 = 12
VKLLM_GGUF_TYPE_FORCE32 = 0x7fffffff

VKLLM_GGML_TYPE_COUNT = 48


class vkllm_model_summary(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('gguf_version', ctypes.c_uint32),
        ('architecture', ctypes.c_char * 64),
        ('name', ctypes.c_char * 256),
        ('file_bytes', ctypes.c_uint64),
        ('tensor_bytes', ctypes.c_uint64),
        ('n_params', ctypes.c_uint64),
        ('n_tensors', ctypes.c_uint64),
        ('n_keys', ctypes.c_uint64),
        ('context_length', ctypes.c_uint32),
        ('n_layers', ctypes.c_uint32),
        ('n_embd', ctypes.c_uint32),
        ('n_heads', ctypes.c_uint32),
        ('n_kv_heads', ctypes.c_uint32),
        ('n_experts', ctypes.c_uint32),
        ('n_experts_used', ctypes.c_uint32),
        ('n_vocab', ctypes.c_uint32),
        ('tokenizer_model', ctypes.c_char * 32),
        ('tokenizer_pre', ctypes.c_char * 32),
        ('tensors_of_type', ctypes.c_uint64 * VKLLM_GGML_TYPE_COUNT),
    ]


class vkllm_gguf_key(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('name', ctypes.c_char_p),
        ('type', vkllm_gguf_type),
        ('element_type', vkllm_gguf_type),
        ('count', ctypes.c_uint64),
    ]


class vkllm_tensor_info(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('name', ctypes.c_char_p),
        ('type', ctypes.c_uint32),
        ('type_name', ctypes.c_char_p),
        ('n_dims', ctypes.c_uint32),
        ('dims', ctypes.c_uint64 * 4),
        ('n_elements', ctypes.c_uint64),
        ('n_bytes', ctypes.c_uint64),
        ('file_offset', ctypes.c_uint64),
    ]


# vkllm_tokenizer: an opaque handle, passed as ctypes.c_void_p


class vkllm_tokenizer_info(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('n_vocab', ctypes.c_uint32),
        ('bos', ctypes.c_int32),
        ('eos', ctypes.c_int32),
        ('eot', ctypes.c_int32),
        ('unk', ctypes.c_int32),
        ('pad', ctypes.c_int32),
        ('add_bos', ctypes.c_int32),
        ('add_eos', ctypes.c_int32),
        ('model', ctypes.c_char * 32),
        ('pre', ctypes.c_char * 32),
    ]


VKLLM_TOKENIZE_ADD_SPECIAL = 1
VKLLM_TOKENIZE_PARSE_SPECIAL = 2
VKLLM_DETOKENIZE_SPECIAL = 1

# vkllm_detokenizer: an opaque handle, passed as ctypes.c_void_p

# (user_data, progress)
vkllm_progress_fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_float)


class vkllm_model_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('progress', vkllm_progress_fn),
        ('progress_user_data', ctypes.c_void_p),
    ]


class vkllm_model_info(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('architecture', ctypes.c_char * 64),
        ('n_vocab', ctypes.c_uint32),
        ('n_embd', ctypes.c_uint32),
        ('n_layers', ctypes.c_uint32),
        ('n_heads', ctypes.c_uint32),
        ('n_kv_heads', ctypes.c_uint32),
        ('head_dim', ctypes.c_uint32),
        ('n_ctx_train', ctypes.c_uint32),
        ('device_bytes', ctypes.c_uint64),
        ('file_bytes', ctypes.c_uint64),
        ('tensor_bytes', ctypes.c_uint64),
    ]


# vkllm_session: an opaque handle, passed as ctypes.c_void_p

vkllm_kv_type = ctypes.c_int  # an enum
VKLLM_KV_F16 = 0
VKLLM_KV_F32 = 1
VKLLM_KV_Q8_0 = 2
VKLLM_KV_TYPE_FORCE32 = 0x7fffffff

VKLLM_SESSION_STREAMING = 2


class vkllm_session_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('n_ctx', ctypes.c_uint32),
        ('n_seq', ctypes.c_uint32),
        ('n_batch', ctypes.c_uint32),
        ('flags', ctypes.c_uint32),
        ('n_sink', ctypes.c_uint32),
        ('kv_type', vkllm_kv_type),
    ]


class vkllm_session_info(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('n_ctx', ctypes.c_uint32),
        ('n_seq', ctypes.c_uint32),
        ('n_batch', ctypes.c_uint32),
        ('n_sink', ctypes.c_uint32),
        ('flags', ctypes.c_uint32),
        ('kv_type', vkllm_kv_type),
        ('kv_cache_bytes', ctypes.c_uint64),
        ('device_bytes', ctypes.c_uint64),
    ]


class vkllm_session_stats(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('command_buffers_recorded', ctypes.c_uint64),
        ('submits', ctypes.c_uint64),
        ('tokens_prefilled', ctypes.c_uint64),
        ('tokens_decoded', ctypes.c_uint64),
        ('prefill_ms', ctypes.c_double),
        ('decode_ms', ctypes.c_double),
        ('kv_cache_bytes', ctypes.c_uint64),
    ]


VKLLM_MAX_CHAINED_STEPS = 64

vkllm_logits_kind = ctypes.c_int  # an enum
VKLLM_LOGITS_RAW = 0
VKLLM_LOGITS_LOG_SOFTMAX = 1
VKLLM_LOGITS_KIND_FORCE32 = 0x7fffffff


class vkllm_eval_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('kind', vkllm_logits_kind),
        ('positions', ctypes.POINTER(ctypes.c_uint32)),
        ('n_positions', ctypes.c_size_t),
    ]


VKLLM_MAX_TOP_LOGPROBS = 20


class vkllm_token_logprob(ctypes.Structure):
    _fields_ = [
        ('token', ctypes.c_int32),
        ('logprob', ctypes.c_float),
    ]


# (user_data, token, logprob, top, n_top)
vkllm_logprobs_fn = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_int32,
    ctypes.c_float,
    ctypes.POINTER(vkllm_token_logprob),
    ctypes.c_size_t,
)

# (user_data, token, text, length)
vkllm_token_fn = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_int32,
    ctypes.POINTER(ctypes.c_char),
    ctypes.c_size_t,
)

# (user_data, done, total)
vkllm_prefill_fn = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.c_size_t,
)

vkllm_stop_reason = ctypes.c_int  # an enum
VKLLM_STOP_END_OF_GENERATION = 0
VKLLM_STOP_MAX_TOKENS = 1
VKLLM_STOP_STRING = 2
VKLLM_STOP_CANCELLED = 3
VKLLM_STOP_REASON_FORCE32 = 0x7fffffff


class vkllm_generate_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('seq', ctypes.c_uint32),
        ('max_tokens', ctypes.c_uint32),
        ('stop', ctypes.POINTER(ctypes.c_char_p)),
        ('n_stop', ctypes.c_size_t),
        ('render_special', ctypes.c_int32),
        ('on_token', vkllm_token_fn),
        ('on_prefill', vkllm_prefill_fn),
        ('user_data', ctypes.c_void_p),
        ('steps_per_submit', ctypes.c_uint32),
        ('ignore_eog', ctypes.c_int32),
        ('on_logprobs', vkllm_logprobs_fn),
        ('top_logprobs', ctypes.c_int32),
    ]


vkllm_grammar_progress = ctypes.c_int  # an enum
VKLLM_GRAMMAR_INCOMPLETE = 0
VKLLM_GRAMMAR_COMPLETE = 1
VKLLM_GRAMMAR_FINISHED = 2
VKLLM_GRAMMAR_PROGRESS_FORCE32 = 0x7fffffff


class vkllm_generate_result(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('n_prompt', ctypes.c_size_t),
        ('n_generated', ctypes.c_size_t),
        ('stop_reason', vkllm_stop_reason),
        ('prefill_ms', ctypes.c_double),
        ('decode_ms', ctypes.c_double),
        ('seed', ctypes.c_uint64),
        ('grammar_progress', vkllm_grammar_progress),
    ]


class vkllm_batch_sequence(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('seq', ctypes.c_uint32),
        ('prompt', ctypes.POINTER(ctypes.c_int32)),
        ('n_prompt', ctypes.c_size_t),
        ('sampler', ctypes.c_void_p),
        ('tokens', ctypes.POINTER(ctypes.c_int32)),
        ('n_generated', ctypes.c_size_t),
        ('stop_reason', vkllm_stop_reason),
    ]


class vkllm_logit_bias(ctypes.Structure):
    _fields_ = [
        ('token', ctypes.c_int32),
        ('bias', ctypes.c_float),
    ]


VKLLM_SEED_RANDOM = 0xffffffffffffffff


class vkllm_sampling_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('temperature', ctypes.c_float),
        ('top_k', ctypes.c_int32),
        ('top_p', ctypes.c_float),
        ('min_p', ctypes.c_float),
        ('repeat_penalty', ctypes.c_float),
        ('repeat_last_n', ctypes.c_int32),
        ('seed', ctypes.c_uint64),
        ('presence_penalty', ctypes.c_float),
        ('frequency_penalty', ctypes.c_float),
        ('typical_p', ctypes.c_float),
        ('logit_bias', ctypes.POINTER(vkllm_logit_bias)),
        ('n_logit_bias', ctypes.c_size_t),
        ('grammar', ctypes.c_void_p),
    ]


# vkllm_sampler: an opaque handle, passed as ctypes.c_void_p

# vkllm_grammar: an opaque handle, passed as ctypes.c_void_p


class vkllm_chat_message(ctypes.Structure):
    _fields_ = [
        ('role', ctypes.c_char_p),
        ('content', ctypes.c_char_p),
    ]


class vkllm_tool_call(ctypes.Structure):
    _fields_ = [
        ('id', ctypes.c_char_p),
        ('name', ctypes.c_char_p),
        ('arguments', ctypes.c_char_p),
    ]


class vkllm_chat_turn(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('role', ctypes.c_char_p),
        ('content', ctypes.c_char_p),
        ('reasoning_content', ctypes.c_char_p),
        ('tool_calls', ctypes.POINTER(vkllm_tool_call)),
        ('n_tool_calls', ctypes.c_size_t),
        ('tool_call_id', ctypes.c_char_p),
        ('name', ctypes.c_char_p),
    ]


VKLLM_CHAT_NOW_CLOCK = -0x8000000000000000


class vkllm_chat_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('model', ctypes.c_void_p),
        ('template_source', ctypes.c_char_p),
        ('template_name', ctypes.c_char_p),
        ('tools', ctypes.c_char_p),
        ('extra', ctypes.c_char_p),
        ('add_generation_prompt', ctypes.c_int32),
        ('bos_token', ctypes.c_char_p),
        ('eos_token', ctypes.c_char_p),
        ('now', ctypes.c_int64),
    ]


vkllm_reply_format = ctypes.c_int  # an enum
VKLLM_REPLY_PLAIN = 0
VKLLM_REPLY_HERMES = 1
VKLLM_REPLY_MISTRAL = 2
VKLLM_REPLY_LLAMA3 = 3
VKLLM_REPLY_HARMONY = 4
VKLLM_REPLY_FORMAT_FORCE32 = 0x7fffffff

# vkllm_reply_parser: an opaque handle, passed as ctypes.c_void_p


class vkllm_reply_part(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('reasoning', ctypes.c_char_p),
        ('content', ctypes.c_char_p),
        ('tool_calls', ctypes.POINTER(vkllm_tool_call)),
        ('n_tool_calls', ctypes.c_size_t),
    ]


# vkllm_conversation: an opaque handle, passed as ctypes.c_void_p


class vkllm_conversation_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('seq', ctypes.c_uint32),
        ('template_source', ctypes.c_char_p),
        ('template_name', ctypes.c_char_p),
        ('tools', ctypes.c_char_p),
        ('extra', ctypes.c_char_p),
        ('now', ctypes.c_int64),
    ]


vkllm_chat_piece_kind = ctypes.c_int  # an enum
VKLLM_CHAT_PIECE_CONTENT = 0
VKLLM_CHAT_PIECE_REASONING = 1
VKLLM_CHAT_PIECE_TOOL_CALL = 2
VKLLM_CHAT_PIECE_KIND_FORCE32 = 0x7fffffff

# (user_data, kind, text, length, call)
vkllm_chat_piece_fn = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_void_p,
    vkllm_chat_piece_kind,
    ctypes.POINTER(ctypes.c_char),
    ctypes.c_size_t,
    ctypes.POINTER(vkllm_tool_call),
)


class vkllm_conversation_reply_params(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('max_tokens', ctypes.c_uint32),
        ('on_piece', vkllm_chat_piece_fn),
        ('user_data', ctypes.c_void_p),
        ('stop', ctypes.POINTER(ctypes.c_char_p)),
        ('n_stop', ctypes.c_size_t),
    ]


class vkllm_conversation_result(ctypes.Structure):
    _fields_ = [
        ('struct_size', ctypes.c_size_t),
        ('n_prompt', ctypes.c_size_t),
        ('n_reused', ctypes.c_size_t),
        ('n_prefilled', ctypes.c_size_t),
        ('n_generated', ctypes.c_size_t),
        ('stop_reason', vkllm_stop_reason),
        ('n_tool_calls', ctypes.c_size_t),
        ('prefill_ms', ctypes.c_double),
        ('decode_ms', ctypes.c_double),
        ('seed', ctypes.c_uint64),
        ('grammar_progress', vkllm_grammar_progress),
    ]


# --- Experimental (#ifdef VKLLM_EXPERIMENTAL): may change or go in any minor version ---

VKLLM_SESSION_RECORD_EVERY_STEP = 8
VKLLM_SESSION_PROFILE = 16


class vkllm_kernel_time(ctypes.Structure):
    _fields_ = [
        ('kernel', ctypes.c_char_p),
        ('dispatches', ctypes.c_uint64),
        ('ms', ctypes.c_double),
    ]


# Every struct, for the layout check (test_ffi_layout.py).
STRUCTS = (
    vkllm_coopmat_shape,
    vkllm_device_info,
    vkllm_runtime_params,
    vkllm_runtime_stats,
    vkllm_self_check_result,
    vkllm_tune_result,
    vkllm_model_summary,
    vkllm_gguf_key,
    vkllm_tensor_info,
    vkllm_tokenizer_info,
    vkllm_model_params,
    vkllm_model_info,
    vkllm_session_params,
    vkllm_session_info,
    vkllm_session_stats,
    vkllm_eval_params,
    vkllm_token_logprob,
    vkllm_generate_params,
    vkllm_generate_result,
    vkllm_batch_sequence,
    vkllm_logit_bias,
    vkllm_sampling_params,
    vkllm_chat_message,
    vkllm_tool_call,
    vkllm_chat_turn,
    vkllm_chat_params,
    vkllm_reply_part,
    vkllm_conversation_params,
    vkllm_conversation_reply_params,
    vkllm_conversation_result,
    vkllm_kernel_time,
)

# name: (restype, argtypes); EXPERIMENTAL names those the header declares only under
# VKLLM_EXPERIMENTAL.
FUNCTIONS = {
    'vkllm_version': (ctypes.c_uint32, []),
    'vkllm_version_string': (ctypes.c_char_p, []),
    'vkllm_status_string': (ctypes.c_char_p, [vkllm_status]),
    'vkllm_last_error': (ctypes.c_char_p, []),
    'vkllm_devices_enumerate': (
        vkllm_status,
        [
            ctypes.POINTER(vkllm_device_info),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_runtime_params_init': (None, [ctypes.POINTER(vkllm_runtime_params)]),
    'vkllm_runtime_create': (
        vkllm_status,
        [
            ctypes.POINTER(vkllm_runtime_params),
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_runtime_destroy': (None, [ctypes.c_void_p]),
    'vkllm_runtime_get_device_info': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_device_info),
        ],
    ),
    'vkllm_runtime_get_stats': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_runtime_stats),
        ],
    ),
    'vkllm_runtime_self_check': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_self_check_result),
        ],
    ),
    'vkllm_runtime_tune': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_tune_result),
        ],
    ),
    'vkllm_gguf_open': (vkllm_status, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    'vkllm_gguf_destroy': (None, [ctypes.c_void_p]),
    'vkllm_gguf_get_summary': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_model_summary),
        ],
    ),
    'vkllm_gguf_get_key': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(vkllm_gguf_key),
        ],
    ),
    'vkllm_gguf_get_int': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_int64),
        ],
    ),
    'vkllm_gguf_get_float': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_double),
        ],
    ),
    'vkllm_gguf_get_string': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_gguf_get_text': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_gguf_get_tensor': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(vkllm_tensor_info),
        ],
    ),
    'vkllm_tokenizer_create': (vkllm_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    'vkllm_tokenizer_destroy': (None, [ctypes.c_void_p]),
    'vkllm_tokenizer_get_info': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_tokenizer_info),
        ],
    ),
    'vkllm_tokenizer_encode': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_tokenizer_get_piece': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_int32,
            ctypes.c_uint32,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_tokenizer_decode': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.c_uint32,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_tokenizer_is_end_of_generation': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_int32,
            ctypes.POINTER(ctypes.c_int32),
        ],
    ),
    'vkllm_detokenizer_create': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_detokenizer_destroy': (None, [ctypes.c_void_p]),
    'vkllm_detokenizer_push': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_int32,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_detokenizer_flush': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_model_params_init': (None, [ctypes.POINTER(vkllm_model_params)]),
    'vkllm_model_load': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(vkllm_model_params),
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_model_destroy': (None, [ctypes.c_void_p]),
    'vkllm_model_get_tokenizer': (ctypes.c_void_p, [ctypes.c_void_p]),
    'vkllm_model_get_info': (vkllm_status, [ctypes.c_void_p, ctypes.POINTER(vkllm_model_info)]),
    'vkllm_model_get_chat_template': (ctypes.c_char_p, [ctypes.c_void_p]),
    'vkllm_model_get_gguf': (ctypes.c_void_p, [ctypes.c_void_p]),
    'vkllm_session_params_init': (None, [ctypes.POINTER(vkllm_session_params)]),
    'vkllm_session_create': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_session_params),
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_session_destroy': (None, [ctypes.c_void_p]),
    'vkllm_session_get_info': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_session_info),
        ],
    ),
    'vkllm_session_get_position': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_uint32),
        ],
    ),
    'vkllm_session_get_stats': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_session_stats),
        ],
    ),
    'vkllm_session_get_tokens': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_session_reset': (vkllm_status, [ctypes.c_void_p, ctypes.c_int32]),
    'vkllm_session_truncate': (vkllm_status, [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]),
    'vkllm_session_eval': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_float),
        ],
    ),
    'vkllm_session_decode': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_float),
        ],
    ),
    'vkllm_session_decode_greedy': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_int32),
        ],
    ),
    'vkllm_eval_params_init': (None, [ctypes.POINTER(vkllm_eval_params)]),
    'vkllm_session_eval_logits': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.POINTER(vkllm_eval_params),
            ctypes.POINTER(ctypes.c_float),
        ],
    ),
    'vkllm_generate_params_init': (None, [ctypes.POINTER(vkllm_generate_params)]),
    'vkllm_session_generate': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
            ctypes.POINTER(vkllm_sampling_params),
            ctypes.POINTER(vkllm_generate_params),
            ctypes.POINTER(vkllm_generate_result),
        ],
    ),
    'vkllm_session_generate_batch': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_batch_sequence),
            ctypes.c_size_t,
            ctypes.POINTER(vkllm_generate_params),
        ],
    ),
    'vkllm_session_cancel': (vkllm_status, [ctypes.c_void_p]),
    'vkllm_session_get_state_size': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_session_state_save': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_session_state_load': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_void_p,
            ctypes.c_size_t,
        ],
    ),
    'vkllm_session_state_save_file': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_char_p,
        ],
    ),
    'vkllm_session_state_load_file': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_char_p,
        ],
    ),
    'vkllm_session_fork': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_uint32,
            ctypes.c_uint32,
        ],
    ),
    'vkllm_sampling_params_init': (None, [ctypes.POINTER(vkllm_sampling_params)]),
    'vkllm_sampler_create': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_sampling_params),
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_sampler_destroy': (None, [ctypes.c_void_p]),
    'vkllm_sampler_sample': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_float),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_int32),
        ],
    ),
    'vkllm_sampler_accept': (vkllm_status, [ctypes.c_void_p, ctypes.c_int32]),
    'vkllm_sampler_reset': (vkllm_status, [ctypes.c_void_p]),
    'vkllm_sampler_get_seed': (vkllm_status, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64)]),
    'vkllm_sampler_get_grammar_progress': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_grammar_progress),
        ],
    ),
    'vkllm_sampler_accept_prompt': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.c_size_t,
        ],
    ),
    'vkllm_sampler_apply_grammar': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_float),
            ctypes.c_size_t,
        ],
    ),
    'vkllm_grammar_create': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_grammar_create_from_json_schema': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_grammar_destroy': (None, [ctypes.c_void_p]),
    'vkllm_chat_apply_template': (
        vkllm_status,
        [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.POINTER(vkllm_chat_message),
            ctypes.c_size_t,
            ctypes.c_int32,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_chat_params_init': (None, [ctypes.POINTER(vkllm_chat_params)]),
    'vkllm_chat_render': (
        vkllm_status,
        [
            ctypes.POINTER(vkllm_chat_params),
            ctypes.POINTER(vkllm_chat_turn),
            ctypes.c_size_t,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_chat_render_json': (
        vkllm_status,
        [
            ctypes.POINTER(vkllm_chat_params),
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_reply_format_of_template': (vkllm_reply_format, [ctypes.c_char_p]),
    'vkllm_prompt_opens_reasoning': (ctypes.c_int32, [ctypes.c_char_p]),
    'vkllm_reply_parser_create': (
        vkllm_status,
        [
            vkllm_reply_format,
            ctypes.c_int32,
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_reply_parser_destroy': (None, [ctypes.c_void_p]),
    'vkllm_reply_parser_push': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(vkllm_reply_part),
        ],
    ),
    'vkllm_reply_parser_finish': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_reply_part),
        ],
    ),
    'vkllm_conversation_params_init': (None, [ctypes.POINTER(vkllm_conversation_params)]),
    'vkllm_conversation_create': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_conversation_params),
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    'vkllm_conversation_destroy': (None, [ctypes.c_void_p]),
    'vkllm_conversation_add': (vkllm_status, [ctypes.c_void_p, ctypes.POINTER(vkllm_chat_turn)]),
    'vkllm_conversation_add_json': (vkllm_status, [ctypes.c_void_p, ctypes.c_char_p]),
    'vkllm_conversation_get_count': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_conversation_get_message': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(vkllm_chat_turn),
        ],
    ),
    'vkllm_conversation_truncate': (vkllm_status, [ctypes.c_void_p, ctypes.c_size_t]),
    'vkllm_conversation_reply_params_init': (
        None,
        [
            ctypes.POINTER(vkllm_conversation_reply_params),
        ],
    ),
    'vkllm_conversation_reply': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_sampling_params),
            ctypes.POINTER(vkllm_conversation_reply_params),
            ctypes.POINTER(vkllm_conversation_result),
        ],
    ),
    'vkllm_ggml_type_name': (ctypes.c_char_p, [ctypes.c_uint32]),
    'vkllm_json_schema_to_gbnf': (
        vkllm_status,
        [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),
    'vkllm_session_get_layer_kv_bytes': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_uint64),
        ],
    ),  # experimental
    'vkllm_session_get_profile': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(vkllm_kernel_time),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ],
    ),  # experimental
    'vkllm_model_get_rope_table_builds': (
        vkllm_status,
        [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_uint64),
        ],
    ),  # experimental
}

EXPERIMENTAL = frozenset({
    'vkllm_session_get_layer_kv_bytes',
    'vkllm_session_get_profile',
    'vkllm_model_get_rope_table_builds',
})


def declare(lib):
    """Sets restype and argtypes of every function of FUNCTIONS on a ctypes.CDLL."""
    for name, (restype, argtypes) in FUNCTIONS.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib
