//! The sampler object, cancelling a session from another thread, what a session is, batched
//! generation, and a loaded model's metadata.

use std::ffi::CString;
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex};

use crate::{check, invalid_argument, sys, GenerateOptions, Model, Result, Sampling, Session};

/// [`Sampling::seed`]: a seed read from the system once (see [`Sampler::seed`]).
pub const SEED_RANDOM: u64 = sys::VKLLM_SEED_RANDOM;

/// A sampler (`vkllm_sampler`): the chain of a [`Sampling`] with its random generator and the
/// token history its penalties read, for logits of any session row.
pub struct Sampler {
    raw: NonNull<sys::vkllm_sampler>,
}

// SAFETY: vkllm.h: "A vkllm_sampler is used by one thread at a time"; moving it to another
// thread is that. Not Sync: every method but seed changes it.
unsafe impl Send for Sampler {}

impl Sampler {
    /// A sampler whose candidates are `model`'s tokenizer ids (None: every entry of a row).
    /// With [`Sampling::grammar`] it keeps a parse state (see [`Sampler::grammar_progress`]);
    /// the grammar may be dropped afterwards.
    pub fn new(model: Option<&Model>, sampling: &Sampling) -> Result<Sampler> {
        let mut biases = Vec::new();
        let params = sampling.to_raw(&mut biases);
        let tokenizer = model.map_or(ptr::null(), |m| m.tokenizer().as_raw());
        let mut out = ptr::null_mut();
        // SAFETY: params, the biases and the grammar they point to are valid for the call
        // (the biases are copied, the grammar referenced by the sampler).
        check(unsafe { sys::vkllm_sampler_create(tokenizer, &params, &mut out) })?;
        NonNull::new(out)
            .map(|raw| Sampler { raw })
            .ok_or_else(|| invalid_argument("vkllm_sampler_create returned NULL"))
    }

    /// Chooses a token from one row of logits (the model's n_vocab floats). The choice is not
    /// recorded: [`Sampler::accept`] the token the sequence keeps.
    pub fn sample(&mut self, logits: &[f32]) -> Result<i32> {
        let mut token = 0i32;
        // SAFETY: valid handle (used by this thread only: &mut), logits valid for their length.
        check(unsafe {
            sys::vkllm_sampler_sample(self.raw.as_ptr(), logits.as_ptr(), logits.len(), &mut token)
        })?;
        Ok(token)
    }

    /// A token of the sequence (prompt or generated), for the penalties.
    pub fn accept(&mut self, token: i32) -> Result<()> {
        // SAFETY: valid handle.
        check(unsafe { sys::vkllm_sampler_accept(self.raw.as_ptr(), token) })
    }

    /// Forgets the history and restarts the draws from the seed.
    pub fn reset(&mut self) -> Result<()> {
        // SAFETY: valid handle.
        check(unsafe { sys::vkllm_sampler_reset(self.raw.as_ptr()) })
    }

    pub(crate) fn as_raw(&self) -> *mut sys::vkllm_sampler {
        self.raw.as_ptr()
    }

    /// The seed the draws come from (the one drawn for [`SEED_RANDOM`]).
    pub fn seed(&self) -> Result<u64> {
        let mut seed = 0u64;
        // SAFETY: valid handle.
        check(unsafe { sys::vkllm_sampler_get_seed(self.raw.as_ptr(), &mut seed) })?;
        Ok(seed)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: we own the handle.
        unsafe { sys::vkllm_sampler_destroy(self.raw.as_ptr()) }
    }
}

/// The session pointer a [`CancelHandle`] reaches, None once the session is gone.
struct SessionPtr(NonNull<sys::vkllm_session>);
// SAFETY: only vkllm_session_cancel is called through it, which vkllm.h allows "from any thread
// at any time".
unsafe impl Send for SessionPtr {}

#[derive(Clone)]
pub(crate) struct CancelTarget(Arc<Mutex<Option<SessionPtr>>>);

impl CancelTarget {
    pub(crate) fn new(raw: NonNull<sys::vkllm_session>) -> CancelTarget {
        CancelTarget(Arc::new(Mutex::new(Some(SessionPtr(raw)))))
    }

    /// Called before the session is destroyed: later cancels do nothing.
    pub(crate) fn clear(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Cancels a session's running generation or prefill from any thread (a UI's Stop button):
/// `vkllm_session_cancel`. It stops at the next prefill chunk or decode step, and the call ends
/// with [`crate::StopReason::Cancelled`] (generate) or `Status::Cancelled` (batch); a cancel
/// while nothing runs is dropped. Outliving the session is harmless: then it does nothing.
#[derive(Clone)]
pub struct CancelHandle(CancelTarget);

impl CancelHandle {
    pub fn cancel(&self) {
        let guard = (self.0).0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = guard.as_ref() {
            // SAFETY: the session lives while the pointer is in the mutex (Drop clears it
            // first, under the lock); cancel is allowed from any thread.
            unsafe { sys::vkllm_session_cancel(p.0.as_ptr()) };
        }
    }
}

/// How the KV cache stores keys and values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvType {
    F16,
    F32,
    Q8_0,
    Other(i32),
}

pub(crate) fn kv_type_of(raw: sys::vkllm_kv_type) -> KvType {
    match raw {
        sys::VKLLM_KV_F16 => KvType::F16,
        sys::VKLLM_KV_F32 => KvType::F32,
        sys::VKLLM_KV_Q8_0 => KvType::Q8_0,
        other => KvType::Other(other as i32),
    }
}

pub(crate) fn raw_kv_type(kv: KvType) -> sys::vkllm_kv_type {
    match kv {
        KvType::F16 => sys::VKLLM_KV_F16,
        KvType::F32 => sys::VKLLM_KV_F32,
        KvType::Q8_0 => sys::VKLLM_KV_Q8_0,
        KvType::Other(other) => other as sys::vkllm_kv_type,
    }
}

/// What a session is, as created (`vkllm_session_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// KV slots per sequence (n_ctx 0 asks for the model's context, at most 4096).
    pub n_ctx: u32,
    pub n_seq: u32,
    pub n_batch: u32,
    pub n_sink: u32,
    pub flags: u32,
    pub kv_type: KvType,
    pub kv_cache_bytes: u64,
    /// All the session's device memory: KV caches, activations, step buffers.
    pub device_bytes: u64,
}

impl Session {
    /// A handle that cancels this session's calls from another thread.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(self.cancel.clone())
    }

    /// What the session is: its context, sequences, KV type and memory.
    pub fn info(&self) -> Result<SessionInfo> {
        let mut raw = sys::vkllm_session_info {
            struct_size: std::mem::size_of::<sys::vkllm_session_info>(),
            ..Default::default()
        };
        // SAFETY: valid handle and output struct.
        check(unsafe { sys::vkllm_session_get_info(self.raw.as_ptr(), &mut raw) })?;
        Ok(SessionInfo {
            n_ctx: raw.n_ctx,
            n_seq: raw.n_seq,
            n_batch: raw.n_batch,
            n_sink: raw.n_sink,
            flags: raw.flags,
            kv_type: kv_type_of(raw.kv_type),
            kv_cache_bytes: raw.kv_cache_bytes,
            device_bytes: raw.device_bytes,
        })
    }

    /// Generates for several prompts at once (`vkllm_session_generate_batch`): prompt i in sequence i
    /// (see [`Session::with_sequences`]), all decoded together one step per token, each chosen
    /// by `samplers[i]` (None: greedy). Returns each sequence's generated tokens. Of `options`,
    /// `max_tokens` and `ignore_eog` apply.
    pub fn generate_batch(
        &mut self,
        prompts: &[&[i32]],
        samplers: &mut [Option<&mut Sampler>],
        options: &GenerateOptions,
    ) -> Result<Vec<Vec<i32>>> {
        if samplers.len() != prompts.len() {
            return Err(invalid_argument(
                "generate_batch: one sampler (or None) per prompt",
            ));
        }
        let max = options.max_tokens as usize;
        let mut out: Vec<Vec<i32>> = prompts.iter().map(|_| vec![0; max.max(1)]).collect();
        let mut seqs: Vec<sys::vkllm_batch_sequence> = prompts
            .iter()
            .zip(samplers.iter_mut())
            .zip(out.iter_mut())
            .enumerate()
            .map(
                |(i, ((prompt, sampler), tokens))| sys::vkllm_batch_sequence {
                    struct_size: std::mem::size_of::<sys::vkllm_batch_sequence>(),
                    seq: i as u32,
                    prompt: prompt.as_ptr(),
                    n_prompt: prompt.len(),
                    sampler: sampler.as_mut().map_or(ptr::null_mut(), |s| s.raw.as_ptr()),
                    tokens: tokens.as_mut_ptr(),
                    n_generated: 0,
                    stop_reason: 0,
                },
            )
            .collect();
        // SAFETY: zeroed is valid (NULL pointers, None callbacks); init fills the defaults.
        let mut params: sys::vkllm_generate_params = unsafe { std::mem::zeroed() };
        // SAFETY: the sequences' arrays and samplers are valid and distinct for the call.
        check(unsafe {
            sys::vkllm_generate_params_init(&mut params);
            params.max_tokens = options.max_tokens;
            params.ignore_eog = i32::from(options.ignore_eog);
            sys::vkllm_session_generate_batch(
                self.raw.as_ptr(),
                seqs.as_mut_ptr(),
                seqs.len(),
                &params,
            )
        })?;
        for (tokens, s) in out.iter_mut().zip(&seqs) {
            tokens.truncate(s.n_generated);
        }
        Ok(out)
    }
}

/// A loaded model's metadata, from the copy of its keys the model keeps (`vkllm_model_get_gguf`):
/// the file is not opened again.
impl Model {
    fn gguf(&self) -> *const sys::vkllm_gguf {
        // SAFETY: valid handle; the view lives as long as the model.
        unsafe { sys::vkllm_model_get_gguf(self.raw.as_ptr()) }
    }

    /// The metadata keys' names, in file order.
    pub fn meta_keys(&self) -> Result<Vec<String>> {
        let mut names = Vec::new();
        loop {
            // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
            let mut key: sys::vkllm_gguf_key = unsafe { std::mem::zeroed() };
            key.struct_size = std::mem::size_of::<sys::vkllm_gguf_key>();
            // SAFETY: valid view and output struct.
            let code = unsafe { sys::vkllm_gguf_get_key(self.gguf(), names.len(), &mut key) };
            if code == sys::VKLLM_ERR_NOT_FOUND {
                return Ok(names);
            }
            check(code)?;
            // SAFETY: the name is a NUL-terminated string living as long as the model.
            names.push(unsafe { crate::cstr_to_string(key.name) });
        }
    }

    /// An integer (or bool) value.
    pub fn meta_int(&self, key: &str) -> Result<i64> {
        let key = CString::new(key).map_err(|_| invalid_argument("key contains NUL"))?;
        let mut v = 0i64;
        // SAFETY: valid view, key string and output.
        check(unsafe { sys::vkllm_gguf_get_int(self.gguf(), key.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// A float (or integer) value.
    pub fn meta_float(&self, key: &str) -> Result<f64> {
        let key = CString::new(key).map_err(|_| invalid_argument("key contains NUL"))?;
        let mut v = 0f64;
        // SAFETY: valid view, key string and output.
        check(unsafe { sys::vkllm_gguf_get_float(self.gguf(), key.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// A string value.
    pub fn meta_string(&self, key: &str) -> Result<String> {
        let key = CString::new(key).map_err(|_| invalid_argument("key contains NUL"))?;
        let mut buf: Vec<u8> = vec![0; 64];
        loop {
            let mut length = 0usize;
            // SAFETY: valid view and key; buf valid for its length.
            let code = unsafe {
                sys::vkllm_gguf_get_string(
                    self.gguf(),
                    key.as_ptr(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    &mut length,
                )
            };
            if code == sys::VKLLM_ERR_BUFFER_TOO_SMALL {
                buf.resize(length + 1, 0);
                continue;
            }
            check(code)?;
            buf.truncate(length);
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
    }
}
