//! Chat replies: a model's reasoning, answer and tool calls, split as the reply streams
//! (`vkllm_reply_parser`).

use std::ffi::CString;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::{check, cstr_to_string, invalid_argument, Result};

/// The markers a model's chat template taught it (`vkllm_reply_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyFormat {
    /// All answer, passed through as generated.
    Plain,
    /// `<think>`, `<tool_call>{...}</tool_call>` (Qwen, Hermes, SmolLM3; Qwen3-Coder's XML body).
    Hermes,
    /// `[THINK]`, `[TOOL_CALLS]` (JSON array, or `NAME[ARGS]{...}`).
    Mistral,
    /// A reply that is one `{"name", "parameters"}` object (Llama 3.1-3.3).
    Llama3,
    /// GPT-OSS's harmony channels.
    Harmony,
}

impl ReplyFormat {
    fn raw(self) -> sys::vkllm_reply_format {
        match self {
            ReplyFormat::Plain => sys::VKLLM_REPLY_PLAIN,
            ReplyFormat::Hermes => sys::VKLLM_REPLY_HERMES,
            ReplyFormat::Mistral => sys::VKLLM_REPLY_MISTRAL,
            ReplyFormat::Llama3 => sys::VKLLM_REPLY_LLAMA3,
            ReplyFormat::Harmony => sys::VKLLM_REPLY_HARMONY,
        }
    }

    /// The format a chat template (Jinja text) teaches its model; `Plain` for none.
    pub fn of_template(template_source: &str) -> ReplyFormat {
        let Ok(c) = CString::new(template_source) else {
            return ReplyFormat::Plain;
        };
        // SAFETY: `c` is a NUL-terminated string that outlives the call.
        match unsafe { sys::vkllm_reply_format_of_template(c.as_ptr()) } {
            sys::VKLLM_REPLY_HERMES => ReplyFormat::Hermes,
            sys::VKLLM_REPLY_MISTRAL => ReplyFormat::Mistral,
            sys::VKLLM_REPLY_LLAMA3 => ReplyFormat::Llama3,
            sys::VKLLM_REPLY_HARMONY => ReplyFormat::Harmony,
            _ => ReplyFormat::Plain,
        }
    }
}

/// Whether a rendered prompt ends inside an open reasoning block (DeepSeek-R1's template).
pub fn prompt_opens_reasoning(prompt: &str) -> bool {
    let Ok(c) = CString::new(prompt) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated string that outlives the call.
    unsafe { sys::vkllm_prompt_opens_reasoning(c.as_ptr()) != 0 }
}

/// A tool call: its id ("" where the format has none), the function's name, the arguments as
/// the model's JSON text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// What a push made certain: text to append to the reasoning and to the answer, calls completed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplyPart {
    pub reasoning: String,
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
}

/// Bytes held back until they make whole UTF-8 characters.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn take(&mut self, bytes: &[u8], last: bool) -> String {
        self.pending.extend_from_slice(bytes);
        let keep = match std::str::from_utf8(&self.pending) {
            Ok(_) => 0,
            // An incomplete character at the end waits for its next bytes.
            Err(e) if e.error_len().is_none() && !last => self.pending.len() - e.valid_up_to(),
            Err(_) => 0,
        };
        let tail = self.pending.split_off(self.pending.len() - keep);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = tail;
        text
    }
}

/// Splits a chat model's reply into reasoning, answer and tool calls as it streams; text may be
/// split anywhere, even inside a character. [`finish`](ReplyParser::finish) ends a reply and
/// readies the parser for the next.
pub struct ReplyParser {
    raw: NonNull<sys::vkllm_reply_parser>,
    reasoning: Utf8Stream,
    content: Utf8Stream,
}

// SAFETY: a parser is one object with no thread affinity; &mut self serialises its use.
unsafe impl Send for ReplyParser {}

impl ReplyParser {
    /// `in_reasoning`: the reply begins inside a reasoning block ([`prompt_opens_reasoning`]).
    pub fn new(format: ReplyFormat, in_reasoning: bool) -> Result<ReplyParser> {
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out pointer.
        check(unsafe {
            sys::vkllm_reply_parser_create(format.raw(), i32::from(in_reasoning), &mut raw)
        })?;
        let raw = NonNull::new(raw).ok_or_else(|| invalid_argument("no reply parser"))?;
        Ok(ReplyParser {
            raw,
            reasoning: Utf8Stream::default(),
            content: Utf8Stream::default(),
        })
    }

    /// Feeds the next piece of the reply.
    pub fn push(&mut self, text: &[u8]) -> Result<ReplyPart> {
        let mut part = empty_part();
        // SAFETY: the parser is live, `text` is valid for its length, `part` is writable.
        check(unsafe {
            sys::vkllm_reply_parser_push(
                self.raw.as_ptr(),
                text.as_ptr().cast(),
                text.len(),
                &mut part,
            )
        })?;
        Ok(self.convert(&part, false))
    }

    /// Ends the reply: what is still held.
    pub fn finish(&mut self) -> Result<ReplyPart> {
        let mut part = empty_part();
        // SAFETY: the parser is live and `part` is writable.
        check(unsafe { sys::vkllm_reply_parser_finish(self.raw.as_ptr(), &mut part) })?;
        Ok(self.convert(&part, true))
    }

    fn convert(&mut self, part: &sys::vkllm_reply_part, last: bool) -> ReplyPart {
        let bytes = |p: *const std::ffi::c_char| -> &[u8] {
            if p.is_null() {
                &[]
            } else {
                // SAFETY: the library hands out NUL-terminated strings valid until the next call.
                unsafe { std::ffi::CStr::from_ptr(p).to_bytes() }
            }
        };
        let mut calls = Vec::with_capacity(part.n_tool_calls);
        for i in 0..part.n_tool_calls {
            // SAFETY: `tool_calls` holds `n_tool_calls` entries until the next call.
            let c = unsafe { &*part.tool_calls.add(i) };
            // SAFETY: each string is NUL-terminated.
            unsafe {
                calls.push(ToolCall {
                    id: cstr_to_string(c.id),
                    name: cstr_to_string(c.name),
                    arguments: cstr_to_string(c.arguments),
                });
            }
        }
        ReplyPart {
            reasoning: self.reasoning.take(bytes(part.reasoning), last),
            content: self.content.take(bytes(part.content), last),
            tool_calls: calls,
        }
    }
}

fn empty_part() -> sys::vkllm_reply_part {
    sys::vkllm_reply_part {
        struct_size: std::mem::size_of::<sys::vkllm_reply_part>(),
        reasoning: ptr::null(),
        content: ptr::null(),
        tool_calls: ptr::null(),
        n_tool_calls: 0,
    }
}

impl Drop for ReplyParser {
    fn drop(&mut self) {
        // SAFETY: the parser is live and dropped once.
        unsafe { sys::vkllm_reply_parser_destroy(self.raw.as_ptr()) }
    }
}
