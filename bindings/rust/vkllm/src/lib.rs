//! Safe Rust API for libvkllm, an embeddable LLM inference library on Vulkan.
//!
//! ```no_run
//! use vkllm::{Model, Runtime, Sampling, Session};
//!
//! let runtime = Runtime::new()?;
//! let model = Model::load(&runtime, "model.gguf")?; // Err(Error { status: Status::Io, .. }) if missing
//! let prompt = model.tokenize("Once upon a time")?;
//! let mut session = Session::new(&model, 512)?;
//! session.generate(&prompt, &Sampling::greedy(), 32, |piece| { print!("{piece}"); true })?;
//! session.reset()?;
//! for token in session.tokens(&prompt, 32) { println!("{}", token?); } // greedy, step by step
//! # Ok::<(), vkllm::Error>(())
//! ```
//!
//! Handles are owned: dropping a [`Runtime`], [`Model`] or [`Session`] releases it. The library
//! reference-counts them (a session keeps its model alive, a model its runtime), so their
//! drop order does not matter.

use std::any::Any;
use std::ffi::{c_char, c_void, CStr, CString};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

mod chat;
mod control;
mod conversation;
mod device;
mod gguf;
mod grammar;
mod lowlevel;
mod reply;
mod tokenizer;
pub use chat::{chat_apply_template, chat_render, chat_render_json, ChatOptions, ChatTurn};
pub use control::{CancelHandle, KvType, Sampler, SessionInfo, SEED_RANDOM};
pub use conversation::{ChatPiece, ChatReply, Conversation, ConversationOptions};
pub use device::{
    devices, version_string, ComponentType, CoopmatShape, CoopmatUse, DeviceInfo, DeviceType,
    RuntimeStats, SelfCheck, TuneResult,
};
pub use gguf::{ggml_type_name, Gguf, GgufKey, GgufType, ModelSummary, TensorInfo};
pub use grammar::{json_schema_to_gbnf, Grammar, GrammarProgress, Vocabulary};
pub use lowlevel::{KernelTime, SessionOptions, SessionStats};
pub use reply::{prompt_opens_reasoning, ReplyFormat, ReplyParser, ReplyPart, ToolCall};
pub use tokenizer::{Detokenizer, Tokenizer, TokenizerInfo};

pub use sys::VKLLM_VERSION_NUMBER as VERSION_NUMBER;

/// A library status code other than OK (`vkllm_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    InvalidArgument,
    NoDevice,
    OutOfHostMemory,
    OutOfDeviceMemory,
    Vulkan,
    DeviceLost,
    Io,
    Format,
    Unsupported,
    BufferTooSmall,
    ContextFull,
    Cancelled,
    Internal,
    NotFound,
    /// A code appended to the library after these bindings were written.
    Other(i32),
}

impl Status {
    fn from_raw(code: sys::vkllm_status) -> Status {
        match code {
            sys::VKLLM_ERR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::VKLLM_ERR_NO_DEVICE => Status::NoDevice,
            sys::VKLLM_ERR_OUT_OF_HOST_MEMORY => Status::OutOfHostMemory,
            sys::VKLLM_ERR_OUT_OF_DEVICE_MEMORY => Status::OutOfDeviceMemory,
            sys::VKLLM_ERR_VULKAN => Status::Vulkan,
            sys::VKLLM_ERR_DEVICE_LOST => Status::DeviceLost,
            sys::VKLLM_ERR_IO => Status::Io,
            sys::VKLLM_ERR_FORMAT => Status::Format,
            sys::VKLLM_ERR_UNSUPPORTED => Status::Unsupported,
            sys::VKLLM_ERR_BUFFER_TOO_SMALL => Status::BufferTooSmall,
            sys::VKLLM_ERR_CONTEXT_FULL => Status::ContextFull,
            sys::VKLLM_ERR_CANCELLED => Status::Cancelled,
            sys::VKLLM_ERR_INTERNAL => Status::Internal,
            sys::VKLLM_ERR_NOT_FOUND => Status::NotFound,
            other => Status::Other(other),
        }
    }

    /// The numeric `vkllm_status` value (stable across releases).
    pub fn code(self) -> i32 {
        match self {
            Status::InvalidArgument => sys::VKLLM_ERR_INVALID_ARGUMENT,
            Status::NoDevice => sys::VKLLM_ERR_NO_DEVICE,
            Status::OutOfHostMemory => sys::VKLLM_ERR_OUT_OF_HOST_MEMORY,
            Status::OutOfDeviceMemory => sys::VKLLM_ERR_OUT_OF_DEVICE_MEMORY,
            Status::Vulkan => sys::VKLLM_ERR_VULKAN,
            Status::DeviceLost => sys::VKLLM_ERR_DEVICE_LOST,
            Status::Io => sys::VKLLM_ERR_IO,
            Status::Format => sys::VKLLM_ERR_FORMAT,
            Status::Unsupported => sys::VKLLM_ERR_UNSUPPORTED,
            Status::BufferTooSmall => sys::VKLLM_ERR_BUFFER_TOO_SMALL,
            Status::ContextFull => sys::VKLLM_ERR_CONTEXT_FULL,
            Status::Cancelled => sys::VKLLM_ERR_CANCELLED,
            Status::Internal => sys::VKLLM_ERR_INTERNAL,
            Status::NotFound => sys::VKLLM_ERR_NOT_FOUND,
            Status::Other(code) => code,
        }
    }

    /// The library's short description ("i/o error", ...).
    pub fn description(self) -> String {
        // SAFETY: vkllm_status_string accepts any value and returns static, NUL-terminated text.
        unsafe { cstr_to_string(sys::vkllm_status_string(self.code())) }
    }
}

/// A failed call: its status and the library's detailed message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status.description())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Copies a NUL-terminated string; NULL gives "".
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
unsafe fn cstr_to_string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// Maps a status to a Result, reading the thread-local message of a failure. Must be called
/// right after the failing call, on its thread (always so here: calls are synchronous).
fn check(code: sys::vkllm_status) -> Result<()> {
    if code == sys::VKLLM_OK {
        return Ok(());
    }
    // SAFETY: vkllm_last_error never returns NULL; we copy the text before any other call.
    let message = unsafe { cstr_to_string(sys::vkllm_last_error()) };
    Err(Error {
        status: Status::from_raw(code),
        message,
    })
}

fn invalid_argument(message: &str) -> Error {
    Error {
        status: Status::InvalidArgument,
        message: message.to_owned(),
    }
}

/// The version of the loaded library, as `VERSION_NUMBER` encodes it.
pub fn version() -> u32 {
    // SAFETY: no preconditions.
    unsafe { sys::vkllm_version() }
}

/// A Vulkan device with its memory and compiled kernels (`vkllm_runtime`).
pub struct Runtime {
    raw: NonNull<sys::vkllm_runtime>,
}

// SAFETY: vkllm.h, THREAD SAFETY: "vkllm_runtime ... may be used from several threads at once
// (destroying one must not race with its other uses)". Destruction happens in Drop, which
// needs ownership, so no other use can race with it.
unsafe impl Send for Runtime {}
// SAFETY: same rule; every &self method maps to a function allowed concurrently.
unsafe impl Sync for Runtime {}

impl Runtime {
    /// A runtime on the best usable device (or the one named by $VKLLM_DEVICE).
    pub fn new() -> Result<Runtime> {
        Self::create(-1, None)
    }

    /// A runtime on the device at `index` in the library's enumeration order.
    pub fn with_device(index: u32) -> Result<Runtime> {
        let index = i32::try_from(index).map_err(|_| invalid_argument("device index too large"))?;
        Self::create(index, None)
    }

    fn create(device_index: i32, device_name: Option<&CStr>) -> Result<Runtime> {
        // SAFETY: an all-zero vkllm_runtime_params is a valid value (NULL pointers, None
        // callbacks); init then fills the defaults.
        let mut params: sys::vkllm_runtime_params = unsafe { std::mem::zeroed() };
        let mut out = ptr::null_mut();
        // SAFETY: params is initialised by the library, and the strings outlive the call.
        unsafe {
            sys::vkllm_runtime_params_init(&mut params);
            params.device_index = device_index;
            params.device_name = device_name.map_or(ptr::null(), CStr::as_ptr);
            check(sys::vkllm_runtime_create(&params, &mut out))?;
        }
        NonNull::new(out)
            .map(|raw| Runtime { raw })
            .ok_or_else(|| invalid_argument("vkllm_runtime_create returned NULL"))
    }

    /// The name of the device ("llvmpipe (LLVM 15.0.6, 256 bits)", ...).
    pub fn device_name(&self) -> Result<String> {
        // SAFETY: zeroed is valid for this plain struct; struct_size is set as required.
        let mut info: sys::vkllm_device_info = unsafe { std::mem::zeroed() };
        info.struct_size = std::mem::size_of::<sys::vkllm_device_info>();
        // SAFETY: valid handle and output struct; name is NUL-terminated by the library.
        unsafe {
            check(sys::vkllm_runtime_get_device_info(
                self.raw.as_ptr(),
                &mut info,
            ))?;
            Ok(cstr_to_string(info.name.as_ptr()))
        }
    }

    pub fn as_raw(&self) -> *mut sys::vkllm_runtime {
        self.raw.as_ptr()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // SAFETY: we own this reference; models keep the device alive by their own.
        unsafe { sys::vkllm_runtime_destroy(self.raw.as_ptr()) }
    }
}

/// Weights on a runtime's device, immutable, shared by sessions (`vkllm_model`).
pub struct Model {
    raw: NonNull<sys::vkllm_model>,
}

// SAFETY: vkllm.h, THREAD SAFETY and "Models": a vkllm_model (and its tokenizer) "may be used
// from several threads at once"; "any number of sessions, on any threads, may use it".
// Destruction happens in Drop, which needs ownership, so it cannot race with other uses.
unsafe impl Send for Model {}
// SAFETY: same rule; every &self method maps to a function allowed concurrently.
unsafe impl Sync for Model {}

impl Model {
    /// Loads a GGUF model onto the runtime's device. The model keeps the runtime alive.
    pub fn load(runtime: &Runtime, path: impl AsRef<Path>) -> Result<Model> {
        let path = path_to_cstring(path.as_ref())?;
        let mut out = ptr::null_mut();
        // SAFETY: valid runtime handle and path string; params NULL means defaults.
        unsafe {
            check(sys::vkllm_model_load(
                runtime.raw.as_ptr(),
                path.as_ptr(),
                ptr::null(),
                &mut out,
            ))?;
        }
        NonNull::new(out)
            .map(|raw| Model { raw })
            .ok_or_else(|| invalid_argument("vkllm_model_load returned NULL"))
    }

    /// Tokenizes text, adding BOS where the model asks for it. Special tokens stay text: a
    /// rendered chat needs [`tokenize_with`](Model::tokenize_with) and PARSE_SPECIAL (a
    /// [`Conversation`](crate::Conversation) does that itself).
    pub fn tokenize(&self, text: &str) -> Result<Vec<i32>> {
        self.tokenizer().tokenize(text)
    }

    /// Tokenizes text with `VKLLM_TOKENIZE_*` flags (e.g. ADD_SPECIAL | PARSE_SPECIAL for chat
    /// prompts).
    pub fn tokenize_with(&self, text: &str, flags: u32) -> Result<Vec<i32>> {
        self.tokenizer().tokenize_with(text, flags)
    }

    /// The text of a sequence of tokens (control tokens produce none).
    pub fn detokenize(&self, tokens: &[i32]) -> Result<String> {
        self.tokenizer().detokenize(tokens)
    }

    /// Whether generation stops at this token (EOS, EOT, <|im_end|>...).
    pub fn is_end_of_generation(&self, token: i32) -> Result<bool> {
        self.tokenizer().is_end_of_generation(token)
    }

    /// Vocabulary size (the length of a logits row).
    pub fn n_vocab(&self) -> Result<usize> {
        model_n_vocab(self.raw.as_ptr())
    }

    pub fn as_raw(&self) -> *mut sys::vkllm_model {
        self.raw.as_ptr()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: we own this reference; sessions keep the model alive by their own.
        unsafe { sys::vkllm_model_destroy(self.raw.as_ptr()) }
    }
}

fn path_to_cstring(path: &Path) -> Result<CString> {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    CString::new(bytes).map_err(|_| invalid_argument("path contains a NUL byte"))
}

fn tokenize(tok: *const sys::vkllm_tokenizer, text: &str, flags: u32) -> Result<Vec<i32>> {
    let mut ids: Vec<i32> = vec![0; text.len() + 8];
    loop {
        let mut n = 0usize;
        // SAFETY: text is valid for text.len() bytes, ids for ids.len() entries.
        let code = unsafe {
            sys::vkllm_tokenizer_encode(
                tok,
                text.as_ptr().cast(),
                text.len(),
                flags,
                ids.as_mut_ptr(),
                ids.len(),
                &mut n,
            )
        };
        if code == sys::VKLLM_ERR_BUFFER_TOO_SMALL {
            ids.resize(n, 0);
            continue;
        }
        check(code)?;
        ids.truncate(n);
        return Ok(ids);
    }
}

fn is_end_of_generation(tok: *const sys::vkllm_tokenizer, token: i32) -> Result<bool> {
    let mut out = 0i32;
    // SAFETY: valid tokenizer (owned by a live model) and output pointer.
    check(unsafe { sys::vkllm_tokenizer_is_end_of_generation(tok, token, &mut out) })?;
    Ok(out != 0)
}

fn model_n_vocab(model: *const sys::vkllm_model) -> Result<usize> {
    // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
    let mut info: sys::vkllm_model_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<sys::vkllm_model_info>();
    // SAFETY: valid handle and output struct.
    check(unsafe { sys::vkllm_model_get_info(model, &mut info) })?;
    Ok(info.n_vocab as usize)
}

/// How the next token is chosen (`vkllm_sampling_params`): llama.cpp's chain of logit bias,
/// penalties, top-k, typical, top-p, min-p and temperature.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    /// <= 0: greedy (argmax on the device).
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub repeat_last_n: i32,
    /// [`SEED_RANDOM`]: a seed drawn from the system (reported in [`Generation::seed`]).
    pub seed: u64,
    pub presence_penalty: f32,
    pub frequency_penalty: f32,
    /// >= 1: off.
    pub typical_p: f32,
    /// (token, bias) pairs; `f32::NEG_INFINITY` bans the token.
    pub logit_bias: Vec<(i32, f32)>,
    /// The language the generated text must belong to (None: any text). A generation with a
    /// grammar stops with [`StopReason::EndOfGeneration`] when the model ends a complete text
    /// or when nothing more can follow.
    pub grammar: Option<Grammar>,
}

impl Default for Sampling {
    /// The library's defaults (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05).
    fn default() -> Sampling {
        let mut raw = sys::vkllm_sampling_params::default();
        // SAFETY: init fills a valid struct.
        unsafe { sys::vkllm_sampling_params_init(&mut raw) };
        Sampling {
            temperature: raw.temperature,
            top_k: raw.top_k,
            top_p: raw.top_p,
            min_p: raw.min_p,
            repeat_penalty: raw.repeat_penalty,
            repeat_last_n: raw.repeat_last_n,
            seed: raw.seed,
            presence_penalty: raw.presence_penalty,
            frequency_penalty: raw.frequency_penalty,
            typical_p: raw.typical_p,
            logit_bias: Vec::new(),
            grammar: None,
        }
    }
}

impl Sampling {
    /// Always the most likely token.
    pub fn greedy() -> Sampling {
        Sampling {
            temperature: 0.0,
            ..Sampling::default()
        }
    }

    /// The C params; they point into `biases` and to `self`'s grammar, which must outlive
    /// their use.
    fn to_raw(&self, biases: &mut Vec<sys::vkllm_logit_bias>) -> sys::vkllm_sampling_params {
        *biases = self
            .logit_bias
            .iter()
            .map(|&(token, bias)| sys::vkllm_logit_bias { token, bias })
            .collect();
        let mut raw = sys::vkllm_sampling_params::default();
        // SAFETY: init fills a valid struct (struct_size included).
        unsafe { sys::vkllm_sampling_params_init(&mut raw) };
        raw.temperature = self.temperature;
        raw.top_k = self.top_k;
        raw.top_p = self.top_p;
        raw.min_p = self.min_p;
        raw.repeat_penalty = self.repeat_penalty;
        raw.repeat_last_n = self.repeat_last_n;
        raw.seed = self.seed;
        raw.presence_penalty = self.presence_penalty;
        raw.frequency_penalty = self.frequency_penalty;
        raw.typical_p = self.typical_p;
        raw.logit_bias = biases.as_ptr();
        raw.n_logit_bias = biases.len();
        raw.grammar = self.grammar.as_ref().map_or(ptr::null(), Grammar::as_raw);
        raw
    }
}

/// What bounds a generation besides the sampling (the rest of `vkllm_generate_params`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenerateOptions {
    /// At most this many tokens. 0 only prefills: the prompt goes into the cache, nothing is
    /// sampled or passed to the callback, and the position grows by the prompt's length.
    pub max_tokens: u32,
    /// End-of-generation tokens are generated and decoded like any other token, so only
    /// `max_tokens` or the callback ends the generation: for benchmarks and for comparisons
    /// with runners that continue past an end token.
    pub ignore_eog: bool,
}

impl Default for GenerateOptions {
    /// The library's defaults (256 tokens, stopping at an end token).
    fn default() -> GenerateOptions {
        // SAFETY: zeroed is valid (NULL pointers, None callbacks).
        let mut raw: sys::vkllm_generate_params = unsafe { std::mem::zeroed() };
        // SAFETY: init fills a valid struct.
        unsafe { sys::vkllm_generate_params_init(&mut raw) };
        GenerateOptions {
            max_tokens: raw.max_tokens,
            ignore_eog: raw.ignore_eog != 0,
        }
    }
}

/// Why a generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    EndOfGeneration,
    MaxTokens,
    StopString,
    /// The callback returned `false`.
    Cancelled,
    Other(i32),
}

/// What [`Session::generate`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Generation {
    pub n_prompt: usize,
    pub n_generated: usize,
    pub stop_reason: StopReason,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    /// The sampling seed used (the one drawn for [`SEED_RANDOM`]).
    pub seed: u64,
    /// Whether the text is a finished string of the sampling grammar:
    /// [`GrammarProgress::Incomplete`] when `max_tokens`, a stop string or a cancel cut it
    /// short, so it must not be parsed as the grammar's language. `Complete` without a grammar.
    pub grammar_progress: GrammarProgress,
}

/// What [`Session::eval_logits`] writes for each row (`vkllm_logits_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogitsKind {
    /// The logits, as [`Session::eval`] returns them.
    Raw,
    /// Log-probabilities: the log-softmax of the logits over the tokenizer's ids, before
    /// temperature or penalties; padded ids past them are `-inf`.
    LogSoftmax,
}

/// The most alternatives a generated token reports (`VKLLM_MAX_TOP_LOGPROBS`).
pub const MAX_TOP_LOGPROBS: u32 = sys::VKLLM_MAX_TOP_LOGPROBS as u32;

/// A generated token's log-probability in the model's distribution (the log-softmax of the raw
/// logits over the tokenizer's ids, before temperature and penalties), and the most likely
/// tokens at its position, most likely first (lowest id first on ties).
#[derive(Clone, Debug, PartialEq)]
pub struct TokenLogprobs {
    pub token: i32,
    pub logprob: f32,
    /// (token, log-probability) pairs.
    pub top: Vec<(i32, f32)>,
}

/// KV caches of a sequence and the recorded steps (`vkllm_session`, one sequence).
pub struct Session {
    raw: NonNull<sys::vkllm_session>,
    /// The session keeps its model alive in the library, so this stays valid while we live.
    model: *mut sys::vkllm_model,
    /// Shared with the [`CancelHandle`]s; emptied before the session is destroyed.
    cancel: control::CancelTarget,
}

// SAFETY: vkllm.h, THREAD SAFETY: "A vkllm_session ... [is] used by one thread at a time;
// different sessions of one model may run on different threads at once". Moving a session to
// another thread is that. It is not Sync: two threads must not use one session at once, even
// through &self (vkllm_session_get_position takes a const pointer but is still a use).
unsafe impl Send for Session {}

struct Callback<'a> {
    on_piece: &'a mut dyn FnMut(&str) -> bool,
    panic: Option<Box<dyn Any + Send + 'static>>,
    logprobs: Vec<TokenLogprobs>,
}

/// The C on_logprobs callback: keeps each report for `generate_with_logprobs`.
unsafe extern "C" fn on_logprobs_trampoline(
    user_data: *mut c_void,
    token: i32,
    logprob: f32,
    top: *const sys::vkllm_token_logprob,
    n_top: usize,
) -> i32 {
    // SAFETY: user_data is the &mut Callback that generate passed, alive during the call.
    let cb = unsafe { &mut *user_data.cast::<Callback>() };
    let top: &[sys::vkllm_token_logprob] = if top.is_null() || n_top == 0 {
        &[]
    } else {
        // SAFETY: the library gives `n_top` valid entries at `top` during the call.
        unsafe { std::slice::from_raw_parts(top, n_top) }
    };
    cb.logprobs.push(TokenLogprobs {
        token,
        logprob,
        top: top.iter().map(|t| (t.token, t.logprob)).collect(),
    });
    i32::from(cb.panic.is_some())
}

/// The C on_token callback: never lets a panic unwind into the library; it stops the
/// generation instead, and `generate` resumes the panic once the library has returned.
unsafe extern "C" fn on_token_trampoline(
    user_data: *mut c_void,
    _token: i32,
    text: *const c_char,
    length: usize,
) -> i32 {
    // SAFETY: user_data is the &mut Callback that generate passed, alive during the call.
    let cb = unsafe { &mut *user_data.cast::<Callback>() };
    if cb.panic.is_some() {
        return 1;
    }
    let bytes: &[u8] = if text.is_null() || length == 0 {
        &[]
    } else {
        // SAFETY: the library gives `length` valid bytes at `text` during the call.
        unsafe { std::slice::from_raw_parts(text.cast::<u8>(), length) }
    };
    let piece = String::from_utf8_lossy(bytes);
    match panic::catch_unwind(AssertUnwindSafe(|| (cb.on_piece)(&piece))) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(payload) => {
            cb.panic = Some(payload);
            1
        }
    }
}

impl Session {
    /// A session with one sequence of `n_ctx` KV slots (0: the model's training context).
    /// It keeps the model alive.
    pub fn new(model: &Model, n_ctx: u32) -> Result<Session> {
        Session::with_sequences(model, n_ctx, 1)
    }

    /// A session of `n_seq` sequences of `n_ctx` KV slots each (0: the model's training
    /// context, at most 4096), for [`Session::generate_batch`]. The methods that name no
    /// sequence use sequence 0.
    pub fn with_sequences(model: &Model, n_ctx: u32, n_seq: u32) -> Result<Session> {
        let mut params = sys::vkllm_session_params::default();
        let mut out = ptr::null_mut();
        // SAFETY: params initialised by the library; valid model handle.
        unsafe {
            sys::vkllm_session_params_init(&mut params);
            params.n_ctx = n_ctx;
            params.n_seq = n_seq;
            check(sys::vkllm_session_create(
                model.raw.as_ptr(),
                &params,
                &mut out,
            ))?;
        }
        NonNull::new(out)
            .map(|raw| Session {
                raw,
                model: model.raw.as_ptr(),
                cancel: control::CancelTarget::new(raw),
            })
            .ok_or_else(|| invalid_argument("vkllm_session_create returned NULL"))
    }

    /// Empties the sequence.
    pub fn reset(&mut self) -> Result<()> {
        // SAFETY: valid handle, used by this thread only (&mut).
        check(unsafe { sys::vkllm_session_reset(self.raw.as_ptr(), -1) })
    }

    /// Tokens in the cache so far.
    pub fn position(&self) -> Result<u32> {
        let mut n = 0u32;
        // SAFETY: valid handle; Session is not Sync, so no other thread uses it now.
        check(unsafe { sys::vkllm_session_get_position(self.raw.as_ptr(), 0, &mut n) })?;
        Ok(n)
    }

    /// Appends `tokens` to the cache and returns the logits after the last one.
    pub fn eval(&mut self, tokens: &[i32]) -> Result<Vec<f32>> {
        self.eval_seq(0, tokens)
    }

    /// Sequence `seq`'s state (KV cache, position, token ids), for `load_state` on any
    /// session of the same model.
    pub fn save_state(&mut self, seq: u32) -> Result<Vec<u8>> {
        let mut size = 0usize;
        // SAFETY: valid handle, used by this thread only (&mut); out-pointers valid.
        check(unsafe { sys::vkllm_session_get_state_size(self.raw.as_ptr(), seq, &mut size) })?;
        let mut bytes = vec![0u8; size];
        // SAFETY: `bytes` holds `size` writable bytes for the call.
        check(unsafe {
            sys::vkllm_session_state_save(
                self.raw.as_ptr(),
                seq,
                bytes.as_mut_ptr().cast(),
                bytes.len(),
                &mut size,
            )
        })?;
        bytes.truncate(size);
        Ok(bytes)
    }

    /// Replaces sequence `seq` with a saved state; an error (`Status::Format`,
    /// `Status::InvalidArgument`) leaves the sequence unchanged.
    pub fn load_state(&mut self, seq: u32, state: &[u8]) -> Result<()> {
        // SAFETY: valid handle (&mut); `state` readable for the call.
        check(unsafe {
            sys::vkllm_session_state_load(
                self.raw.as_ptr(),
                seq,
                state.as_ptr().cast(),
                state.len(),
            )
        })
    }

    /// `save_state` into a file.
    pub fn save_state_file(&mut self, seq: u32, path: impl AsRef<Path>) -> Result<()> {
        let path = path_to_cstring(path.as_ref())?;
        // SAFETY: valid handle (&mut) and NUL-terminated path.
        check(unsafe { sys::vkllm_session_state_save_file(self.raw.as_ptr(), seq, path.as_ptr()) })
    }

    /// `load_state` from a file.
    pub fn load_state_file(&mut self, seq: u32, path: impl AsRef<Path>) -> Result<()> {
        let path = path_to_cstring(path.as_ref())?;
        // SAFETY: valid handle (&mut) and NUL-terminated path.
        check(unsafe { sys::vkllm_session_state_load_file(self.raw.as_ptr(), seq, path.as_ptr()) })
    }

    /// Replaces sequence `dst` with the first `n_keep` positions of sequence `src`, copied on
    /// the device.
    pub fn fork(&mut self, src: u32, dst: u32, n_keep: u32) -> Result<()> {
        // SAFETY: valid handle, used by this thread only (&mut).
        check(unsafe { sys::vkllm_session_fork(self.raw.as_ptr(), src, dst, n_keep) })
    }

    /// The token ids in sequence `seq`'s cache, in position order.
    pub fn cached_tokens(&self, seq: u32) -> Result<Vec<i32>> {
        let mut n = 0usize;
        // SAFETY: valid handle; capacity 0 with a NULL buffer asks for the count.
        let code = unsafe {
            sys::vkllm_session_get_tokens(self.raw.as_ptr(), seq, ptr::null_mut(), 0, &mut n)
        };
        if code != sys::VKLLM_ERR_BUFFER_TOO_SMALL {
            check(code)?;
        }
        let mut ids = vec![0i32; n];
        // SAFETY: `ids` holds `n` writable ids for the call.
        check(unsafe {
            sys::vkllm_session_get_tokens(
                self.raw.as_ptr(),
                seq,
                ids.as_mut_ptr(),
                ids.len(),
                &mut n,
            )
        })?;
        ids.truncate(n);
        Ok(ids)
    }

    /// Appends `tokens` to the cache and returns the logits (or, with `LogitsKind::LogSoftmax`,
    /// the log-probabilities) after each of `positions` (indices into `tokens`, any order), or
    /// after every token when `positions` is `None`: one row of n_vocab values each
    /// (`vkllm_session_eval_logits`).
    pub fn eval_logits(
        &mut self,
        tokens: &[i32],
        positions: Option<&[u32]>,
        kind: LogitsKind,
    ) -> Result<Vec<Vec<f32>>> {
        let n_vocab = model_n_vocab(self.model)?;
        let rows = positions.map_or(tokens.len(), <[u32]>::len);
        let mut out = vec![0f32; rows * n_vocab];
        // SAFETY: zeroed is valid (a NULL positions pointer); init fills defaults.
        let mut params: sys::vkllm_eval_params = unsafe { std::mem::zeroed() };
        // SAFETY: init writes a valid struct.
        unsafe { sys::vkllm_eval_params_init(&mut params) };
        params.kind = match kind {
            LogitsKind::Raw => sys::VKLLM_LOGITS_RAW,
            LogitsKind::LogSoftmax => sys::VKLLM_LOGITS_LOG_SOFTMAX,
        };
        if let Some(p) = positions {
            // A slice's pointer is never NULL, even when empty: NULL would mean every position.
            params.positions = p.as_ptr();
            params.n_positions = p.len();
        }
        // SAFETY: valid handle used by this thread only (&mut); tokens, positions and out
        // (rows x n_vocab floats) valid for the call.
        check(unsafe {
            sys::vkllm_session_eval_logits(
                self.raw.as_ptr(),
                0,
                tokens.as_ptr(),
                tokens.len(),
                &params,
                out.as_mut_ptr(),
            )
        })?;
        Ok(out.chunks(n_vocab.max(1)).map(<[f32]>::to_vec).collect())
    }

    /// Appends `prompt` and generates up to `max_tokens` tokens, handing each piece of text to
    /// `on_piece` (never half a UTF-8 character). `on_piece` returns `true` to go on; `false`
    /// stops the generation, which then ends with `Ok` and `StopReason::Cancelled`. A panic in
    /// `on_piece` stops the generation and is resumed here once the library has returned.
    ///
    /// `max_tokens` 0 only prefills: the prompt goes into the cache and nothing is generated
    /// (`n_generated` 0, `StopReason::MaxTokens`, `on_piece` never called); the position grows
    /// by the prompt's length, so a later `generate` continues after it (a system prompt
    /// prefilled now, answered later).
    pub fn generate<F>(
        &mut self,
        prompt: &[i32],
        sampling: &Sampling,
        max_tokens: u32,
        on_piece: F,
    ) -> Result<Generation>
    where
        F: FnMut(&str) -> bool,
    {
        let options = GenerateOptions {
            max_tokens,
            ..GenerateOptions::default()
        };
        self.generate_with(prompt, sampling, &options, on_piece)
    }

    /// [`Session::generate`] with every option.
    pub fn generate_with<F>(
        &mut self,
        prompt: &[i32],
        sampling: &Sampling,
        options: &GenerateOptions,
        on_piece: F,
    ) -> Result<Generation>
    where
        F: FnMut(&str) -> bool,
    {
        Ok(self.run(prompt, sampling, options, None, on_piece)?.0)
    }

    /// [`Session::generate_with`] that also returns each generated token's log-probability
    /// and its `top_logprobs` (0 to [`MAX_TOP_LOGPROBS`]) most likely alternatives, computed on
    /// the device (`vkllm_generate_params.on_logprobs`), in the order the tokens came.
    pub fn generate_with_logprobs<F>(
        &mut self,
        prompt: &[i32],
        sampling: &Sampling,
        options: &GenerateOptions,
        top_logprobs: u32,
        on_piece: F,
    ) -> Result<(Generation, Vec<TokenLogprobs>)>
    where
        F: FnMut(&str) -> bool,
    {
        self.run(prompt, sampling, options, Some(top_logprobs), on_piece)
    }

    /// vkllm_session_generate, with logprobs reported where `top_logprobs` is Some.
    fn run<F>(
        &mut self,
        prompt: &[i32],
        sampling: &Sampling,
        options: &GenerateOptions,
        top_logprobs: Option<u32>,
        mut on_piece: F,
    ) -> Result<(Generation, Vec<TokenLogprobs>)>
    where
        F: FnMut(&str) -> bool,
    {
        let mut biases = Vec::new();
        let raw_sampling = sampling.to_raw(&mut biases);
        let mut cb = Callback {
            on_piece: &mut on_piece,
            panic: None,
            logprobs: Vec::new(),
        };
        // SAFETY: zeroed is valid (NULL pointers, None callbacks); init fills defaults.
        let mut params: sys::vkllm_generate_params = unsafe { std::mem::zeroed() };
        let mut result = sys::vkllm_generate_result {
            struct_size: std::mem::size_of::<sys::vkllm_generate_result>(),
            ..Default::default()
        };
        // SAFETY: all pointers are valid for the call; cb outlives it; the trampoline matches
        // vkllm_token_fn and never unwinds.
        let code = unsafe {
            sys::vkllm_generate_params_init(&mut params);
            params.max_tokens = options.max_tokens;
            params.ignore_eog = i32::from(options.ignore_eog);
            params.on_token = Some(on_token_trampoline);
            if let Some(top) = top_logprobs {
                params.on_logprobs = Some(on_logprobs_trampoline);
                params.top_logprobs = i32::try_from(top).unwrap_or(i32::MAX);
            }
            params.user_data = (&mut cb as *mut Callback).cast();
            sys::vkllm_session_generate(
                self.raw.as_ptr(),
                prompt.as_ptr(),
                prompt.len(),
                &raw_sampling,
                &params,
                &mut result,
            )
        };
        if let Some(payload) = cb.panic.take() {
            panic::resume_unwind(payload);
        }
        if code != sys::VKLLM_ERR_CANCELLED {
            check(code)?;
        }
        let generation = Generation {
            n_prompt: result.n_prompt,
            n_generated: result.n_generated,
            stop_reason: match result.stop_reason {
                sys::VKLLM_STOP_END_OF_GENERATION => StopReason::EndOfGeneration,
                sys::VKLLM_STOP_MAX_TOKENS => StopReason::MaxTokens,
                sys::VKLLM_STOP_STRING => StopReason::StopString,
                sys::VKLLM_STOP_CANCELLED => StopReason::Cancelled,
                other => StopReason::Other(other),
            },
            prefill_ms: result.prefill_ms,
            decode_ms: result.decode_ms,
            seed: result.seed,
            grammar_progress: GrammarProgress::from_raw(result.grammar_progress),
        };
        Ok((generation, cb.logprobs))
    }

    /// Greedy generation as an iterator of token ids, one decode step per `next()` (through
    /// `vkllm_session_eval` and an argmax on the host). It ends after `max_tokens` tokens or
    /// before an end-of-generation token; an error is yielded once, then the iterator ends.
    /// Like `generate`, it leaves every yielded token but the last in the cache.
    pub fn tokens(&mut self, prompt: &[i32], max_tokens: u32) -> Tokens<'_> {
        Tokens {
            session: self,
            pending: prompt.to_vec(),
            remaining: max_tokens,
            done: false,
        }
    }

    pub fn as_raw(&self) -> *mut sys::vkllm_session {
        self.raw.as_ptr()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.cancel.clear();
        // SAFETY: we own this handle; no CancelHandle reaches it any more.
        unsafe { sys::vkllm_session_destroy(self.raw.as_ptr()) }
    }
}

/// Iterator of greedily generated tokens; see [`Session::tokens`].
pub struct Tokens<'s> {
    session: &'s mut Session,
    /// Tokens to feed before the next argmax: the prompt first, then the last token yielded.
    pending: Vec<i32>,
    remaining: u32,
    done: bool,
}

impl Tokens<'_> {
    fn step(&mut self) -> Result<Option<i32>> {
        let logits = self.session.eval(&self.pending)?;
        let next = argmax(&logits);
        // SAFETY: the session keeps its model (and so the tokenizer) alive.
        let tok = unsafe { sys::vkllm_model_get_tokenizer(self.session.model) };
        if is_end_of_generation(tok, next)? {
            return Ok(None);
        }
        self.pending.clear();
        self.pending.push(next);
        Ok(Some(next))
    }
}

impl Iterator for Tokens<'_> {
    type Item = Result<i32>;

    fn next(&mut self) -> Option<Result<i32>> {
        if self.done || self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        match self.step() {
            Ok(Some(token)) => Some(Ok(token)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Index of the largest value, the first of equals (as a device argmax would pick).
fn argmax(values: &[f32]) -> i32 {
    let mut best = 0usize;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] {
            best = i;
        }
    }
    best as i32
}
