//! What a generation is asked for and what it reports: sampling, options, the result.

use std::ptr;

use vkllm_sys as sys;

use crate::{Grammar, GrammarProgress};

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
    pub(crate) fn to_raw(
        &self,
        biases: &mut Vec<sys::vkllm_logit_bias>,
    ) -> sys::vkllm_sampling_params {
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
        raw.grammar = self
            .grammar
            .as_ref()
            .map_or(ptr::null_mut(), |g| g.as_raw().cast_mut());
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
