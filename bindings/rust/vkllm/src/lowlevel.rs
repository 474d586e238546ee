//! The steps below `Session::generate`: sessions of several sequences, prefill and batched
//! decode with the logits, greedy decode chained on the device, rewinding a sequence, and the
//! counters of a session; and model loads with progress.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::{
    check, cstr_to_string, invalid_argument, model_n_vocab, path_to_cstring, Model, Result,
    Runtime, Session,
};

/// How a session is made (`vkllm_session_params`); `Default` is the library's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionOptions {
    /// KV slots per sequence; 0: the model's training context.
    pub n_ctx: u32,
    /// Independent sequences.
    pub n_seq: u32,
    /// Prefill chunk.
    pub n_batch: u32,
    /// `VKLLM_SESSION_*` flags (e.g. `vkllm_sys::VKLLM_SESSION_STREAMING`).
    pub flags: u32,
    /// Streaming: tokens kept at the start.
    pub n_sink: u32,
    /// How the KV cache stores keys and values (`KvType::Other` is refused).
    pub kv_type: crate::KvType,
}

impl Default for SessionOptions {
    fn default() -> SessionOptions {
        let mut p = sys::vkllm_session_params::default();
        // SAFETY: init fills a valid struct.
        unsafe { sys::vkllm_session_params_init(&mut p) };
        SessionOptions {
            n_ctx: p.n_ctx,
            n_seq: p.n_seq,
            n_batch: p.n_batch,
            flags: p.flags,
            n_sink: p.n_sink,
            kv_type: crate::control::kv_type_of(p.kv_type),
        }
    }
}

/// A session's counters (`vkllm_session_stats`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SessionStats {
    pub command_buffers_recorded: u64,
    pub submits: u64,
    pub tokens_prefilled: u64,
    pub tokens_decoded: u64,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub kv_cache_bytes: u64,
}

impl Session {
    /// A session made with every option (several sequences, KV cache type, profiling...).
    pub fn with_options(model: &Model, options: &SessionOptions) -> Result<Session> {
        let mut params = sys::vkllm_session_params::default();
        let mut out = ptr::null_mut();
        // SAFETY: params initialised by the library; valid model handle.
        unsafe {
            sys::vkllm_session_params_init(&mut params);
            params.n_ctx = options.n_ctx;
            params.n_seq = options.n_seq;
            params.n_batch = options.n_batch;
            params.flags = options.flags;
            params.n_sink = options.n_sink;
            params.kv_type = crate::control::raw_kv_type(options.kv_type);
            check(sys::vkllm_session_create(model.as_raw(), &params, &mut out))?;
        }
        NonNull::new(out)
            .map(|raw| Session {
                raw,
                model: model.as_raw(),
                cancel: crate::control::CancelTarget::new(raw),
            })
            .ok_or_else(|| invalid_argument("vkllm_session_create returned NULL"))
    }

    /// Logits per row: the model's vocabulary size.
    pub fn n_vocab(&self) -> Result<usize> {
        model_n_vocab(self.model)
    }

    /// Tokens in sequence `seq`'s cache so far.
    pub fn position_of(&self, seq: u32) -> Result<u32> {
        let mut n = 0u32;
        // SAFETY: valid handle; Session is not Sync, so no other thread uses it now.
        check(unsafe { sys::vkllm_session_get_position(self.raw.as_ptr(), seq, &mut n) })?;
        Ok(n)
    }

    /// Keeps the first `n_keep` positions of sequence `seq` and forgets the rest.
    pub fn truncate(&mut self, seq: u32, n_keep: u32) -> Result<()> {
        // SAFETY: valid handle, used by this thread only (&mut).
        check(unsafe { sys::vkllm_session_truncate(self.raw.as_ptr(), seq, n_keep) })
    }

    /// Appends `tokens` to sequence `seq` (prefill, in chunks) and writes the logits after the
    /// last one into `logits` (`n_vocab` floats) when given.
    pub fn eval_into(
        &mut self,
        seq: u32,
        tokens: &[i32],
        logits: Option<&mut [f32]>,
    ) -> Result<()> {
        let out = match logits {
            None => ptr::null_mut(),
            Some(l) if l.len() == self.n_vocab()? => l.as_mut_ptr(),
            Some(_) => {
                return Err(invalid_argument(
                    "eval_into: logits must hold n_vocab floats",
                ))
            }
        };
        // SAFETY: valid handle (&mut: this thread only); tokens and logits valid for the call.
        check(unsafe {
            sys::vkllm_session_eval(self.raw.as_ptr(), seq, tokens.as_ptr(), tokens.len(), out)
        })
    }

    /// [`Session::eval_into`] returning the logits.
    pub fn eval_seq(&mut self, seq: u32, tokens: &[i32]) -> Result<Vec<f32>> {
        let mut logits = vec![0f32; self.n_vocab()?];
        self.eval_into(seq, tokens, Some(&mut logits))?;
        Ok(logits)
    }

    /// One token for each of several distinct sequences, run together in one step. Writes
    /// `tokens.len()` rows of `n_vocab` logits into `logits` (row i: sequence `seqs[i]`).
    pub fn decode_into(
        &mut self,
        seqs: &[u32],
        tokens: &[i32],
        logits: Option<&mut [f32]>,
    ) -> Result<()> {
        if seqs.len() != tokens.len() {
            return Err(invalid_argument(
                "decode: as many sequences as tokens are needed",
            ));
        }
        let out = match logits {
            None => ptr::null_mut(),
            Some(l) if l.len() == tokens.len() * self.n_vocab()? => l.as_mut_ptr(),
            Some(_) => {
                return Err(invalid_argument(
                    "decode: logits must hold n x n_vocab floats",
                ))
            }
        };
        // SAFETY: valid handle (&mut); seqs, tokens and logits valid for their lengths.
        check(unsafe {
            sys::vkllm_session_decode(
                self.raw.as_ptr(),
                seqs.as_ptr(),
                tokens.as_ptr(),
                tokens.len(),
                out,
            )
        })
    }

    /// [`Session::decode_into`] returning the rows (`.chunks(n_vocab)` splits them).
    pub fn decode(&mut self, seqs: &[u32], tokens: &[i32]) -> Result<Vec<f32>> {
        let mut logits = vec![0f32; tokens.len() * self.n_vocab()?];
        self.decode_into(seqs, tokens, Some(&mut logits))?;
        Ok(logits)
    }

    /// `steps` greedy decode steps for each sequence chained in one submission: the first
    /// decodes `tokens`, each later one the token the step before chose. Returns steps x n ids:
    /// `[s * n + i]` is sequence `seqs[i]`'s choice after step s.
    pub fn decode_greedy(&mut self, seqs: &[u32], tokens: &[i32], steps: u32) -> Result<Vec<i32>> {
        if seqs.len() != tokens.len() {
            return Err(invalid_argument(
                "decode_greedy: as many sequences as tokens are needed",
            ));
        }
        let mut out = vec![0i32; tokens.len() * steps as usize];
        // SAFETY: valid handle (&mut); out holds steps x n ids.
        check(unsafe {
            sys::vkllm_session_decode_greedy(
                self.raw.as_ptr(),
                seqs.as_ptr(),
                tokens.as_ptr(),
                tokens.len(),
                steps,
                out.as_mut_ptr(),
            )
        })?;
        Ok(out)
    }

    pub fn stats(&self) -> Result<SessionStats> {
        let mut s = sys::vkllm_session_stats {
            struct_size: std::mem::size_of::<sys::vkllm_session_stats>(),
            ..Default::default()
        };
        // SAFETY: valid handle and output struct.
        check(unsafe { sys::vkllm_session_get_stats(self.raw.as_ptr(), &mut s) })?;
        Ok(SessionStats {
            command_buffers_recorded: s.command_buffers_recorded,
            submits: s.submits,
            tokens_prefilled: s.tokens_prefilled,
            tokens_decoded: s.tokens_decoded,
            prefill_ms: s.prefill_ms,
            decode_ms: s.decode_ms,
            kv_cache_bytes: s.kv_cache_bytes,
        })
    }
}

struct Progress<'a> {
    on_progress: &'a mut dyn FnMut(f32) -> bool,
    panic: Option<Box<dyn Any + Send + 'static>>,
}

/// The C progress callback: a panic stops the load instead of unwinding into the library, and
/// `load_with_progress` resumes it once the library has returned.
unsafe extern "C" fn on_progress_trampoline(user_data: *mut c_void, fraction: f32) -> i32 {
    // SAFETY: user_data is the &mut Progress that load_with_progress passed, alive now.
    let p = unsafe { &mut *user_data.cast::<Progress>() };
    if p.panic.is_some() {
        return 1;
    }
    match panic::catch_unwind(AssertUnwindSafe(|| (p.on_progress)(fraction))) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(payload) => {
            p.panic = Some(payload);
            1
        }
    }
}

impl Model {
    /// [`Model::load`] reporting the fraction loaded (0 to 1) to `on_progress`, which returns
    /// `false` to stop the load (`Status::Cancelled`; nothing is kept).
    pub fn load_with_progress<F>(
        runtime: &Runtime,
        path: impl AsRef<Path>,
        mut on_progress: F,
    ) -> Result<Model>
    where
        F: FnMut(f32) -> bool,
    {
        let path = path_to_cstring(path.as_ref())?;
        let mut p = Progress {
            on_progress: &mut on_progress,
            panic: None,
        };
        // SAFETY: zeroed is valid (a None callback); init fills the defaults.
        let mut params: sys::vkllm_model_params = unsafe { std::mem::zeroed() };
        let mut out = ptr::null_mut();
        // SAFETY: params, path and p outlive the call; the trampoline never unwinds.
        let status = unsafe {
            sys::vkllm_model_params_init(&mut params);
            params.progress = Some(on_progress_trampoline);
            params.progress_user_data = (&mut p as *mut Progress).cast();
            sys::vkllm_model_load(runtime.as_raw(), path.as_ptr(), &params, &mut out)
        };
        if let Some(payload) = p.panic.take() {
            panic::resume_unwind(payload);
        }
        check(status)?;
        NonNull::new(out)
            .map(|raw| Model { raw })
            .ok_or_else(|| invalid_argument("vkllm_model_load returned NULL"))
    }

    /// The model's chat template (GGUF tokenizer.chat_template), "" when it has none.
    pub fn chat_template(&self) -> String {
        // SAFETY: valid handle; the text lives as long as the model and is copied here.
        unsafe { cstr_to_string(sys::vkllm_model_get_chat_template(self.as_raw())) }
    }
}
