//! Raw declarations of libvkllm's C API, one for one with `include/vkllm.h` (version 0.3).
//!
//! Everything here is `unsafe` to use; the `vkllm` crate is the safe layer. Read the header for
//! the contract of each function: this file repeats the declarations, not the documentation.
//! Params structs must be filled with their `*_init` function before use; output structs need
//! `struct_size` set by the caller.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

pub const VKLLM_VERSION_MAJOR: u32 = 0;
pub const VKLLM_VERSION_MINOR: u32 = 2;
pub const VKLLM_VERSION_PATCH: u32 = 0;
pub const VKLLM_VERSION_NUMBER: u32 =
    VKLLM_VERSION_MAJOR * 10000 + VKLLM_VERSION_MINOR * 100 + VKLLM_VERSION_PATCH;

// ---------------------------------------------------------------------------------------------
// Status codes. A C enum is an int; values the library may append later stay representable
// because the type is a plain integer, not a Rust enum.
// ---------------------------------------------------------------------------------------------

pub type vkllm_status = i32;
pub const VKLLM_OK: vkllm_status = 0;
pub const VKLLM_ERR_INVALID_ARGUMENT: vkllm_status = 1;
pub const VKLLM_ERR_NO_DEVICE: vkllm_status = 2;
pub const VKLLM_ERR_OUT_OF_HOST_MEMORY: vkllm_status = 3;
pub const VKLLM_ERR_OUT_OF_DEVICE_MEMORY: vkllm_status = 4;
pub const VKLLM_ERR_VULKAN: vkllm_status = 5;
pub const VKLLM_ERR_DEVICE_LOST: vkllm_status = 6;
pub const VKLLM_ERR_IO: vkllm_status = 7;
pub const VKLLM_ERR_FORMAT: vkllm_status = 8;
pub const VKLLM_ERR_UNSUPPORTED: vkllm_status = 9;
pub const VKLLM_ERR_BUFFER_TOO_SMALL: vkllm_status = 10;
pub const VKLLM_ERR_CONTEXT_FULL: vkllm_status = 11;
pub const VKLLM_ERR_CANCELLED: vkllm_status = 12;
pub const VKLLM_ERR_INTERNAL: vkllm_status = 13;
pub const VKLLM_ERR_NOT_FOUND: vkllm_status = 14;

pub type vkllm_log_level = i32;
pub const VKLLM_LOG_DEBUG: vkllm_log_level = 0;
pub const VKLLM_LOG_INFO: vkllm_log_level = 1;
pub const VKLLM_LOG_WARNING: vkllm_log_level = 2;
pub const VKLLM_LOG_ERROR: vkllm_log_level = 3;

pub type vkllm_log_fn = Option<
    unsafe extern "C" fn(user_data: *mut c_void, level: vkllm_log_level, message: *const c_char),
>;

// ---------------------------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------------------------

pub type vkllm_device_type = i32;
pub const VKLLM_DEVICE_OTHER: vkllm_device_type = 0;
pub const VKLLM_DEVICE_INTEGRATED_GPU: vkllm_device_type = 1;
pub const VKLLM_DEVICE_DISCRETE_GPU: vkllm_device_type = 2;
pub const VKLLM_DEVICE_VIRTUAL_GPU: vkllm_device_type = 3;
pub const VKLLM_DEVICE_CPU: vkllm_device_type = 4;

pub const VKLLM_MAX_MEMORY_HEAPS: usize = 16;

pub type vkllm_coopmat_use = i32;
pub const VKLLM_COOPMAT_ABSENT: vkllm_coopmat_use = 0;
pub const VKLLM_COOPMAT_USED: vkllm_coopmat_use = 1;
pub const VKLLM_COOPMAT_UNSUITABLE: vkllm_coopmat_use = 2;
pub const VKLLM_COOPMAT_NOT_BUILT: vkllm_coopmat_use = 3;
pub const VKLLM_COOPMAT_NOT_CHOSEN: vkllm_coopmat_use = 4;

pub type vkllm_component_type = i32;
pub const VKLLM_COMPONENT_F16: vkllm_component_type = 0;
pub const VKLLM_COMPONENT_F32: vkllm_component_type = 1;
pub const VKLLM_COMPONENT_F64: vkllm_component_type = 2;
pub const VKLLM_COMPONENT_S8: vkllm_component_type = 3;
pub const VKLLM_COMPONENT_S16: vkllm_component_type = 4;
pub const VKLLM_COMPONENT_S32: vkllm_component_type = 5;
pub const VKLLM_COMPONENT_S64: vkllm_component_type = 6;
pub const VKLLM_COMPONENT_U8: vkllm_component_type = 7;
pub const VKLLM_COMPONENT_U16: vkllm_component_type = 8;
pub const VKLLM_COMPONENT_U32: vkllm_component_type = 9;
pub const VKLLM_COMPONENT_U64: vkllm_component_type = 10;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct vkllm_coopmat_shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a_type: vkllm_component_type,
    pub b_type: vkllm_component_type,
    pub c_type: vkllm_component_type,
    pub result_type: vkllm_component_type,
    pub subgroup_scope: i32,
}

pub const VKLLM_MAX_COOPMAT_SHAPES: usize = 32;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_device_info {
    pub struct_size: usize,
    pub index: u32,
    pub type_: vkllm_device_type,
    pub name: [c_char; 256],
    pub driver_name: [c_char; 256],
    pub driver_info: [c_char; 256],
    pub vendor_id: u32,
    pub device_id: u32,
    pub api_version: u32,
    pub usable: i32,
    pub unified_memory: i32,
    pub heap_count: u32,
    pub heap_size: [u64; VKLLM_MAX_MEMORY_HEAPS],
    pub heap_device_local: [i32; VKLLM_MAX_MEMORY_HEAPS],
    pub max_storage_buffer_range: u64,
    pub max_texel_buffer_elements: u64,
    pub max_allocation_size: u64,
    pub max_compute_shared_memory: u32,
    pub max_workgroup_invocations: u32,
    pub subgroup_size: u32,
    pub shader_float16: i32,
    pub shader_int8: i32,
    pub storage_16bit: i32,
    pub timestamps: i32,
    pub cooperative_matrix: vkllm_coopmat_use,
    pub coopmat_shape: vkllm_coopmat_shape,
    pub coopmat_shape_count: u32,
    pub coopmat_shapes: [vkllm_coopmat_shape; VKLLM_MAX_COOPMAT_SHAPES],
}

// ---------------------------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------------------------

#[repr(C)]
pub struct vkllm_runtime {
    _opaque: [u8; 0],
}

pub const VKLLM_RUNTIME_VALIDATION: u32 = 0x1;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_runtime_params {
    pub struct_size: usize,
    pub device_index: i32,
    pub device_name: *const c_char,
    pub flags: u32,
    pub pipeline_cache_path: *const c_char,
    pub log_fn: vkllm_log_fn,
    pub log_user_data: *mut c_void,
    pub device_memory_budget: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct vkllm_runtime_stats {
    pub struct_size: usize,
    pub validation_errors: u64,
    pub validation_warnings: u64,
    pub pipelines_created: u64,
    pub pipeline_cache_bytes_loaded: u64,
    pub device_memory_allocated: u64,
    pub submits: u64,
    pub pipeline_compile_ms: f64,
    pub tuned_shapes: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_self_check_result {
    pub struct_size: usize,
    pub kernels_checked: u32,
    pub kernels_failed: u32,
    pub max_error: f64,
    pub first_failure: [c_char; 128],
    pub elapsed_ms: f64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct vkllm_tune_result {
    pub struct_size: usize,
    pub shapes: u32,
    pub candidates_timed: u32,
    pub candidates_rejected: u32,
    pub shapes_changed: u32,
    pub default_us: f64,
    pub tuned_us: f64,
    pub elapsed_ms: f64,
    pub file_written: u32,
}

// ---------------------------------------------------------------------------------------------
// GGUF files
// ---------------------------------------------------------------------------------------------

#[repr(C)]
pub struct vkllm_gguf {
    _opaque: [u8; 0],
}

pub type vkllm_gguf_type = i32;
pub const VKLLM_GGUF_UINT8: vkllm_gguf_type = 0;
pub const VKLLM_GGUF_INT8: vkllm_gguf_type = 1;
pub const VKLLM_GGUF_UINT16: vkllm_gguf_type = 2;
pub const VKLLM_GGUF_INT16: vkllm_gguf_type = 3;
pub const VKLLM_GGUF_UINT32: vkllm_gguf_type = 4;
pub const VKLLM_GGUF_INT32: vkllm_gguf_type = 5;
pub const VKLLM_GGUF_FLOAT32: vkllm_gguf_type = 6;
pub const VKLLM_GGUF_BOOL: vkllm_gguf_type = 7;
pub const VKLLM_GGUF_STRING: vkllm_gguf_type = 8;
pub const VKLLM_GGUF_ARRAY: vkllm_gguf_type = 9;
pub const VKLLM_GGUF_UINT64: vkllm_gguf_type = 10;
pub const VKLLM_GGUF_INT64: vkllm_gguf_type = 11;
pub const VKLLM_GGUF_FLOAT64: vkllm_gguf_type = 12;

pub const VKLLM_GGML_TYPE_COUNT: usize = 48;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_model_summary {
    pub struct_size: usize,
    pub gguf_version: u32,
    pub architecture: [c_char; 64],
    pub name: [c_char; 256],
    pub file_bytes: u64,
    pub tensor_bytes: u64,
    pub n_params: u64,
    pub n_tensors: u64,
    pub n_keys: u64,
    pub context_length: u32,
    pub n_layers: u32,
    pub n_embd: u32,
    pub n_heads: u32,
    pub n_kv_heads: u32,
    pub n_experts: u32,
    pub n_experts_used: u32,
    pub n_vocab: u32,
    pub tokenizer_model: [c_char; 32],
    pub tokenizer_pre: [c_char; 32],
    pub tensors_of_type: [u64; VKLLM_GGML_TYPE_COUNT],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_gguf_key {
    pub struct_size: usize,
    pub name: *const c_char,
    pub type_: vkllm_gguf_type,
    pub element_type: vkllm_gguf_type,
    pub count: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_tensor_info {
    pub struct_size: usize,
    pub name: *const c_char,
    pub type_: u32,
    pub type_name: *const c_char,
    pub n_dims: u32,
    pub dims: [u64; 4],
    pub n_elements: u64,
    pub n_bytes: u64,
    pub file_offset: u64,
}

// ---------------------------------------------------------------------------------------------
// Tokenizers
// ---------------------------------------------------------------------------------------------

#[repr(C)]
pub struct vkllm_tokenizer {
    _opaque: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_tokenizer_info {
    pub struct_size: usize,
    pub n_vocab: u32,
    pub bos: i32,
    pub eos: i32,
    pub eot: i32,
    pub unk: i32,
    pub pad: i32,
    pub add_bos: i32,
    pub add_eos: i32,
    pub model: [c_char; 32],
    pub pre: [c_char; 32],
}

pub const VKLLM_TOKENIZE_ADD_SPECIAL: u32 = 0x1;
pub const VKLLM_TOKENIZE_PARSE_SPECIAL: u32 = 0x2;
pub const VKLLM_DETOKENIZE_SPECIAL: u32 = 0x1;

#[repr(C)]
pub struct vkllm_detokenizer {
    _opaque: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_chat_message {
    pub role: *const c_char,
    pub content: *const c_char,
}

// ---------------------------------------------------------------------------------------------
// Chat replies
// ---------------------------------------------------------------------------------------------

pub type vkllm_reply_format = i32;
pub const VKLLM_REPLY_PLAIN: vkllm_reply_format = 0;
pub const VKLLM_REPLY_HERMES: vkllm_reply_format = 1;
pub const VKLLM_REPLY_MISTRAL: vkllm_reply_format = 2;
pub const VKLLM_REPLY_LLAMA3: vkllm_reply_format = 3;
pub const VKLLM_REPLY_HARMONY: vkllm_reply_format = 4;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_tool_call {
    pub id: *const c_char,
    pub name: *const c_char,
    pub arguments: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_chat_turn {
    pub struct_size: usize,
    pub role: *const c_char,
    pub content: *const c_char,
    pub reasoning_content: *const c_char,
    pub tool_calls: *const vkllm_tool_call,
    pub n_tool_calls: usize,
    pub tool_call_id: *const c_char,
    pub name: *const c_char,
}

pub const VKLLM_CHAT_NOW_CLOCK: i64 = i64::MIN;

#[repr(C)]
pub struct vkllm_chat_params {
    pub struct_size: usize,
    pub model: *const vkllm_model,
    pub template_source: *const c_char,
    pub template_name: *const c_char,
    pub tools: *const c_char,
    pub extra: *const c_char,
    pub add_generation_prompt: i32,
    pub bos_token: *const c_char,
    pub eos_token: *const c_char,
    pub now: i64,
}

#[repr(C)]
pub struct vkllm_reply_parser {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct vkllm_reply_part {
    pub struct_size: usize,
    pub reasoning: *const c_char,
    pub content: *const c_char,
    pub tool_calls: *const vkllm_tool_call,
    pub n_tool_calls: usize,
}

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

#[repr(C)]
pub struct vkllm_model {
    _opaque: [u8; 0],
}

pub type vkllm_progress_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, progress: f32) -> i32>;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_model_params {
    pub struct_size: usize,
    pub progress: vkllm_progress_fn,
    pub progress_user_data: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_model_info {
    pub struct_size: usize,
    pub architecture: [c_char; 64],
    pub n_vocab: u32,
    pub n_embd: u32,
    pub n_layers: u32,
    pub n_heads: u32,
    pub n_kv_heads: u32,
    pub head_dim: u32,
    pub n_ctx_train: u32,
    pub device_bytes: u64,
    pub file_bytes: u64,
    pub tensor_bytes: u64,
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

#[repr(C)]
pub struct vkllm_session {
    _opaque: [u8; 0],
}

pub const VKLLM_SESSION_STREAMING: u32 = 0x2;
pub const VKLLM_SESSION_RECORD_EVERY_STEP: u32 = 0x8;
pub const VKLLM_SESSION_PROFILE: u32 = 0x10;
pub const VKLLM_MAX_CHAINED_STEPS: u32 = 64;

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct vkllm_session_params {
    pub struct_size: usize,
    pub n_ctx: u32,
    pub n_seq: u32,
    pub n_batch: u32,
    pub flags: u32,
    pub n_sink: u32,
    pub kv_type: vkllm_kv_type,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct vkllm_session_stats {
    pub struct_size: usize,
    pub command_buffers_recorded: u64,
    pub submits: u64,
    pub tokens_prefilled: u64,
    pub tokens_decoded: u64,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub kv_cache_bytes: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_kernel_time {
    pub kernel: *const c_char,
    pub dispatches: u64,
    pub ms: f64,
}

// ---------------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_sampling_params {
    pub struct_size: usize,
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub repeat_last_n: i32,
    pub seed: u64,
    pub presence_penalty: f32,
    pub frequency_penalty: f32,
    pub typical_p: f32,
    pub logit_bias: *const vkllm_logit_bias,
    pub n_logit_bias: usize,
    pub grammar: *const vkllm_grammar,
}

impl Default for vkllm_sampling_params {
    fn default() -> Self {
        // SAFETY: zero (a NULL bias array, no grammar) is valid for every field.
        unsafe { std::mem::zeroed() }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct vkllm_logit_bias {
    pub token: i32,
    pub bias: f32,
}

pub const VKLLM_SEED_RANDOM: u64 = u64::MAX;

pub type vkllm_kv_type = i32;
pub const VKLLM_KV_F16: vkllm_kv_type = 0;
pub const VKLLM_KV_F32: vkllm_kv_type = 1;
pub const VKLLM_KV_Q8_0: vkllm_kv_type = 2;

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct vkllm_session_info {
    pub struct_size: usize,
    pub n_ctx: u32,
    pub n_seq: u32,
    pub n_batch: u32,
    pub n_sink: u32,
    pub flags: u32,
    pub kv_type: vkllm_kv_type,
    pub kv_cache_bytes: u64,
    pub device_bytes: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_batch_sequence {
    pub struct_size: usize,
    pub seq: u32,
    pub prompt: *const i32,
    pub n_prompt: usize,
    pub sampler: *mut vkllm_sampler,
    pub tokens: *mut i32,
    pub n_generated: usize,
    pub stop_reason: vkllm_stop_reason,
}

#[repr(C)]
pub struct vkllm_sampler {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct vkllm_grammar {
    _opaque: [u8; 0],
}

pub type vkllm_grammar_progress = i32;
pub const VKLLM_GRAMMAR_INCOMPLETE: vkllm_grammar_progress = 0;
pub const VKLLM_GRAMMAR_COMPLETE: vkllm_grammar_progress = 1;
pub const VKLLM_GRAMMAR_FINISHED: vkllm_grammar_progress = 2;

pub type vkllm_token_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        token: i32,
        text: *const c_char,
        length: usize,
    ) -> i32,
>;
pub type vkllm_prefill_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, done: usize, total: usize) -> i32>;

pub type vkllm_logits_kind = i32;
pub const VKLLM_LOGITS_RAW: vkllm_logits_kind = 0;
pub const VKLLM_LOGITS_LOG_SOFTMAX: vkllm_logits_kind = 1;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_eval_params {
    pub struct_size: usize,
    pub kind: vkllm_logits_kind,
    pub positions: *const u32,
    pub n_positions: usize,
}

pub const VKLLM_MAX_TOP_LOGPROBS: i32 = 20;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct vkllm_token_logprob {
    pub token: i32,
    pub logprob: f32,
}

pub type vkllm_logprobs_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        token: i32,
        logprob: f32,
        top: *const vkllm_token_logprob,
        n_top: usize,
    ) -> i32,
>;

pub type vkllm_stop_reason = i32;
pub const VKLLM_STOP_END_OF_GENERATION: vkllm_stop_reason = 0;
pub const VKLLM_STOP_MAX_TOKENS: vkllm_stop_reason = 1;
pub const VKLLM_STOP_STRING: vkllm_stop_reason = 2;
pub const VKLLM_STOP_CANCELLED: vkllm_stop_reason = 3;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct vkllm_generate_params {
    pub struct_size: usize,
    pub seq: u32,
    pub max_tokens: u32,
    pub stop: *const *const c_char,
    pub n_stop: usize,
    pub render_special: i32,
    pub on_token: vkllm_token_fn,
    pub on_prefill: vkllm_prefill_fn,
    pub user_data: *mut c_void,
    pub steps_per_submit: u32,
    pub ignore_eog: i32,
    pub on_logprobs: vkllm_logprobs_fn,
    pub top_logprobs: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct vkllm_generate_result {
    pub struct_size: usize,
    pub n_prompt: usize,
    pub n_generated: usize,
    pub stop_reason: vkllm_stop_reason,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub seed: u64,
    pub grammar_progress: vkllm_grammar_progress,
}

extern "C" {
    pub fn vkllm_version() -> u32;
    pub fn vkllm_version_string() -> *const c_char;
    pub fn vkllm_status_string(status: vkllm_status) -> *const c_char;
    pub fn vkllm_last_error() -> *const c_char;

    pub fn vkllm_devices_enumerate(
        infos: *mut vkllm_device_info,
        capacity: usize,
        count: *mut usize,
    ) -> vkllm_status;

    pub fn vkllm_runtime_params_init(params: *mut vkllm_runtime_params);
    pub fn vkllm_runtime_create(
        params: *const vkllm_runtime_params,
        out: *mut *mut vkllm_runtime,
    ) -> vkllm_status;
    pub fn vkllm_runtime_destroy(runtime: *mut vkllm_runtime);
    pub fn vkllm_runtime_get_device_info(
        runtime: *const vkllm_runtime,
        info: *mut vkllm_device_info,
    ) -> vkllm_status;
    pub fn vkllm_runtime_get_stats(
        runtime: *const vkllm_runtime,
        stats: *mut vkllm_runtime_stats,
    ) -> vkllm_status;
    pub fn vkllm_runtime_self_check(
        runtime: *mut vkllm_runtime,
        result: *mut vkllm_self_check_result,
    ) -> vkllm_status;
    pub fn vkllm_runtime_tune(
        runtime: *mut vkllm_runtime,
        model: *const vkllm_model,
        result: *mut vkllm_tune_result,
    ) -> vkllm_status;

    pub fn vkllm_gguf_open(path: *const c_char, out: *mut *mut vkllm_gguf) -> vkllm_status;
    pub fn vkllm_gguf_destroy(gguf: *mut vkllm_gguf);
    pub fn vkllm_gguf_get_summary(
        gguf: *const vkllm_gguf,
        out: *mut vkllm_model_summary,
    ) -> vkllm_status;
    pub fn vkllm_gguf_get_key(
        gguf: *const vkllm_gguf,
        index: usize,
        out: *mut vkllm_gguf_key,
    ) -> vkllm_status;
    pub fn vkllm_gguf_get_int(
        gguf: *const vkllm_gguf,
        key: *const c_char,
        out: *mut i64,
    ) -> vkllm_status;
    pub fn vkllm_gguf_get_float(
        gguf: *const vkllm_gguf,
        key: *const c_char,
        out: *mut f64,
    ) -> vkllm_status;
    pub fn vkllm_gguf_get_string(
        gguf: *const vkllm_gguf,
        key: *const c_char,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_gguf_get_text(
        gguf: *const vkllm_gguf,
        key: *const c_char,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_gguf_get_tensor(
        gguf: *const vkllm_gguf,
        index: usize,
        out: *mut vkllm_tensor_info,
    ) -> vkllm_status;
    pub fn vkllm_ggml_type_name(type_: u32) -> *const c_char;

    pub fn vkllm_tokenizer_create(
        gguf: *const vkllm_gguf,
        out: *mut *mut vkllm_tokenizer,
    ) -> vkllm_status;
    pub fn vkllm_tokenizer_destroy(tokenizer: *mut vkllm_tokenizer);
    pub fn vkllm_tokenizer_get_info(
        tokenizer: *const vkllm_tokenizer,
        out: *mut vkllm_tokenizer_info,
    ) -> vkllm_status;
    pub fn vkllm_tokenizer_encode(
        tokenizer: *const vkllm_tokenizer,
        text: *const c_char,
        length: usize,
        flags: u32,
        tokens: *mut i32,
        capacity: usize,
        n_tokens: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_tokenizer_get_piece(
        tokenizer: *const vkllm_tokenizer,
        token: i32,
        flags: u32,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_tokenizer_decode(
        tokenizer: *const vkllm_tokenizer,
        tokens: *const i32,
        n_tokens: usize,
        flags: u32,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_tokenizer_is_end_of_generation(
        tokenizer: *const vkllm_tokenizer,
        token: i32,
        out: *mut i32,
    ) -> vkllm_status;

    pub fn vkllm_detokenizer_create(
        tokenizer: *const vkllm_tokenizer,
        flags: u32,
        out: *mut *mut vkllm_detokenizer,
    ) -> vkllm_status;
    pub fn vkllm_detokenizer_destroy(detokenizer: *mut vkllm_detokenizer);
    pub fn vkllm_detokenizer_push(
        detokenizer: *mut vkllm_detokenizer,
        token: i32,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_detokenizer_flush(
        detokenizer: *mut vkllm_detokenizer,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;

    pub fn vkllm_chat_apply_template(
        template_name: *const c_char,
        model_template: *const c_char,
        messages: *const vkllm_chat_message,
        n_messages: usize,
        add_assistant: i32,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;

    pub fn vkllm_chat_params_init(params: *mut vkllm_chat_params);
    pub fn vkllm_chat_render(
        params: *const vkllm_chat_params,
        turns: *const vkllm_chat_turn,
        n_turns: usize,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_chat_render_json(
        params: *const vkllm_chat_params,
        messages_json: *const c_char,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_reply_format_of_template(template_source: *const c_char) -> vkllm_reply_format;
    pub fn vkllm_prompt_opens_reasoning(prompt: *const c_char) -> i32;
    pub fn vkllm_reply_parser_create(
        format: vkllm_reply_format,
        in_reasoning: i32,
        out: *mut *mut vkllm_reply_parser,
    ) -> vkllm_status;
    pub fn vkllm_reply_parser_destroy(parser: *mut vkllm_reply_parser);
    pub fn vkllm_reply_parser_push(
        parser: *mut vkllm_reply_parser,
        text: *const c_char,
        length: usize,
        part: *mut vkllm_reply_part,
    ) -> vkllm_status;
    pub fn vkllm_reply_parser_finish(
        parser: *mut vkllm_reply_parser,
        part: *mut vkllm_reply_part,
    ) -> vkllm_status;

    pub fn vkllm_model_params_init(params: *mut vkllm_model_params);
    pub fn vkllm_model_load(
        runtime: *mut vkllm_runtime,
        path: *const c_char,
        params: *const vkllm_model_params,
        out: *mut *mut vkllm_model,
    ) -> vkllm_status;
    pub fn vkllm_model_destroy(model: *mut vkllm_model);
    pub fn vkllm_model_get_tokenizer(model: *const vkllm_model) -> *const vkllm_tokenizer;
    pub fn vkllm_model_get_info(
        model: *const vkllm_model,
        out: *mut vkllm_model_info,
    ) -> vkllm_status;
    pub fn vkllm_model_get_chat_template(model: *const vkllm_model) -> *const c_char;

    pub fn vkllm_session_params_init(params: *mut vkllm_session_params);
    pub fn vkllm_session_create(
        model: *mut vkllm_model,
        params: *const vkllm_session_params,
        out: *mut *mut vkllm_session,
    ) -> vkllm_status;
    pub fn vkllm_session_destroy(session: *mut vkllm_session);
    pub fn vkllm_session_reset(session: *mut vkllm_session, seq: i32) -> vkllm_status;
    pub fn vkllm_session_truncate(
        session: *mut vkllm_session,
        seq: u32,
        n_keep: u32,
    ) -> vkllm_status;
    pub fn vkllm_session_get_position(
        session: *const vkllm_session,
        seq: u32,
        n_past: *mut u32,
    ) -> vkllm_status;
    pub fn vkllm_session_eval(
        session: *mut vkllm_session,
        seq: u32,
        tokens: *const i32,
        n: usize,
        logits: *mut f32,
    ) -> vkllm_status;
    pub fn vkllm_eval_params_init(params: *mut vkllm_eval_params);
    pub fn vkllm_session_eval_logits(
        session: *mut vkllm_session,
        seq: u32,
        tokens: *const i32,
        n: usize,
        params: *const vkllm_eval_params,
        out: *mut f32,
    ) -> vkllm_status;
    pub fn vkllm_session_decode(
        session: *mut vkllm_session,
        seqs: *const u32,
        tokens: *const i32,
        n: usize,
        logits: *mut f32,
    ) -> vkllm_status;
    pub fn vkllm_session_decode_greedy(
        session: *mut vkllm_session,
        seqs: *const u32,
        tokens: *const i32,
        n: usize,
        steps: u32,
        out: *mut i32,
    ) -> vkllm_status;
    pub fn vkllm_session_get_stats(
        session: *const vkllm_session,
        out: *mut vkllm_session_stats,
    ) -> vkllm_status;
    pub fn vkllm_session_get_layer_kv_bytes(
        session: *const vkllm_session,
        layer: u32,
        bytes: *mut u64,
    ) -> vkllm_status;
    pub fn vkllm_session_get_profile(
        session: *const vkllm_session,
        out: *mut vkllm_kernel_time,
        capacity: usize,
        count: *mut usize,
    ) -> vkllm_status;

    pub fn vkllm_session_get_state_size(
        session: *const vkllm_session,
        seq: u32,
        size: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_session_state_save(
        session: *mut vkllm_session,
        seq: u32,
        buf: *mut c_void,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_session_state_load(
        session: *mut vkllm_session,
        seq: u32,
        data: *const c_void,
        size: usize,
    ) -> vkllm_status;
    pub fn vkllm_session_state_save_file(
        session: *mut vkllm_session,
        seq: u32,
        path: *const c_char,
    ) -> vkllm_status;
    pub fn vkllm_session_state_load_file(
        session: *mut vkllm_session,
        seq: u32,
        path: *const c_char,
    ) -> vkllm_status;
    pub fn vkllm_session_fork(
        session: *mut vkllm_session,
        src_seq: u32,
        dst_seq: u32,
        n_keep: u32,
    ) -> vkllm_status;
    pub fn vkllm_session_get_tokens(
        session: *const vkllm_session,
        seq: u32,
        tokens: *mut i32,
        capacity: usize,
        count: *mut usize,
    ) -> vkllm_status;

    pub fn vkllm_sampling_params_init(params: *mut vkllm_sampling_params);
    pub fn vkllm_generate_params_init(params: *mut vkllm_generate_params);
    pub fn vkllm_session_generate(
        session: *mut vkllm_session,
        prompt: *const i32,
        n_prompt: usize,
        sampling: *const vkllm_sampling_params,
        params: *const vkllm_generate_params,
        result: *mut vkllm_generate_result,
    ) -> vkllm_status;

    pub fn vkllm_sampler_create(
        tokenizer: *const vkllm_tokenizer,
        params: *const vkllm_sampling_params,
        out: *mut *mut vkllm_sampler,
    ) -> vkllm_status;
    pub fn vkllm_sampler_destroy(sampler: *mut vkllm_sampler);
    pub fn vkllm_sampler_sample(
        sampler: *mut vkllm_sampler,
        logits: *const f32,
        n_vocab: usize,
        token: *mut i32,
    ) -> vkllm_status;
    pub fn vkllm_sampler_accept(sampler: *mut vkllm_sampler, token: i32) -> vkllm_status;
    pub fn vkllm_sampler_reset(sampler: *mut vkllm_sampler) -> vkllm_status;
    pub fn vkllm_sampler_get_seed(sampler: *const vkllm_sampler, seed: *mut u64) -> vkllm_status;
    pub fn vkllm_session_cancel(session: *mut vkllm_session) -> vkllm_status;
    pub fn vkllm_session_get_info(
        session: *const vkllm_session,
        out: *mut vkllm_session_info,
    ) -> vkllm_status;
    pub fn vkllm_session_generate_batch(
        session: *mut vkllm_session,
        seqs: *mut vkllm_batch_sequence,
        n_seqs: usize,
        params: *const vkllm_generate_params,
    ) -> vkllm_status;
    pub fn vkllm_model_get_gguf(model: *const vkllm_model) -> *const vkllm_gguf;

    pub fn vkllm_grammar_create(
        tokenizer: *const vkllm_tokenizer,
        gbnf: *const c_char,
        root: *const c_char,
        out: *mut *mut vkllm_grammar,
    ) -> vkllm_status;
    pub fn vkllm_grammar_create_from_json_schema(
        tokenizer: *const vkllm_tokenizer,
        schema: *const c_char,
        out: *mut *mut vkllm_grammar,
    ) -> vkllm_status;
    pub fn vkllm_json_schema_to_gbnf(
        schema: *const c_char,
        buf: *mut c_char,
        capacity: usize,
        length: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_grammar_destroy(grammar: *mut vkllm_grammar);
    pub fn vkllm_sampler_get_grammar_progress(
        sampler: *const vkllm_sampler,
        progress: *mut vkllm_grammar_progress,
    ) -> vkllm_status;
    pub fn vkllm_sampler_accept_prompt(
        sampler: *mut vkllm_sampler,
        tokens: *const i32,
        n: usize,
    ) -> vkllm_status;
    pub fn vkllm_sampler_apply_grammar(
        sampler: *mut vkllm_sampler,
        logits: *mut f32,
        n_vocab: usize,
    ) -> vkllm_status;
}

// ---------------------------------------------------------------------------------------------
// Conversations: multi-turn chat on a session (issue 37)
// ---------------------------------------------------------------------------------------------

#[repr(C)]
pub struct vkllm_conversation {
    _private: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct vkllm_conversation_params {
    pub struct_size: usize,
    pub seq: u32,
    pub template_source: *const c_char,
    pub template_name: *const c_char,
    pub tools: *const c_char,
    pub extra: *const c_char,
    pub now: i64,
}

pub type vkllm_chat_piece_kind = i32;
pub const VKLLM_CHAT_PIECE_CONTENT: vkllm_chat_piece_kind = 0;
pub const VKLLM_CHAT_PIECE_REASONING: vkllm_chat_piece_kind = 1;
pub const VKLLM_CHAT_PIECE_TOOL_CALL: vkllm_chat_piece_kind = 2;

pub type vkllm_chat_piece_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        kind: vkllm_chat_piece_kind,
        text: *const c_char,
        length: usize,
        call: *const vkllm_tool_call,
    ) -> i32,
>;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct vkllm_conversation_reply_params {
    pub struct_size: usize,
    pub max_tokens: u32,
    pub on_piece: vkllm_chat_piece_fn,
    pub user_data: *mut c_void,
    pub stop: *const *const c_char,
    pub n_stop: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct vkllm_conversation_result {
    pub struct_size: usize,
    pub n_prompt: usize,
    pub n_reused: usize,
    pub n_prefilled: usize,
    pub n_generated: usize,
    pub stop_reason: vkllm_stop_reason,
    pub n_tool_calls: usize,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub seed: u64,
    pub grammar_progress: vkllm_grammar_progress,
}

extern "C" {
    pub fn vkllm_conversation_params_init(params: *mut vkllm_conversation_params);
    pub fn vkllm_conversation_create(
        session: *mut vkllm_session,
        params: *const vkllm_conversation_params,
        out: *mut *mut vkllm_conversation,
    ) -> vkllm_status;
    pub fn vkllm_conversation_destroy(conversation: *mut vkllm_conversation);
    pub fn vkllm_conversation_add(
        conversation: *mut vkllm_conversation,
        turn: *const vkllm_chat_turn,
    ) -> vkllm_status;
    pub fn vkllm_conversation_add_json(
        conversation: *mut vkllm_conversation,
        messages_json: *const c_char,
    ) -> vkllm_status;
    pub fn vkllm_conversation_get_count(
        conversation: *const vkllm_conversation,
        count: *mut usize,
    ) -> vkllm_status;
    pub fn vkllm_conversation_get_message(
        conversation: *const vkllm_conversation,
        index: usize,
        out: *mut vkllm_chat_turn,
    ) -> vkllm_status;
    pub fn vkllm_conversation_truncate(
        conversation: *mut vkllm_conversation,
        n_keep: usize,
    ) -> vkllm_status;
    pub fn vkllm_conversation_reply_params_init(params: *mut vkllm_conversation_reply_params);
    pub fn vkllm_conversation_reply(
        conversation: *mut vkllm_conversation,
        sampling: *const vkllm_sampling_params,
        params: *const vkllm_conversation_reply_params,
        result: *mut vkllm_conversation_result,
    ) -> vkllm_status;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    // Layouts that a mistyped field would shift (x86-64 / aarch64 LP64).
    #[test]
    fn struct_layouts_match_the_header() {
        // The numbers are what a C compiler gives for include/vkllm.h.
        assert_eq!(offset_of!(vkllm_generate_params, on_token), 40);
        assert_eq!(offset_of!(vkllm_generate_params, steps_per_submit), 64);
        assert_eq!(offset_of!(vkllm_generate_params, ignore_eog), 68);
        assert_eq!(offset_of!(vkllm_generate_params, on_logprobs), 72);
        assert_eq!(offset_of!(vkllm_generate_params, top_logprobs), 80);
        assert_eq!(size_of::<vkllm_generate_params>(), 88);
        assert_eq!(offset_of!(vkllm_eval_params, kind), 8);
        assert_eq!(offset_of!(vkllm_eval_params, positions), 16);
        assert_eq!(size_of::<vkllm_eval_params>(), 32);
        assert_eq!(size_of::<vkllm_token_logprob>(), 8);
        assert_eq!(size_of::<vkllm_sampling_params>(), 80);
        assert_eq!(offset_of!(vkllm_sampling_params, logit_bias), 56);
        assert_eq!(offset_of!(vkllm_sampling_params, grammar), 72);
        assert_eq!(size_of::<vkllm_logit_bias>(), 8);
        assert_eq!(size_of::<vkllm_generate_result>(), 64);
        assert_eq!(offset_of!(vkllm_generate_result, grammar_progress), 56);
        assert_eq!(offset_of!(vkllm_runtime_stats, tuned_shapes), 64);
        assert_eq!(size_of::<vkllm_runtime_stats>(), 72);
        assert_eq!(offset_of!(vkllm_tune_result, default_us), 24);
        assert_eq!(offset_of!(vkllm_tune_result, file_written), 48);
        assert_eq!(size_of::<vkllm_tune_result>(), 56);
        assert_eq!(size_of::<vkllm_session_info>(), 48);
        assert_eq!(offset_of!(vkllm_session_info, kv_cache_bytes), 32);
        assert_eq!(size_of::<vkllm_batch_sequence>(), 64);
        assert_eq!(offset_of!(vkllm_batch_sequence, stop_reason), 56);
        assert_eq!(size_of::<vkllm_runtime_params>(), 64);
        assert_eq!(size_of::<vkllm_coopmat_shape>(), 32);
        assert_eq!(offset_of!(vkllm_device_info, cooperative_matrix), 1052);
        assert_eq!(offset_of!(vkllm_device_info, coopmat_shape), 1056);
        assert_eq!(offset_of!(vkllm_device_info, coopmat_shape_count), 1088);
        assert_eq!(offset_of!(vkllm_device_info, coopmat_shapes), 1092);
        assert_eq!(size_of::<vkllm_device_info>(), 2120);
        assert_eq!(size_of::<vkllm_model_summary>(), 856);
        assert_eq!(size_of::<vkllm_model_info>(), 128);
        assert_eq!(offset_of!(vkllm_model_info, tensor_bytes), 120);
        assert_eq!(offset_of!(vkllm_session_params, kv_type), 28);
        assert_eq!(size_of::<vkllm_session_params>(), 32);
        assert_eq!(size_of::<vkllm_tokenizer_info>(), 104);
        assert_eq!(size_of::<vkllm_tensor_info>(), 96);
        assert_eq!(size_of::<vkllm_tool_call>(), 24);
        assert_eq!(size_of::<vkllm_chat_turn>(), 64);
        assert_eq!(offset_of!(vkllm_chat_params, add_generation_prompt), 48);
        assert_eq!(offset_of!(vkllm_chat_params, now), 72);
        assert_eq!(size_of::<vkllm_chat_params>(), 80);
        assert_eq!(offset_of!(vkllm_reply_part, n_tool_calls), 32);
        assert_eq!(size_of::<vkllm_reply_part>(), 40);
        assert_eq!(size_of::<vkllm_kernel_time>(), 24);
        assert_eq!(size_of::<vkllm_conversation_params>(), 56);
        assert_eq!(size_of::<vkllm_conversation_reply_params>(), 48);
        assert_eq!(offset_of!(vkllm_conversation_result, stop_reason), 40);
        assert_eq!(offset_of!(vkllm_conversation_result, grammar_progress), 80);
        assert_eq!(size_of::<vkllm_conversation_result>(), 88);
    }

    #[test]
    fn linked_library_has_our_major_version() {
        // SAFETY: vkllm_version has no preconditions.
        let v = unsafe { vkllm_version() };
        assert_eq!(v / 10000, VKLLM_VERSION_MAJOR);
    }
}
