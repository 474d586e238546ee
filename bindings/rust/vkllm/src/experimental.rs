//! The C API's experimental calls (feature `experimental`; the header's VKLLM_EXPERIMENTAL
//! block): the KV-cache bytes of each layer and the kernel profile of a session made with
//! `vkllm_sys::VKLLM_SESSION_PROFILE`. They may change or go in any minor version.

use std::ptr;

use vkllm_sys as sys;

use crate::{check, cstr_to_string, Result, Session};

/// Device time of one compute kernel in a profiled session, summed over its dispatches.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    pub kernel: String,
    pub dispatches: u64,
    pub ms: f64,
}

impl Session {
    /// K and V cache bytes of one layer of the model (all sequences).
    pub fn layer_kv_bytes(&self, layer: u32) -> Result<u64> {
        let mut bytes = 0u64;
        // SAFETY: valid handle and out pointer.
        check(unsafe {
            sys::vkllm_session_get_layer_kv_bytes(self.raw.as_ptr(), layer, &mut bytes)
        })?;
        Ok(bytes)
    }

    /// Device time per kernel since the session was made (with `VKLLM_SESSION_PROFILE`), most
    /// time first.
    pub fn profile(&self) -> Result<Vec<KernelTime>> {
        let mut count = 0usize;
        // SAFETY: capacity 0 with NULL out asks for the count.
        check(unsafe {
            sys::vkllm_session_get_profile(self.raw.as_ptr(), ptr::null_mut(), 0, &mut count)
        })?;
        let blank = sys::vkllm_kernel_time {
            kernel: ptr::null(),
            dispatches: 0,
            ms: 0.0,
        };
        let mut raw = vec![blank; count];
        // SAFETY: raw holds `count` entries.
        check(unsafe {
            sys::vkllm_session_get_profile(
                self.raw.as_ptr(),
                raw.as_mut_ptr(),
                raw.len(),
                &mut count,
            )
        })?;
        raw.truncate(count);
        Ok(raw
            .iter()
            .map(|k| KernelTime {
                // SAFETY: the names live as long as the session, which we hold.
                kernel: unsafe { cstr_to_string(k.kernel) },
                dispatches: k.dispatches,
                ms: k.ms,
            })
            .collect())
    }
}
