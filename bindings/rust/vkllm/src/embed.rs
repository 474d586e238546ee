//! Embeddings: a model's final hidden states, per token or pooled into one vector per input.

use std::ffi::{c_char, CString};

use vkllm_sys as sys;

use crate::{check, invalid_argument, Model, Result, Session};

/// How the rows of an input become its embedding (`vkllm_pooling`: llama.cpp's pooling types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The model's own ([`Model::pooling`]).
    Model,
    /// One vector per token ([`Session::embed_tokens`] only).
    None,
    /// The mean of every token's vector, [CLS] and [SEP] included.
    Mean,
    /// The first token's.
    Cls,
    /// The last token's (decoder embedding models: Qwen3-Embedding).
    Last,
}

impl Pooling {
    fn raw(self) -> sys::vkllm_pooling {
        match self {
            Pooling::Model => sys::VKLLM_POOLING_MODEL,
            Pooling::None => sys::VKLLM_POOLING_NONE,
            Pooling::Mean => sys::VKLLM_POOLING_MEAN,
            Pooling::Cls => sys::VKLLM_POOLING_CLS,
            Pooling::Last => sys::VKLLM_POOLING_LAST,
        }
    }

    fn from_raw(raw: sys::vkllm_pooling) -> Option<Pooling> {
        match raw {
            sys::VKLLM_POOLING_NONE => Some(Pooling::None),
            sys::VKLLM_POOLING_MEAN => Some(Pooling::Mean),
            sys::VKLLM_POOLING_CLS => Some(Pooling::Cls),
            sys::VKLLM_POOLING_LAST => Some(Pooling::Last),
            _ => None,
        }
    }
}

/// What [`Session::embed`] and [`Session::embed_tokens`] do (`vkllm_embed_params`):
/// `EmbedParams::new().pooling(Pooling::Cls).normalize(true)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmbedParams {
    pub pooling: Pooling,
    /// Each vector scaled to unit L2 norm.
    pub normalize: bool,
    /// An input over `max_tokens` is cut (its end dropped, the model's end token kept) instead
    /// of failing with `Status::ContextFull`.
    pub truncate: bool,
    /// The most tokens of one input; 0: the session's context and the model's positions.
    pub max_tokens: u32,
}

impl Default for EmbedParams {
    fn default() -> Self {
        EmbedParams {
            pooling: Pooling::Model,
            normalize: false,
            truncate: false,
            max_tokens: 0,
        }
    }
}

impl EmbedParams {
    /// The library's defaults: the model's pooling, no normalization, no truncation.
    pub fn new() -> Self {
        Self::default()
    }
    pub fn pooling(mut self, pooling: Pooling) -> Self {
        self.pooling = pooling;
        self
    }
    pub fn normalize(mut self, normalize: bool) -> Self {
        self.normalize = normalize;
        self
    }
    pub fn truncate(mut self, truncate: bool) -> Self {
        self.truncate = truncate;
        self
    }
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    fn raw(&self) -> sys::vkllm_embed_params {
        // SAFETY: zeroed is valid for this plain struct; init fills the defaults.
        let mut p: sys::vkllm_embed_params = unsafe { std::mem::zeroed() };
        // SAFETY: init writes a valid struct.
        unsafe { sys::vkllm_embed_params_init(&mut p) };
        p.pooling = self.pooling.raw();
        p.flags = if self.normalize {
            sys::VKLLM_EMBED_NORMALIZE
        } else {
            0
        } | if self.truncate {
            sys::VKLLM_EMBED_TRUNCATE
        } else {
            0
        };
        p.max_tokens = self.max_tokens;
        p
    }
}

fn model_info(model: *const sys::vkllm_model) -> Result<sys::vkllm_model_info> {
    // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
    let mut info: sys::vkllm_model_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<sys::vkllm_model_info>();
    // SAFETY: valid handle and output struct.
    check(unsafe { sys::vkllm_model_get_info(model, &mut info) })?;
    Ok(info)
}

impl Model {
    /// The model's own pooling (`<arch>.pooling_type`; `Pooling::None` where the file states
    /// none).
    pub fn pooling(&self) -> Result<Pooling> {
        let info = model_info(self.raw.as_ptr())?;
        Ok(Pooling::from_raw(info.pooling).unwrap_or(Pooling::None))
    }

    /// Floats in one embedding (`vkllm_model_info.n_embd`).
    pub fn n_embd(&self) -> Result<usize> {
        Ok(model_info(self.raw.as_ptr())?.n_embd as usize)
    }
}

impl Session {
    /// One embedding per text, each tokenized with the model's special tokens
    /// (`vkllm_session_embed`). `Pooling::None` is refused here: see
    /// [`embed_tokens`](Session::embed_tokens).
    pub fn embed<S: AsRef<str>>(
        &mut self,
        texts: &[S],
        params: &EmbedParams,
    ) -> Result<Vec<Vec<f32>>> {
        let n_embd = model_info(self.model)?.n_embd as usize;
        let owned = texts
            .iter()
            .map(|t| {
                CString::new(t.as_ref()).map_err(|_| invalid_argument("a text contains a NUL byte"))
            })
            .collect::<Result<Vec<CString>>>()?;
        let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
        let mut out = vec![0f32; texts.len() * n_embd];
        let raw = params.raw();
        // SAFETY: valid handle used by this thread only (&mut); ptrs holds texts.len() valid
        // strings and out texts.len() x n_embd floats, all alive for the call.
        check(unsafe {
            sys::vkllm_session_embed(
                self.raw.as_ptr(),
                ptrs.as_ptr(),
                ptrs.len(),
                &raw,
                out.as_mut_ptr(),
                out.len(),
            )
        })?;
        Ok(out.chunks(n_embd.max(1)).map(<[f32]>::to_vec).collect())
    }

    /// [`embed`](Session::embed) from token ids, used as given (add the model's special tokens
    /// yourself: [`Model::tokenize`]) (`vkllm_session_embed_tokens`). With `Pooling::None`
    /// (asked for, or the model's own) each input gives one vector per token, all of them in
    /// order, input by input; else one vector per input.
    pub fn embed_tokens(
        &mut self,
        inputs: &[&[i32]],
        params: &EmbedParams,
    ) -> Result<Vec<Vec<f32>>> {
        let info = model_info(self.model)?;
        let n_embd = info.n_embd as usize;
        let per_token = params.pooling == Pooling::None
            || (params.pooling == Pooling::Model && info.pooling == sys::VKLLM_POOLING_NONE);
        let mut rows: usize = if per_token {
            inputs.iter().map(|i| i.len()).sum()
        } else {
            inputs.len()
        };
        if per_token && params.truncate {
            // A cut input gives as many rows as the limit.
            let mut limit = self.info()?.n_ctx as usize;
            if params.max_tokens > 0 {
                limit = limit.min(params.max_tokens as usize);
            }
            rows = inputs.iter().map(|i| i.len().min(limit)).sum();
        }
        let ptrs: Vec<*const i32> = inputs.iter().map(|i| i.as_ptr()).collect();
        let lengths: Vec<usize> = inputs.iter().map(|i| i.len()).collect();
        let mut out = vec![0f32; rows * n_embd];
        let raw = params.raw();
        // SAFETY: valid handle used by this thread only (&mut); ptrs[i] holds lengths[i] ids
        // and out rows x n_embd floats, all alive for the call.
        check(unsafe {
            sys::vkllm_session_embed_tokens(
                self.raw.as_ptr(),
                ptrs.as_ptr(),
                lengths.as_ptr(),
                inputs.len(),
                &raw,
                out.as_mut_ptr(),
                out.len(),
            )
        })?;
        Ok(out.chunks(n_embd.max(1)).map(<[f32]>::to_vec).collect())
    }
}
