//! Models: weights loaded on a runtime, with their tokenizer.

use std::ffi::CString;
use std::path::Path;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::{check, invalid_argument, Result, Runtime};

/// Weights on a runtime's device, immutable, shared by sessions (`vkllm_model`).
pub struct Model {
    pub(crate) raw: NonNull<sys::vkllm_model>,
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

pub(crate) fn path_to_cstring(path: &Path) -> Result<CString> {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().into_owned().into_bytes();
    CString::new(bytes).map_err(|_| invalid_argument("path contains a NUL byte"))
}

pub(crate) fn tokenize(
    tok: *const sys::vkllm_tokenizer,
    text: &str,
    flags: u32,
) -> Result<Vec<i32>> {
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

pub(crate) fn is_end_of_generation(tok: *const sys::vkllm_tokenizer, token: i32) -> Result<bool> {
    let mut out = 0i32;
    // SAFETY: valid tokenizer (owned by a live model) and output pointer.
    check(unsafe { sys::vkllm_tokenizer_is_end_of_generation(tok, token, &mut out) })?;
    Ok(out != 0)
}

pub(crate) fn model_n_vocab(model: *const sys::vkllm_model) -> Result<usize> {
    // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
    let mut info: sys::vkllm_model_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<sys::vkllm_model_info>();
    // SAFETY: valid handle and output struct.
    check(unsafe { sys::vkllm_model_get_info(model, &mut info) })?;
    Ok(info.n_vocab as usize)
}
