//! Chat templates: a conversation rendered as the model's own Jinja template renders it
//! (`vkllm_chat_render`), tool calls and reasoning included.

use std::ffi::{c_char, CString};
use std::ptr;

use vkllm_sys as sys;

use crate::gguf::{c_string, read_sized};
use crate::{invalid_argument, Model, Result, ToolCall};

/// A turn of a conversation, as OpenAI's messages and Hugging Face templates have them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatTurn {
    pub role: String,
    /// `None`: null in the template (an assistant turn that only calls tools).
    pub content: Option<String>,
    pub reasoning_content: Option<String>,
    /// Calls the assistant made; `arguments` is the JSON text of an object.
    pub tool_calls: Vec<ToolCall>,
    /// A "tool" turn: the call it answers, and the tool's name.
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
}

impl ChatTurn {
    /// A turn with a role and text content.
    pub fn new(role: &str, content: &str) -> ChatTurn {
        ChatTurn {
            role: role.into(),
            content: Some(content.into()),
            ..ChatTurn::default()
        }
    }
}

/// Which template, and its variables (`vkllm_chat_params`).
#[derive(Clone)]
pub struct ChatOptions<'m> {
    /// Its template, BOS and EOS are the defaults.
    pub model: Option<&'m Model>,
    /// Jinja text: used when set.
    pub template: Option<String>,
    /// Else a built-in: "chatml", "llama3", "gemma", "mistral-v3", "phi4", ... (`vkllm chat
    /// --template help` lists them).
    pub template_name: Option<String>,
    /// A JSON array of OpenAI function tools.
    pub tools_json: Option<String>,
    /// A JSON object of more template variables (`{"enable_thinking": false}`).
    pub extra_json: Option<String>,
    pub add_generation_prompt: bool,
    pub bos_token: Option<String>,
    pub eos_token: Option<String>,
    /// strftime_now's time in seconds since 1970 (UTC); `None`: the clock.
    pub now: Option<i64>,
}

impl Default for ChatOptions<'_> {
    fn default() -> Self {
        ChatOptions {
            model: None,
            template: None,
            template_name: None,
            tools_json: None,
            extra_json: None,
            add_generation_prompt: true,
            bos_token: None,
            eos_token: None,
            now: None,
        }
    }
}

fn owned(s: &Option<String>, keep: &mut Vec<CString>) -> Result<*const c_char> {
    match s {
        None => Ok(ptr::null()),
        Some(s) => {
            let c =
                CString::new(s.as_str()).map_err(|_| invalid_argument("a NUL inside a string"))?;
            let p = c.as_ptr();
            keep.push(c);
            Ok(p)
        }
    }
}

/// Renders `turns` with a chat template exactly as transformers' apply_chat_template does. A
/// template's refusal (`raise_exception`) is an error carrying its own message.
pub fn chat_render(options: &ChatOptions, turns: &[ChatTurn]) -> Result<String> {
    let mut keep = Vec::new();
    let p = raw_params(options, &mut keep)?;
    let mut calls: Vec<Vec<sys::vkllm_tool_call>> = Vec::with_capacity(turns.len());
    let mut raw = Vec::with_capacity(turns.len());
    for t in turns {
        let mut cs = Vec::with_capacity(t.tool_calls.len());
        for c in &t.tool_calls {
            cs.push(sys::vkllm_tool_call {
                id: owned(&Some(c.id.clone()), &mut keep)?,
                name: owned(&Some(c.name.clone()), &mut keep)?,
                arguments: owned(&Some(c.arguments.clone()), &mut keep)?,
            });
        }
        raw.push(sys::vkllm_chat_turn {
            struct_size: std::mem::size_of::<sys::vkllm_chat_turn>(),
            role: owned(&Some(t.role.clone()), &mut keep)?,
            content: owned(&t.content, &mut keep)?,
            reasoning_content: owned(&t.reasoning_content, &mut keep)?,
            tool_calls: if cs.is_empty() {
                ptr::null()
            } else {
                cs.as_ptr()
            },
            n_tool_calls: cs.len(),
            tool_call_id: owned(&t.tool_call_id, &mut keep)?,
            name: owned(&t.name, &mut keep)?,
        });
        calls.push(cs); // the Vec's heap buffer does not move with it
    }
    // SAFETY: every pointer in `p` and `raw` points into `keep`, `calls` or `raw`, alive here;
    // the buffer is valid for the capacity given.
    let bytes = read_sized(|buf, cap, n| unsafe {
        sys::vkllm_chat_render(&p, raw.as_ptr(), raw.len(), buf, cap, n)
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// [`chat_render`] with the messages as a JSON array of OpenAI-style message objects (what a
/// program holding serde values or a server's request already has).
pub fn chat_render_json(options: &ChatOptions, messages_json: &str) -> Result<String> {
    let mut keep = Vec::new();
    let p = raw_params(options, &mut keep)?;
    let messages = c_string(messages_json)?;
    // SAFETY: every pointer in `p` points into `keep`, alive here; the buffer is valid for the
    // capacity given.
    let bytes = read_sized(|buf, cap, n| unsafe {
        sys::vkllm_chat_render_json(&p, messages.as_ptr(), buf, cap, n)
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The simple form: plain `(role, content)` turns rendered with the built-in `template_name`
/// ("chatml", "llama3", "gemma", "mistral-v3", "phi4", ...: `vkllm chat --template help` lists
/// them) or else `model_template` (a model's Jinja text, e.g. [`Model::chat_template`]). BOS
/// and EOS are left undefined: tokenize the result with ADD_SPECIAL | PARSE_SPECIAL.
/// `add_assistant` ends it with the opening of the reply.
pub fn chat_apply_template(
    template_name: Option<&str>,
    model_template: Option<&str>,
    messages: &[(&str, &str)],
    add_assistant: bool,
) -> Result<String> {
    let name = template_name.map(c_string).transpose()?;
    let source = model_template.map(c_string).transpose()?;
    let mut keep = Vec::with_capacity(2 * messages.len());
    let mut raw = Vec::with_capacity(messages.len());
    for (role, content) in messages {
        let (role, content) = (c_string(role)?, c_string(content)?);
        raw.push(sys::vkllm_chat_message {
            role: role.as_ptr(),
            content: content.as_ptr(),
        });
        keep.push(role); // a CString's heap buffer does not move with it
        keep.push(content);
    }
    // SAFETY: the strings live in `name`, `source` and `keep`; the buffer is valid for the
    // capacity given.
    let bytes = read_sized(|buf, cap, n| unsafe {
        sys::vkllm_chat_apply_template(
            name.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
            source.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
            raw.as_ptr(),
            raw.len(),
            i32::from(add_assistant),
            buf,
            cap,
            n,
        )
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The C params of `options`; the strings they point to are kept alive in `keep`.
fn raw_params(options: &ChatOptions, keep: &mut Vec<CString>) -> Result<sys::vkllm_chat_params> {
    // SAFETY: init writes the whole struct.
    let mut p: sys::vkllm_chat_params = unsafe {
        let mut p = std::mem::MaybeUninit::uninit();
        sys::vkllm_chat_params_init(p.as_mut_ptr());
        p.assume_init()
    };
    p.model = options.model.map_or(ptr::null(), |m| m.raw.as_ptr());
    p.template_source = owned(&options.template, keep)?;
    p.template_name = owned(&options.template_name, keep)?;
    p.tools = owned(&options.tools_json, keep)?;
    p.extra = owned(&options.extra_json, keep)?;
    p.add_generation_prompt = i32::from(options.add_generation_prompt);
    p.bos_token = owned(&options.bos_token, keep)?;
    p.eos_token = owned(&options.eos_token, keep)?;
    if let Some(now) = options.now {
        p.now = now;
    }
    Ok(p)
}
