//! Failures: the library's status codes and its message for the failed call.

use std::ffi::{c_char, CStr};
use std::fmt;

use vkllm_sys as sys;

/// A library status code other than OK (`vkllm_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    InvalidArgument,
    NoDevice,
    OutOfHostMemory,
    OutOfDeviceMemory,
    Vulkan,
    DeviceLost,
    Io,
    Format,
    Unsupported,
    BufferTooSmall,
    ContextFull,
    Cancelled,
    Internal,
    NotFound,
    /// A code appended to the library after these bindings were written.
    Other(i32),
}

impl Status {
    pub(crate) fn from_raw(code: sys::vkllm_status) -> Status {
        match code {
            sys::VKLLM_ERR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::VKLLM_ERR_NO_DEVICE => Status::NoDevice,
            sys::VKLLM_ERR_OUT_OF_HOST_MEMORY => Status::OutOfHostMemory,
            sys::VKLLM_ERR_OUT_OF_DEVICE_MEMORY => Status::OutOfDeviceMemory,
            sys::VKLLM_ERR_VULKAN => Status::Vulkan,
            sys::VKLLM_ERR_DEVICE_LOST => Status::DeviceLost,
            sys::VKLLM_ERR_IO => Status::Io,
            sys::VKLLM_ERR_FORMAT => Status::Format,
            sys::VKLLM_ERR_UNSUPPORTED => Status::Unsupported,
            sys::VKLLM_ERR_BUFFER_TOO_SMALL => Status::BufferTooSmall,
            sys::VKLLM_ERR_CONTEXT_FULL => Status::ContextFull,
            sys::VKLLM_ERR_CANCELLED => Status::Cancelled,
            sys::VKLLM_ERR_INTERNAL => Status::Internal,
            sys::VKLLM_ERR_NOT_FOUND => Status::NotFound,
            other => Status::Other(other as i32),
        }
    }

    /// The numeric `vkllm_status` value (stable across releases).
    pub fn code(self) -> i32 {
        // C passes the enum as an int (unsigned where the compiler makes it so): the same bits.
        (match self {
            Status::InvalidArgument => sys::VKLLM_ERR_INVALID_ARGUMENT,
            Status::NoDevice => sys::VKLLM_ERR_NO_DEVICE,
            Status::OutOfHostMemory => sys::VKLLM_ERR_OUT_OF_HOST_MEMORY,
            Status::OutOfDeviceMemory => sys::VKLLM_ERR_OUT_OF_DEVICE_MEMORY,
            Status::Vulkan => sys::VKLLM_ERR_VULKAN,
            Status::DeviceLost => sys::VKLLM_ERR_DEVICE_LOST,
            Status::Io => sys::VKLLM_ERR_IO,
            Status::Format => sys::VKLLM_ERR_FORMAT,
            Status::Unsupported => sys::VKLLM_ERR_UNSUPPORTED,
            Status::BufferTooSmall => sys::VKLLM_ERR_BUFFER_TOO_SMALL,
            Status::ContextFull => sys::VKLLM_ERR_CONTEXT_FULL,
            Status::Cancelled => sys::VKLLM_ERR_CANCELLED,
            Status::Internal => sys::VKLLM_ERR_INTERNAL,
            Status::NotFound => sys::VKLLM_ERR_NOT_FOUND,
            Status::Other(code) => code as sys::vkllm_status,
        }) as i32
    }

    /// The library's short description ("i/o error", ...).
    pub fn description(self) -> String {
        // SAFETY: vkllm_status_string accepts any value and returns static, NUL-terminated text.
        unsafe { cstr_to_string(sys::vkllm_status_string(self.code() as sys::vkllm_status)) }
    }
}

/// A failed call: its status and the library's detailed message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status.description())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Copies a NUL-terminated string; NULL gives "".
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub(crate) unsafe fn cstr_to_string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// Maps a status to a Result, reading the thread-local message of a failure. Must be called
/// right after the failing call, on its thread (always so here: calls are synchronous).
pub(crate) fn check(code: sys::vkllm_status) -> Result<()> {
    if code == sys::VKLLM_OK {
        return Ok(());
    }
    // SAFETY: vkllm_last_error never returns NULL; we copy the text before any other call.
    let message = unsafe { cstr_to_string(sys::vkllm_last_error()) };
    Err(Error {
        status: Status::from_raw(code),
        message,
    })
}

pub(crate) fn invalid_argument(message: &str) -> Error {
    Error {
        status: Status::InvalidArgument,
        message: message.to_owned(),
    }
}
