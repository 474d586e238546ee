"""vkllm.Error, raised by every failing call, and the checks that raise it."""

import ctypes

from . import _ffi
from ._lib import lib


class Error(Exception):
    """A vkllm call failed: `code` is the vkllm_status, `message` the detail."""

    def __init__(self, code, message):
        super().__init__(f"{message} ({lib.vkllm_status_string(code).decode()})")
        self.code = code
        self.message = message


def check(code):
    if code != _ffi.VKLLM_OK:
        raise Error(code, lib.vkllm_last_error().decode(errors="replace"))


def live(handle, what):
    if not handle:
        raise Error(_ffi.VKLLM_ERR_INVALID_ARGUMENT, f"the {what} is closed")
    return handle


def sized(call):
    """Bytes from a C function with the buffer rules of vkllm_gguf_get_string: `call(buf,
    capacity, length)` is tried with a small buffer, then, when that is too small, with one of
    the length it reported (a refused call changes nothing, so the retry is the same call)."""
    n = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(64)
    code = call(buf, len(buf), ctypes.byref(n))
    if code == _ffi.VKLLM_ERR_BUFFER_TOO_SMALL:
        buf = ctypes.create_string_buffer(n.value + 1)
        code = call(buf, len(buf), ctypes.byref(n))
    check(code)
    return buf.raw[: n.value]
