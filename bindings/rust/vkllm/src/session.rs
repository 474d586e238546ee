//! Sessions: the KV caches of a model's sequences, and generation on them.

use std::any::Any;
use std::ffi::{c_char, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::{
    check, control, invalid_argument, model_n_vocab, path_to_cstring, GenerateOptions, Generation,
    GrammarProgress, LogitsKind, Model, Result, Sampling, StopReason, TokenLogprobs,
};

/// KV caches of a sequence and the recorded steps (`vkllm_session`, one sequence).
pub struct Session {
    pub(crate) raw: NonNull<sys::vkllm_session>,
    /// The session keeps its model alive in the library, so this stays valid while we live.
    pub(crate) model: *mut sys::vkllm_model,
    /// Shared with the [`CancelHandle`]s; emptied before the session is destroyed.
    pub(crate) cancel: control::CancelTarget,
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
                other => StopReason::Other(other as i32),
            },
            prefill_ms: result.prefill_ms,
            decode_ms: result.decode_ms,
            seed: result.seed,
            grammar_progress: GrammarProgress::from_raw(result.grammar_progress),
        };
        Ok((generation, cb.logprobs))
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
