//! Conversations: a chat on one sequence of a session whose replies prefill only what the
//! cache lacks, streamed as content, reasoning and tool calls (`vkllm_conversation`).

use std::any::Any;
use std::ffi::{c_char, c_void, CString};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::{check, cstr_to_string, invalid_argument, ChatTurn, Result, Sampling, Session};
use crate::{GrammarProgress, StopReason, ToolCall};

/// Which template renders the conversation, and on which sequence it runs
/// (`vkllm_conversation_params`). The default: sequence 0 and the model's own template.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConversationOptions {
    /// The session's sequence the conversation uses.
    pub seq: u32,
    /// Jinja text: used when set.
    pub template: Option<String>,
    /// Else a built-in, by name ("chatml", "llama3", ...).
    pub template_name: Option<String>,
    /// A JSON array of OpenAI function tools, given to the template.
    pub tools_json: Option<String>,
    /// A JSON object of more template variables (`{"enable_thinking": false}`).
    pub extra_json: Option<String>,
    /// strftime_now's time in seconds since 1970 (UTC); `None`: the clock.
    pub now: Option<i64>,
}

/// A piece of a streamed reply, as the reply parser makes it certain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatPiece {
    /// Answer text.
    Content(String),
    /// Reasoning text (`<think>`, harmony's analysis channel...).
    Reasoning(String),
    /// A complete tool call (its id given by the conversation where the model gave none).
    ToolCall(ToolCall),
}

/// What a reply did (`vkllm_conversation_result`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChatReply {
    /// Tokens of the rendered conversation.
    pub n_prompt: usize,
    /// Of them, those the sequence's cache already held.
    pub n_reused: usize,
    /// Of them, those prefilled for this reply.
    pub n_prefilled: usize,
    pub n_generated: usize,
    /// `MaxTokens` also when the context's end stopped the reply; `Cancelled` when the closure
    /// returned false.
    pub stop_reason: StopReason,
    pub n_tool_calls: usize,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub seed: u64,
    /// Whether the reply's raw text is a finished string of the sampling grammar:
    /// [`GrammarProgress::Incomplete`] when `max_tokens`, the context's end, a stop string or a
    /// cancel cut it short, so it must not be parsed as the grammar's language. `Complete`
    /// without a grammar.
    pub grammar_progress: GrammarProgress,
}

/// The messages of a chat on a session's sequence. Each [`reply`](Conversation::reply) renders
/// them through the chat template, prefills only the tokens after the prefix the cache already
/// holds, streams the reply and appends it as an assistant turn (its tool calls included); add
/// the tools' results as "tool" turns and reply again. The rendered text is tokenized with its
/// special tokens parsed (`<|im_end|>` is the control token), as the model was trained on it.
pub struct Conversation<'s> {
    raw: NonNull<sys::vkllm_conversation>,
    session: &'s mut Session,
}

// SAFETY: a conversation is used by one thread at a time, with its session (vkllm.h); it holds
// the session's &mut, and moving both to another thread is that.
unsafe impl Send for Conversation<'_> {}

fn c_opt(s: &Option<String>, keep: &mut Vec<CString>) -> Result<*const c_char> {
    match s {
        None => Ok(ptr::null()),
        Some(s) => {
            let c =
                CString::new(s.as_str()).map_err(|_| invalid_argument("a NUL inside a string"))?;
            let p = c.as_ptr();
            keep.push(c); // a CString's heap buffer does not move with it
            Ok(p)
        }
    }
}

fn stop_reason(raw: sys::vkllm_stop_reason) -> StopReason {
    match raw {
        sys::VKLLM_STOP_END_OF_GENERATION => StopReason::EndOfGeneration,
        sys::VKLLM_STOP_MAX_TOKENS => StopReason::MaxTokens,
        sys::VKLLM_STOP_STRING => StopReason::StopString,
        sys::VKLLM_STOP_CANCELLED => StopReason::Cancelled,
        other => StopReason::Other(other as i32),
    }
}

/// # Safety
/// `c` points to a valid tool call whose strings are NUL-terminated or NULL.
unsafe fn tool_call(c: &sys::vkllm_tool_call) -> ToolCall {
    ToolCall {
        id: cstr_to_string(c.id),
        name: cstr_to_string(c.name),
        arguments: cstr_to_string(c.arguments),
    }
}

struct Callback<'a> {
    on_piece: &'a mut dyn FnMut(&ChatPiece) -> bool,
    panic: Option<Box<dyn Any + Send + 'static>>,
}

/// The C on_piece callback: never lets a panic unwind into the library; it stops the reply
/// instead, and `reply` resumes the panic once the library has returned.
unsafe extern "C" fn on_piece_trampoline(
    user_data: *mut c_void,
    kind: sys::vkllm_chat_piece_kind,
    text: *const c_char,
    length: usize,
    call: *const sys::vkllm_tool_call,
) -> i32 {
    // SAFETY: user_data is the &mut Callback that reply passed, alive during the call.
    let cb = unsafe { &mut *user_data.cast::<Callback>() };
    if cb.panic.is_some() {
        return 1;
    }
    let piece = if kind == sys::VKLLM_CHAT_PIECE_TOOL_CALL && !call.is_null() {
        // SAFETY: the library gives a valid call during the callback.
        ChatPiece::ToolCall(unsafe { tool_call(&*call) })
    } else {
        let bytes: &[u8] = if text.is_null() || length == 0 {
            &[]
        } else {
            // SAFETY: the library gives `length` valid bytes at `text` during the call.
            unsafe { std::slice::from_raw_parts(text.cast::<u8>(), length) }
        };
        let text = String::from_utf8_lossy(bytes).into_owned();
        if kind == sys::VKLLM_CHAT_PIECE_REASONING {
            ChatPiece::Reasoning(text)
        } else {
            ChatPiece::Content(text)
        }
    };
    match panic::catch_unwind(AssertUnwindSafe(|| (cb.on_piece)(&piece))) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(payload) => {
            cb.panic = Some(payload);
            1
        }
    }
}

impl<'s> Conversation<'s> {
    /// An empty conversation on `session`. The template, tools and variables are checked now:
    /// an unknown template name, or a model without a template when none is named, is
    /// `Status::NotFound`.
    pub fn new(session: &'s mut Session, options: &ConversationOptions) -> Result<Self> {
        let mut keep = Vec::new();
        // SAFETY: init writes the whole struct.
        let mut p: sys::vkllm_conversation_params = unsafe {
            let mut p = std::mem::MaybeUninit::uninit();
            sys::vkllm_conversation_params_init(p.as_mut_ptr());
            p.assume_init()
        };
        p.seq = options.seq;
        p.template_source = c_opt(&options.template, &mut keep)?;
        p.template_name = c_opt(&options.template_name, &mut keep)?;
        p.tools = c_opt(&options.tools_json, &mut keep)?;
        p.extra = c_opt(&options.extra_json, &mut keep)?;
        if let Some(now) = options.now {
            p.now = now;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: the session is live, `p`'s strings live in `keep`, `raw` is a valid out.
        check(unsafe { sys::vkllm_conversation_create(session.raw.as_ptr(), &p, &mut raw) })?;
        let raw = NonNull::new(raw).ok_or_else(|| invalid_argument("no conversation"))?;
        Ok(Conversation { raw, session })
    }

    /// Appends a message: "system", "user", "assistant" (with tool calls whose arguments are
    /// JSON text) or "tool" (a call's result, with `tool_call_id` and `name`).
    pub fn add(&mut self, turn: &ChatTurn) -> Result<()> {
        let mut keep = Vec::new();
        let mut calls = Vec::with_capacity(turn.tool_calls.len());
        for c in &turn.tool_calls {
            calls.push(sys::vkllm_tool_call {
                id: c_opt(&Some(c.id.clone()), &mut keep)?,
                name: c_opt(&Some(c.name.clone()), &mut keep)?,
                arguments: c_opt(&Some(c.arguments.clone()), &mut keep)?,
            });
        }
        let raw = sys::vkllm_chat_turn {
            struct_size: std::mem::size_of::<sys::vkllm_chat_turn>(),
            role: c_opt(&Some(turn.role.clone()), &mut keep)?,
            content: c_opt(&turn.content, &mut keep)?,
            reasoning_content: c_opt(&turn.reasoning_content, &mut keep)?,
            tool_calls: if calls.is_empty() {
                ptr::null()
            } else {
                calls.as_ptr()
            },
            n_tool_calls: calls.len(),
            tool_call_id: c_opt(&turn.tool_call_id, &mut keep)?,
            name: c_opt(&turn.name, &mut keep)?,
        };
        // SAFETY: every pointer in `raw` points into `keep` or `calls`, alive here.
        check(unsafe { sys::vkllm_conversation_add(self.raw.as_ptr(), &raw) })
    }

    /// Appends one OpenAI-style message (a JSON object) or several (a JSON array); tool-call
    /// arguments may be objects or JSON text. Malformed input adds nothing.
    pub fn add_json(&mut self, messages_json: &str) -> Result<()> {
        let c = CString::new(messages_json).map_err(|_| invalid_argument("a NUL in the JSON"))?;
        // SAFETY: the conversation is live and `c` is NUL-terminated.
        check(unsafe { sys::vkllm_conversation_add_json(self.raw.as_ptr(), c.as_ptr()) })
    }

    /// The number of messages.
    pub fn len(&self) -> usize {
        let mut n = 0;
        // SAFETY: the conversation is live and `n` is a valid out; it cannot fail then.
        unsafe { sys::vkllm_conversation_get_count(self.raw.as_ptr(), &mut n) };
        n
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Message `index` (0 first), `None` past the end.
    pub fn message(&self, index: usize) -> Option<ChatTurn> {
        // SAFETY: zeroed is a valid turn (NULL pointers).
        let mut t: sys::vkllm_chat_turn = unsafe { std::mem::zeroed() };
        t.struct_size = std::mem::size_of::<sys::vkllm_chat_turn>();
        // SAFETY: the conversation is live and `t` is writable.
        let code = unsafe { sys::vkllm_conversation_get_message(self.raw.as_ptr(), index, &mut t) };
        if code != sys::VKLLM_OK {
            return None;
        }
        let opt = |p: *const c_char| {
            // SAFETY: the conversation's strings are NUL-terminated and alive here.
            (!p.is_null()).then(|| unsafe { cstr_to_string(p) })
        };
        let calls: &[sys::vkllm_tool_call] = if t.tool_calls.is_null() {
            &[]
        } else {
            // SAFETY: the conversation gives n_tool_calls valid entries.
            unsafe { std::slice::from_raw_parts(t.tool_calls, t.n_tool_calls) }
        };
        Some(ChatTurn {
            // SAFETY: role is a NUL-terminated string of the conversation.
            role: unsafe { cstr_to_string(t.role) },
            content: opt(t.content),
            reasoning_content: opt(t.reasoning_content),
            // SAFETY: each call's strings are the conversation's, alive here.
            tool_calls: calls.iter().map(|c| unsafe { tool_call(c) }).collect(),
            tool_call_id: opt(t.tool_call_id),
            name: opt(t.name),
        })
    }

    /// Every message, first to last.
    pub fn messages(&self) -> Vec<ChatTurn> {
        (0..self.len()).filter_map(|i| self.message(i)).collect()
    }

    /// Keeps the first `n_keep` messages (0: start over; `len() - 1` after a reply: retry it).
    pub fn truncate(&mut self, n_keep: usize) -> Result<()> {
        // SAFETY: the conversation is live.
        check(unsafe { sys::vkllm_conversation_truncate(self.raw.as_ptr(), n_keep) })
    }

    /// Generates the assistant's reply, passing each piece to `on_piece` (return false to stop
    /// it: the reply so far is kept, with `StopReason::Cancelled`), and appends it. `max_tokens`
    /// 0: until an end token or the context's end. A grammar in `sampling` constrains the raw
    /// reply, markers included.
    pub fn reply<F>(
        &mut self,
        sampling: &Sampling,
        max_tokens: u32,
        mut on_piece: F,
    ) -> Result<ChatReply>
    where
        F: FnMut(&ChatPiece) -> bool,
    {
        let mut biases = Vec::new();
        let raw_sampling = sampling.to_raw(&mut biases);
        let mut cb = Callback {
            on_piece: &mut on_piece,
            panic: None,
        };
        // SAFETY: init writes the whole struct.
        let mut params: sys::vkllm_conversation_reply_params = unsafe {
            let mut p = std::mem::MaybeUninit::uninit();
            sys::vkllm_conversation_reply_params_init(p.as_mut_ptr());
            p.assume_init()
        };
        params.max_tokens = max_tokens;
        params.on_piece = Some(on_piece_trampoline);
        params.user_data = (&mut cb as *mut Callback).cast();
        let mut result = sys::vkllm_conversation_result {
            struct_size: std::mem::size_of::<sys::vkllm_conversation_result>(),
            ..Default::default()
        };
        // SAFETY: all pointers are valid for the call; cb outlives it; the trampoline matches
        // vkllm_chat_piece_fn and never unwinds. The session is borrowed by `self`.
        let code = unsafe {
            sys::vkllm_conversation_reply(self.raw.as_ptr(), &raw_sampling, &params, &mut result)
        };
        if let Some(payload) = cb.panic.take() {
            panic::resume_unwind(payload);
        }
        if code != sys::VKLLM_ERR_CANCELLED {
            check(code)?;
        }
        Ok(ChatReply {
            n_prompt: result.n_prompt,
            n_reused: result.n_reused,
            n_prefilled: result.n_prefilled,
            n_generated: result.n_generated,
            stop_reason: stop_reason(result.stop_reason),
            n_tool_calls: result.n_tool_calls,
            prefill_ms: result.prefill_ms,
            decode_ms: result.decode_ms,
            seed: result.seed,
            grammar_progress: GrammarProgress::from_raw(result.grammar_progress),
        })
    }

    /// The session the conversation runs on.
    pub fn session(&mut self) -> &mut Session {
        self.session
    }
}

impl Drop for Conversation<'_> {
    fn drop(&mut self) {
        // SAFETY: we own this handle.
        unsafe { sys::vkllm_conversation_destroy(self.raw.as_ptr()) }
    }
}
