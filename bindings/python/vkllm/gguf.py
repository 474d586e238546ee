"""vkllm.Gguf: a model file's metadata and tensor table, read without loading the weights."""

import collections
import ctypes
import os

from . import _ffi
from ._lib import Owned, decode, lib, out_struct, text_field
from .constants import ERR_NOT_FOUND
from .errors import check, live, sized
from .tokenizer import Tokenizer


class ModelSummary(_ffi.vkllm_model_summary):
    """What a model file is (vkllm_model_summary); fields the file does not state are 0 or ''."""

    _raw = _ffi.vkllm_model_summary
    architecture = text_field(_raw.architecture)
    name = text_field(_raw.name)
    tokenizer_model = text_field(_raw.tokenizer_model)
    tokenizer_pre = text_field(_raw.tokenizer_pre)


GgufKey = collections.namedtuple("GgufKey", "name type element_type count")
GgufKey.__doc__ = ("A metadata key: its GGUF_* type; for arrays the elements' type and count, "
                   "for scalars element_type == type and count 1.")

TensorInfo = collections.namedtuple(
    "TensorInfo", "name type type_name dims n_elements n_bytes file_offset")
TensorInfo.__doc__ = "A tensor of a model file: ggml type, dims innermost first, its bytes."


def ggml_type_name(type_id):
    """The name of a ggml tensor type ("Q4_K"), or None for an id ggml does not define."""
    name = lib.vkllm_ggml_type_name(type_id)
    return name.decode() if name is not None else None


def metadata_keys(gguf_handle):
    """Every metadata key of a vkllm_gguf, in file order (GgufKey)."""
    out = []
    while True:
        k = out_struct(_ffi.vkllm_gguf_key)
        code = lib.vkllm_gguf_get_key(gguf_handle, len(out), ctypes.byref(k))
        if code == ERR_NOT_FOUND:
            return out
        check(code)
        out.append(GgufKey(decode(k.name), k.type, k.element_type, k.count))


def metadata_int(gguf_handle, key):
    v = ctypes.c_int64(0)
    check(lib.vkllm_gguf_get_int(gguf_handle, key.encode(), ctypes.byref(v)))
    return v.value


def metadata_float(gguf_handle, key):
    v = ctypes.c_double(0)
    check(lib.vkllm_gguf_get_float(gguf_handle, key.encode(), ctypes.byref(v)))
    return v.value


def metadata_bytes(gguf_handle, key):
    k = key.encode()
    return sized(lambda b, c, n: lib.vkllm_gguf_get_string(gguf_handle, k, b, c, n))


def metadata_text(gguf_handle, key):
    k = key.encode()
    return sized(lambda b, c, n: lib.vkllm_gguf_get_text(gguf_handle, k, b, c, n)).decode(
        errors="replace")


class Gguf(Owned):
    """An opened model file (vkllm_gguf): its metadata and tensor table, without the weights.
    Use as a context manager or call close(); strings read from it are copies."""
    _destroy = staticmethod(lib.vkllm_gguf_destroy)

    def __init__(self, path):
        self._handle = None
        handle = ctypes.c_void_p()
        check(lib.vkllm_gguf_open(os.fsencode(path), ctypes.byref(handle)))
        self._handle = handle

    def _h(self):
        return live(self._handle, "gguf file")

    def summary(self):
        s = out_struct(ModelSummary)
        check(lib.vkllm_gguf_get_summary(self._h(), ctypes.byref(s)))
        return s

    def keys(self):
        """Every metadata key, in file order (GgufKey)."""
        return metadata_keys(self._h())

    def get_int(self, key):
        """An integer or bool value; Error ERR_NOT_FOUND when absent, ERR_FORMAT when another
        type."""
        return metadata_int(self._h(), key)

    def get_float(self, key):
        """A float (or integer) value as a float."""
        return metadata_float(self._h(), key)

    def get_bytes(self, key):
        """A string value's bytes as stored (they may hold NUL bytes or invalid UTF-8)."""
        return metadata_bytes(self._h(), key)

    def get_string(self, key):
        return self.get_bytes(key).decode(errors="replace")

    def get_text(self, key):
        """Any value as readable text (arrays as their first elements and length)."""
        return metadata_text(self._h(), key)

    def tensors(self):
        """Every tensor, in file order (TensorInfo)."""
        out = []
        while True:
            t = out_struct(_ffi.vkllm_tensor_info)
            code = lib.vkllm_gguf_get_tensor(self._h(), len(out), ctypes.byref(t))
            if code == ERR_NOT_FOUND:
                return out
            check(code)
            out.append(TensorInfo(decode(t.name), t.type, t.type_name.decode() if t.type_name
                                  else None, tuple(t.dims[: t.n_dims]), t.n_elements, t.n_bytes,
                                  t.file_offset))

    def tokenizer(self):
        """The file's tokenizer (it needs no device; the file may be closed afterwards)."""
        return Tokenizer(self)
