//! Tokenizers on their own (`vkllm_tokenizer`, from a model file or lent by a model) and
//! streaming detokenization (`vkllm_detokenizer`).

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::gguf::{read_sized, Gguf};
use crate::{
    check, cstr_to_string, invalid_argument, is_end_of_generation, tokenize, Model, Result,
};

/// A tokenizer's vocabulary size and special ids (`None`: the model has none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenizerInfo {
    pub n_vocab: u32,
    pub bos: Option<i32>,
    pub eos: Option<i32>,
    pub eot: Option<i32>,
    pub unk: Option<i32>,
    pub pad: Option<i32>,
    /// Whether `VKLLM_TOKENIZE_ADD_SPECIAL` adds BOS, and EOS.
    pub add_bos: bool,
    pub add_eos: bool,
    /// "gpt2" (BPE) or "llama" (SentencePiece).
    pub model: String,
    /// The pre-tokenizer's name, "" for SentencePiece.
    pub pre: String,
}

/// Text <-> token ids. [`Tokenizer::from_gguf`] builds one that it owns (`Tokenizer<'static>`);
/// [`Model::tokenizer`] lends the model's, which borrows the model.
pub struct Tokenizer<'a> {
    raw: NonNull<sys::vkllm_tokenizer>,
    owned: bool,
    _lender: PhantomData<&'a Model>,
}

// SAFETY: vkllm.h: "A vkllm_tokenizer is immutable: any number of threads may use it at once".
// An owned one is destroyed in Drop, which needs ownership; a lent one lives as long as the
// model it borrows.
unsafe impl Send for Tokenizer<'_> {}
// SAFETY: same rule; every method takes &self.
unsafe impl Sync for Tokenizer<'_> {}

impl Tokenizer<'static> {
    /// The tokenizer of an opened model file; the file may be dropped afterwards.
    pub fn from_gguf(gguf: &Gguf) -> Result<Tokenizer<'static>> {
        let mut out = ptr::null_mut();
        // SAFETY: valid file handle and out pointer.
        check(unsafe { sys::vkllm_tokenizer_create(gguf.as_raw(), &mut out) })?;
        NonNull::new(out)
            .map(|raw| Tokenizer {
                raw,
                owned: true,
                _lender: PhantomData,
            })
            .ok_or_else(|| invalid_argument("vkllm_tokenizer_create returned NULL"))
    }
}

impl Gguf {
    /// The file's tokenizer (see [`Tokenizer::from_gguf`]).
    pub fn tokenizer(&self) -> Result<Tokenizer<'static>> {
        Tokenizer::from_gguf(self)
    }
}

impl Model {
    /// The model's own tokenizer, lent for as long as the model is borrowed.
    pub fn tokenizer(&self) -> Tokenizer<'_> {
        // SAFETY: valid model handle; its tokenizer lives as long as the model.
        let raw = unsafe { sys::vkllm_model_get_tokenizer(self.as_raw()) };
        Tokenizer {
            raw: NonNull::new(raw.cast_mut()).expect("a loaded model has a tokenizer"),
            owned: false,
            _lender: PhantomData,
        }
    }
}

impl Tokenizer<'_> {
    pub fn info(&self) -> Result<TokenizerInfo> {
        // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
        let mut i: sys::vkllm_tokenizer_info = unsafe { std::mem::zeroed() };
        i.struct_size = std::mem::size_of::<sys::vkllm_tokenizer_info>();
        // SAFETY: valid handle and output struct; its strings are NUL-terminated.
        check(unsafe { sys::vkllm_tokenizer_get_info(self.raw.as_ptr(), &mut i) })?;
        let id = |v: i32| (v >= 0).then_some(v);
        Ok(TokenizerInfo {
            n_vocab: i.n_vocab,
            bos: id(i.bos),
            eos: id(i.eos),
            eot: id(i.eot),
            unk: id(i.unk),
            pad: id(i.pad),
            add_bos: i.add_bos != 0,
            add_eos: i.add_eos != 0,
            // SAFETY: NUL-terminated arrays filled by the library.
            model: unsafe { cstr_to_string(i.model.as_ptr()) },
            // SAFETY: as above.
            pre: unsafe { cstr_to_string(i.pre.as_ptr()) },
        })
    }

    /// Token ids of `text`, BOS added where the model asks for it.
    pub fn tokenize(&self, text: &str) -> Result<Vec<i32>> {
        tokenize(self.raw.as_ptr(), text, sys::VKLLM_TOKENIZE_ADD_SPECIAL)
    }

    /// Token ids of `text` with `VKLLM_TOKENIZE_*` flags.
    pub fn tokenize_with(&self, text: &str, flags: u32) -> Result<Vec<i32>> {
        tokenize(self.raw.as_ptr(), text, flags)
    }

    /// The text of a sequence of ids (control tokens produce none).
    pub fn detokenize(&self, tokens: &[i32]) -> Result<String> {
        self.detokenize_with(tokens, 0)
    }

    /// The text of a sequence of ids with `VKLLM_DETOKENIZE_*` flags.
    pub fn detokenize_with(&self, tokens: &[i32], flags: u32) -> Result<String> {
        // SAFETY: tokens valid for their length; the buffer for the capacity given.
        let bytes = read_sized(|buf, cap, n| unsafe {
            sys::vkllm_tokenizer_decode(
                self.raw.as_ptr(),
                tokens.as_ptr(),
                tokens.len(),
                flags,
                buf,
                cap,
                n,
            )
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The bytes of one token, which may be part of a UTF-8 character.
    pub fn token_to_piece(&self, token: i32, flags: u32) -> Result<Vec<u8>> {
        // SAFETY: the buffer is valid for the capacity given.
        read_sized(|buf, cap, n| unsafe {
            sys::vkllm_tokenizer_get_piece(self.raw.as_ptr(), token, flags, buf, cap, n)
        })
    }

    /// Whether generation stops at this token (EOS, EOT, <|im_end|>...).
    pub fn is_end_of_generation(&self, token: i32) -> Result<bool> {
        is_end_of_generation(self.raw.as_ptr(), token)
    }

    /// A streaming detokenizer over this tokenizer, with `VKLLM_DETOKENIZE_*` flags.
    pub fn detokenizer(&self, flags: u32) -> Result<Detokenizer<'_>> {
        let mut out = ptr::null_mut();
        // SAFETY: valid tokenizer handle and out pointer.
        check(unsafe { sys::vkllm_detokenizer_create(self.raw.as_ptr(), flags, &mut out) })?;
        NonNull::new(out)
            .map(|raw| Detokenizer {
                raw,
                _tokenizer: PhantomData,
            })
            .ok_or_else(|| invalid_argument("vkllm_detokenizer_create returned NULL"))
    }

    pub fn as_raw(&self) -> *const sys::vkllm_tokenizer {
        self.raw.as_ptr()
    }
}

impl Drop for Tokenizer<'_> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: we own this tokenizer; detokenizers borrowing it are gone.
            unsafe { sys::vkllm_tokenizer_destroy(self.raw.as_ptr()) }
        }
    }
}

/// Text of a stream of token ids as it comes: a push hands out what became complete, never
/// ending inside a UTF-8 character; `flush` ends the stream. One stream at a time.
pub struct Detokenizer<'t> {
    raw: NonNull<sys::vkllm_detokenizer>,
    _tokenizer: PhantomData<&'t Tokenizer<'t>>,
}

// SAFETY: vkllm.h: a vkllm_detokenizer is "used by one thread at a time": moving it to another
// thread is that. Not Sync: every use takes &mut self.
unsafe impl Send for Detokenizer<'_> {}

impl Detokenizer<'_> {
    /// Feeds one token and returns the text it completed (maybe "").
    pub fn push(&mut self, token: i32) -> Result<String> {
        // SAFETY: valid handle, used by this thread only (&mut); buffer valid for its capacity.
        let bytes = read_sized(|buf, cap, n| unsafe {
            sys::vkllm_detokenizer_push(self.raw.as_ptr(), token, buf, cap, n)
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Ends the stream with what is still held, and readies the detokenizer for a new one.
    pub fn flush(&mut self) -> Result<String> {
        // SAFETY: as in push.
        let bytes = read_sized(|buf, cap, n| unsafe {
            sys::vkllm_detokenizer_flush(self.raw.as_ptr(), buf, cap, n)
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Drop for Detokenizer<'_> {
    fn drop(&mut self) {
        // SAFETY: we own the handle.
        unsafe { sys::vkllm_detokenizer_destroy(self.raw.as_ptr()) }
    }
}
