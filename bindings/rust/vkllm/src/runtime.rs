//! The library's version and the runtime (a Vulkan device and what it compiled).

use std::ffi::CStr;
use std::ptr::{self, NonNull};

use vkllm_sys as sys;

use crate::{check, cstr_to_string, invalid_argument, Result};

/// The version of the loaded library, as `VERSION_NUMBER` encodes it.
pub fn version() -> u32 {
    // SAFETY: no preconditions.
    unsafe { sys::vkllm_version() }
}

/// A Vulkan device with its memory and compiled kernels (`vkllm_runtime`).
pub struct Runtime {
    pub(crate) raw: NonNull<sys::vkllm_runtime>,
}

// SAFETY: vkllm.h, THREAD SAFETY: "vkllm_runtime ... may be used from several threads at once
// (destroying one must not race with its other uses)". Destruction happens in Drop, which
// needs ownership, so no other use can race with it.
unsafe impl Send for Runtime {}
// SAFETY: same rule; every &self method maps to a function allowed concurrently.
unsafe impl Sync for Runtime {}

impl Runtime {
    /// A runtime on the best usable device (or the one named by $VKLLM_DEVICE).
    pub fn new() -> Result<Runtime> {
        Self::create(-1, None)
    }

    /// A runtime on the device at `index` in the library's enumeration order.
    pub fn with_device(index: u32) -> Result<Runtime> {
        let index = i32::try_from(index).map_err(|_| invalid_argument("device index too large"))?;
        Self::create(index, None)
    }

    fn create(device_index: i32, device_name: Option<&CStr>) -> Result<Runtime> {
        // SAFETY: an all-zero vkllm_runtime_params is a valid value (NULL pointers, None
        // callbacks); init then fills the defaults.
        let mut params: sys::vkllm_runtime_params = unsafe { std::mem::zeroed() };
        let mut out = ptr::null_mut();
        // SAFETY: params is initialised by the library, and the strings outlive the call.
        unsafe {
            sys::vkllm_runtime_params_init(&mut params);
            params.device_index = device_index;
            params.device_name = device_name.map_or(ptr::null(), CStr::as_ptr);
            check(sys::vkllm_runtime_create(&params, &mut out))?;
        }
        NonNull::new(out)
            .map(|raw| Runtime { raw })
            .ok_or_else(|| invalid_argument("vkllm_runtime_create returned NULL"))
    }

    /// The name of the device ("llvmpipe (LLVM 15.0.6, 256 bits)", ...).
    pub fn device_name(&self) -> Result<String> {
        // SAFETY: zeroed is valid for this plain struct; struct_size is set as required.
        let mut info: sys::vkllm_device_info = unsafe { std::mem::zeroed() };
        info.struct_size = std::mem::size_of::<sys::vkllm_device_info>();
        // SAFETY: valid handle and output struct; name is NUL-terminated by the library.
        unsafe {
            check(sys::vkllm_runtime_get_device_info(
                self.raw.as_ptr(),
                &mut info,
            ))?;
            Ok(cstr_to_string(info.name.as_ptr()))
        }
    }

    pub fn as_raw(&self) -> *mut sys::vkllm_runtime {
        self.raw.as_ptr()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // SAFETY: we own this reference; models keep the device alive by their own.
        unsafe { sys::vkllm_runtime_destroy(self.raw.as_ptr()) }
    }
}
