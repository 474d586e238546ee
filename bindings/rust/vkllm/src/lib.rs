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

use vkllm_sys as sys;

mod chat;
mod control;
mod conversation;
mod device;
mod embed;
mod error;
#[cfg(feature = "experimental")]
mod experimental;
mod gguf;
mod grammar;
mod lowlevel;
mod model;
mod reply;
mod runtime;
mod sampling;
mod session;
mod tokenizer;
mod tokens;
pub use chat::{chat_apply_template, chat_render, chat_render_json, ChatOptions, ChatTurn};
pub use control::{CancelHandle, KvType, Sampler, SessionInfo, SEED_RANDOM};
pub use conversation::{ChatPiece, ChatReply, Conversation, ConversationOptions};
pub use device::{
    devices, version_string, ComponentType, CoopmatShape, CoopmatUse, DeviceInfo, DeviceType,
    RuntimeStats, SelfCheck, TuneResult,
};
pub use embed::{EmbedParams, Pooling};
pub use error::{Error, Result, Status};
#[cfg(feature = "experimental")]
pub use experimental::KernelTime;
pub use gguf::{ggml_type_name, Gguf, GgufKey, GgufType, ModelSummary, TensorInfo};
pub use grammar::{json_schema_to_gbnf, Grammar, GrammarProgress, Vocabulary};
pub use lowlevel::{SessionOptions, SessionStats};
pub use model::Model;
pub use reply::{prompt_opens_reasoning, ReplyFormat, ReplyParser, ReplyPart, ToolCall};
pub use runtime::{version, Runtime};
pub use sampling::{
    GenerateOptions, Generation, LogitsKind, Sampling, StopReason, TokenLogprobs, MAX_TOP_LOGPROBS,
};
pub use session::Session;
pub use tokenizer::{Detokenizer, Tokenizer, TokenizerInfo};
pub use tokens::Tokens;

// The helpers every module's calls share.
use error::{check, cstr_to_string, invalid_argument};
use model::{is_end_of_generation, model_n_vocab, path_to_cstring, tokenize};

pub use sys::VKLLM_VERSION_NUMBER as VERSION_NUMBER;
