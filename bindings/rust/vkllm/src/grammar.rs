//! Grammars (`vkllm_grammar`): sampling constrained so that the generated text is a string of
//! a formal language, written in GBNF or converted from a JSON Schema (issue 27).

use std::ffi::CString;
use std::fmt;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use crate::{check, invalid_argument, sys, Model, Result, Sampler, Tokenizer};

mod sealed {
    pub trait Sealed {}
}

/// The vocabulary a grammar is compiled for: a [`Model`]'s (its tokenizer's) or a
/// [`Tokenizer`]'s.
pub trait Vocabulary: sealed::Sealed {
    /// The tokenizer, valid while `self` is borrowed.
    #[doc(hidden)]
    fn raw_tokenizer(&self) -> *const sys::vkllm_tokenizer;
}

impl sealed::Sealed for Model {}
impl Vocabulary for Model {
    fn raw_tokenizer(&self) -> *const sys::vkllm_tokenizer {
        self.tokenizer().as_raw()
    }
}

impl sealed::Sealed for Tokenizer<'_> {}
impl Vocabulary for Tokenizer<'_> {
    fn raw_tokenizer(&self) -> *const sys::vkllm_tokenizer {
        self.as_raw()
    }
}

/// The handle, destroyed with the last clone of its [`Grammar`].
struct Handle(NonNull<sys::vkllm_grammar>);

// SAFETY: vkllm.h: a grammar "is compiled once ... and is then read-only: any number of
// samplers, on any threads, share it"; it is destroyed in Drop, which needs ownership.
unsafe impl Send for Handle {}
// SAFETY: same rule; nothing but creating samplers and generations reads it.
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: we own the handle; samplers and generations keep references of their own.
        unsafe { sys::vkllm_grammar_destroy(self.0.as_ptr()) }
    }
}

/// A grammar compiled for a vocabulary: put it in [`crate::Sampling::grammar`] and the
/// generated text is a string of its language. Compiled once and read-only, it is cheap to
/// clone (clones share the compiled grammar) and may be dropped once a sampler or generation
/// using it has started: they keep their own reference.
#[derive(Clone)]
pub struct Grammar {
    handle: Arc<Handle>,
}

impl Grammar {
    /// Compiles GBNF text (llama.cpp's format) for `vocabulary`, starting from the rule `root`
    /// (None: "root"). A bad grammar is `Status::InvalidArgument` with "line L, column C: ..."
    /// in the message.
    pub fn new<V: Vocabulary + ?Sized>(
        vocabulary: &V,
        gbnf: &str,
        root: Option<&str>,
    ) -> Result<Grammar> {
        let gbnf = CString::new(gbnf).map_err(|_| invalid_argument("grammar contains NUL"))?;
        let root = root
            .map(|r| CString::new(r).map_err(|_| invalid_argument("root contains NUL")))
            .transpose()?;
        let mut out = ptr::null_mut();
        // SAFETY: a tokenizer valid while `vocabulary` is borrowed; NUL-terminated strings (or
        // NULL for the default root); an out pointer.
        check(unsafe {
            sys::vkllm_grammar_create(
                vocabulary.raw_tokenizer(),
                gbnf.as_ptr(),
                root.as_ref().map_or(ptr::null(), |r| r.as_ptr()),
                &mut out,
            )
        })?;
        Grammar::from_raw(out)
    }

    /// Compiles a JSON Schema (JSON text; "" or "{}": any JSON value) for `vocabulary`: the
    /// text generated is one JSON value the schema accepts. A keyword the converter cannot
    /// enforce is `Status::Unsupported` naming it; malformed JSON or a malformed schema is
    /// `Status::InvalidArgument`.
    pub fn from_json_schema<V: Vocabulary + ?Sized>(
        vocabulary: &V,
        schema: &str,
    ) -> Result<Grammar> {
        let schema = CString::new(schema).map_err(|_| invalid_argument("schema contains NUL"))?;
        let mut out = ptr::null_mut();
        // SAFETY: a tokenizer valid while `vocabulary` is borrowed; a NUL-terminated string.
        check(unsafe {
            sys::vkllm_grammar_create_from_json_schema(
                vocabulary.raw_tokenizer(),
                schema.as_ptr(),
                &mut out,
            )
        })?;
        Grammar::from_raw(out)
    }

    fn from_raw(out: *mut sys::vkllm_grammar) -> Result<Grammar> {
        NonNull::new(out)
            .map(|raw| Grammar {
                handle: Arc::new(Handle(raw)),
            })
            .ok_or_else(|| invalid_argument("vkllm_grammar_create returned NULL"))
    }

    /// The handle, valid while this grammar (or a clone) lives.
    pub fn as_raw(&self) -> *const sys::vkllm_grammar {
        self.handle.0.as_ptr()
    }
}

impl fmt::Debug for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Grammar").field(&self.as_raw()).finish()
    }
}

/// Clones of one compiled grammar are equal; separately compiled grammars are not, even from
/// the same text.
impl PartialEq for Grammar {
    fn eq(&self, other: &Grammar) -> bool {
        Arc::ptr_eq(&self.handle, &other.handle)
    }
}

/// The GBNF text a JSON Schema converts to, to read or edit and pass to [`Grammar::new`].
pub fn json_schema_to_gbnf(schema: &str) -> Result<String> {
    let schema = CString::new(schema).map_err(|_| invalid_argument("schema contains NUL"))?;
    let mut buf: Vec<u8> = vec![0; 1024];
    loop {
        let mut length = 0usize;
        // SAFETY: a NUL-terminated schema; buf valid for its length.
        let code = unsafe {
            sys::vkllm_json_schema_to_gbnf(
                schema.as_ptr(),
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
        return String::from_utf8(buf).map_err(|_| invalid_argument("the GBNF is not UTF-8"));
    }
}

/// Where a grammar stands after the tokens accepted: a [`Sampler`]'s, or a generation's
/// ([`crate::Generation::grammar_progress`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrammarProgress {
    /// More text is needed: end tokens are not allowed.
    Incomplete,
    /// The text may end here, or go on (also a sampler without a grammar).
    Complete,
    /// The text is complete and nothing can follow: stop.
    Finished,
    /// A value appended to the library after these bindings were written.
    Other(i32),
}

impl GrammarProgress {
    pub(crate) fn from_raw(raw: sys::vkllm_grammar_progress) -> GrammarProgress {
        match raw {
            sys::VKLLM_GRAMMAR_INCOMPLETE => GrammarProgress::Incomplete,
            sys::VKLLM_GRAMMAR_COMPLETE => GrammarProgress::Complete,
            sys::VKLLM_GRAMMAR_FINISHED => GrammarProgress::Finished,
            other => GrammarProgress::Other(other as i32),
        }
    }
}

impl Sampler {
    /// Where the sampler's grammar stands ([`GrammarProgress::Finished`]: an app's loop
    /// should stop).
    pub fn grammar_progress(&self) -> Result<GrammarProgress> {
        let mut raw: sys::vkllm_grammar_progress = 0;
        // SAFETY: valid handle and output.
        check(unsafe { sys::vkllm_sampler_get_grammar_progress(self.as_raw(), &mut raw) })?;
        Ok(GrammarProgress::from_raw(raw))
    }

    /// Prompt tokens, for the penalties' history only: they do not advance the grammar
    /// ([`Sampler::accept`] does, for generated tokens, and refuses one it does not allow).
    pub fn accept_prompt(&mut self, tokens: &[i32]) -> Result<()> {
        // SAFETY: valid handle (used by this thread only: &mut); tokens valid for their length.
        check(unsafe {
            sys::vkllm_sampler_accept_prompt(self.as_raw(), tokens.as_ptr(), tokens.len())
        })
    }

    /// Sets to negative infinity each logit of the row whose token the grammar does not allow
    /// next, for an app's own sampling chain (without a grammar: nothing changes).
    pub fn apply_grammar(&mut self, logits: &mut [f32]) -> Result<()> {
        // SAFETY: valid handle (used by this thread only: &mut); logits valid for their length.
        check(unsafe {
            sys::vkllm_sampler_apply_grammar(self.as_raw(), logits.as_mut_ptr(), logits.len())
        })
    }
}
