//! Model files read without loading weights (`vkllm_gguf`): the summary, metadata keys and
//! values, the tensor table, and the file's tokenizer.

use std::ffi::{c_char, CString};
use std::path::Path;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::{check, cstr_to_string, invalid_argument, path_to_cstring, Result};

/// Bytes from a C function with the buffer rules of `vkllm_gguf_get_string`: `call(buf,
/// capacity, &mut length)` is tried with a small buffer, then, when that is too small, with one
/// of the length it reported (a refused call changes nothing, so the retry is the same call).
pub(crate) fn read_sized(
    mut call: impl FnMut(*mut c_char, usize, &mut usize) -> sys::vkllm_status,
) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; 64];
    let mut n = 0usize;
    let status = call(buf.as_mut_ptr().cast(), buf.len(), &mut n);
    if status == sys::VKLLM_ERR_BUFFER_TOO_SMALL {
        buf.resize(n + 1, 0);
        check(call(buf.as_mut_ptr().cast(), buf.len(), &mut n))?;
    } else {
        check(status)?;
    }
    buf.truncate(n);
    Ok(buf)
}

pub(crate) fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| invalid_argument("a NUL inside a string"))
}

/// The name of a ggml tensor type ("Q4_K"), `None` for an id ggml does not define.
pub fn ggml_type_name(type_id: u32) -> Option<String> {
    // SAFETY: accepts any value; returns static text or NULL.
    let p = unsafe { sys::vkllm_ggml_type_name(type_id) };
    // SAFETY: p is NULL or a NUL-terminated static string.
    (!p.is_null()).then(|| unsafe { cstr_to_string(p) })
}

/// What a model file is (`vkllm_model_summary`); what the file does not state is 0 or "".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSummary {
    pub gguf_version: u32,
    pub architecture: String,
    pub name: String,
    pub file_bytes: u64,
    pub tensor_bytes: u64,
    pub n_params: u64,
    pub n_tensors: u64,
    pub n_keys: u64,
    pub context_length: u32,
    pub n_layers: u32,
    pub n_embd: u32,
    pub n_heads: u32,
    pub n_kv_heads: u32,
    pub n_experts: u32,
    pub n_experts_used: u32,
    pub n_vocab: u32,
    pub tokenizer_model: String,
    pub tokenizer_pre: String,
    /// Tensor count per ggml type id.
    pub tensors_of_type: Vec<u64>,
}

/// A metadata value type, numbered as GGUF numbers them (`VKLLM_GGUF_*`).
pub type GgufType = sys::vkllm_gguf_type;

/// One metadata key. For arrays `element_type` and `count` describe the elements; for scalars
/// `element_type == value_type` and `count == 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufKey {
    pub name: String,
    pub value_type: GgufType,
    pub element_type: GgufType,
    pub count: u64,
}

/// One tensor of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub ggml_type: u32,
    pub type_name: Option<String>,
    /// Innermost first: a weight matrix is `[in_features, out_features]`.
    pub dims: Vec<u64>,
    pub n_elements: u64,
    pub n_bytes: u64,
    pub file_offset: u64,
}

/// An opened, validated GGUF file, memory-mapped (`vkllm_gguf`). Immutable.
pub struct Gguf {
    raw: NonNull<sys::vkllm_gguf>,
}

// SAFETY: vkllm.h: "A vkllm_gguf is immutable: any number of threads may read it at once".
// Closing happens in Drop, which needs ownership, so it cannot race with a read.
unsafe impl Send for Gguf {}
// SAFETY: same rule; every method takes &self and only reads.
unsafe impl Sync for Gguf {}

impl Gguf {
    /// Opens and validates a model file (`Status::Io`, `Status::Format` naming what is wrong).
    pub fn open(path: impl AsRef<Path>) -> Result<Gguf> {
        let path = path_to_cstring(path.as_ref())?;
        let mut out = ptr::null_mut();
        // SAFETY: valid path string and out pointer.
        check(unsafe { sys::vkllm_gguf_open(path.as_ptr(), &mut out) })?;
        NonNull::new(out)
            .map(|raw| Gguf { raw })
            .ok_or_else(|| invalid_argument("vkllm_gguf_open returned NULL"))
    }

    pub fn summary(&self) -> Result<ModelSummary> {
        // SAFETY: zeroed is valid for this plain struct; struct_size set as required.
        let mut s: sys::vkllm_model_summary = unsafe { std::mem::zeroed() };
        s.struct_size = std::mem::size_of::<sys::vkllm_model_summary>();
        // SAFETY: valid handle and output struct; its strings are NUL-terminated.
        unsafe {
            check(sys::vkllm_gguf_get_summary(self.raw.as_ptr(), &mut s))?;
            Ok(ModelSummary {
                gguf_version: s.gguf_version,
                architecture: cstr_to_string(s.architecture.as_ptr()),
                name: cstr_to_string(s.name.as_ptr()),
                file_bytes: s.file_bytes,
                tensor_bytes: s.tensor_bytes,
                n_params: s.n_params,
                n_tensors: s.n_tensors,
                n_keys: s.n_keys,
                context_length: s.context_length,
                n_layers: s.n_layers,
                n_embd: s.n_embd,
                n_heads: s.n_heads,
                n_kv_heads: s.n_kv_heads,
                n_experts: s.n_experts,
                n_experts_used: s.n_experts_used,
                n_vocab: s.n_vocab,
                tokenizer_model: cstr_to_string(s.tokenizer_model.as_ptr()),
                tokenizer_pre: cstr_to_string(s.tokenizer_pre.as_ptr()),
                tensors_of_type: s.tensors_of_type.to_vec(),
            })
        }
    }

    /// Every metadata key, in file order.
    pub fn keys(&self) -> Result<Vec<GgufKey>> {
        let mut keys = Vec::new();
        loop {
            // SAFETY: zeroed is valid (a NULL name); struct_size set as required.
            let mut k: sys::vkllm_gguf_key = unsafe { std::mem::zeroed() };
            k.struct_size = std::mem::size_of::<sys::vkllm_gguf_key>();
            // SAFETY: valid handle and output struct.
            let status = unsafe { sys::vkllm_gguf_get_key(self.raw.as_ptr(), keys.len(), &mut k) };
            if status == sys::VKLLM_ERR_NOT_FOUND {
                return Ok(keys);
            }
            check(status)?;
            keys.push(GgufKey {
                // SAFETY: the name lives as long as the file, which we hold.
                name: unsafe { cstr_to_string(k.name) },
                value_type: k.type_,
                element_type: k.element_type,
                count: k.count,
            });
        }
    }

    /// An integer or bool value (`Status::NotFound` when absent, `Status::Format` when of
    /// another type).
    pub fn get_int(&self, key: &str) -> Result<i64> {
        let key = c_string(key)?;
        let mut v = 0i64;
        // SAFETY: valid handle, key string and out pointer.
        check(unsafe { sys::vkllm_gguf_get_int(self.raw.as_ptr(), key.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// A float or integer value as f64.
    pub fn get_float(&self, key: &str) -> Result<f64> {
        let key = c_string(key)?;
        let mut v = 0f64;
        // SAFETY: valid handle, key string and out pointer.
        check(unsafe { sys::vkllm_gguf_get_float(self.raw.as_ptr(), key.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// A string value's bytes as stored (they may hold NUL bytes or invalid UTF-8).
    pub fn get_bytes(&self, key: &str) -> Result<Vec<u8>> {
        let key = c_string(key)?;
        // SAFETY: valid handle and key; the buffer is valid for the capacity given.
        read_sized(|buf, cap, n| unsafe {
            sys::vkllm_gguf_get_string(self.raw.as_ptr(), key.as_ptr(), buf, cap, n)
        })
    }

    /// A string value (invalid UTF-8 replaced).
    pub fn get_string(&self, key: &str) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.get_bytes(key)?).into_owned())
    }

    /// Any value as readable text (strings quoted, arrays as their first elements).
    pub fn get_text(&self, key: &str) -> Result<String> {
        let key = c_string(key)?;
        // SAFETY: valid handle and key; the buffer is valid for the capacity given.
        let bytes = read_sized(|buf, cap, n| unsafe {
            sys::vkllm_gguf_get_text(self.raw.as_ptr(), key.as_ptr(), buf, cap, n)
        })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Every tensor, in file order.
    pub fn tensors(&self) -> Result<Vec<TensorInfo>> {
        let mut tensors = Vec::new();
        loop {
            // SAFETY: zeroed is valid (NULL names); struct_size set as required.
            let mut t: sys::vkllm_tensor_info = unsafe { std::mem::zeroed() };
            t.struct_size = std::mem::size_of::<sys::vkllm_tensor_info>();
            // SAFETY: valid handle and output struct.
            let status =
                unsafe { sys::vkllm_gguf_get_tensor(self.raw.as_ptr(), tensors.len(), &mut t) };
            if status == sys::VKLLM_ERR_NOT_FOUND {
                return Ok(tensors);
            }
            check(status)?;
            let n_dims = (t.n_dims as usize).min(t.dims.len());
            tensors.push(TensorInfo {
                // SAFETY: the strings live as long as the file, which we hold.
                name: unsafe { cstr_to_string(t.name) },
                ggml_type: t.type_,
                // SAFETY: as above; NULL for a type ggml does not name.
                type_name: (!t.type_name.is_null()).then(|| unsafe { cstr_to_string(t.type_name) }),
                dims: t.dims[..n_dims].to_vec(),
                n_elements: t.n_elements,
                n_bytes: t.n_bytes,
                file_offset: t.file_offset,
            });
        }
    }

    pub fn as_raw(&self) -> *mut sys::vkllm_gguf {
        self.raw.as_ptr()
    }
}

impl Drop for Gguf {
    fn drop(&mut self) {
        // SAFETY: we own the handle; tokenizers built from it do not need it.
        unsafe { sys::vkllm_gguf_destroy(self.raw.as_ptr()) }
    }
}
