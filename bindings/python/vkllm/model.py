"""vkllm.Model: a model's weights on a runtime's device, and what the model file says."""

import ctypes
import os

from . import _ffi
from . import gguf as _gguf
from ._lib import Owned, enum_field, lib, out_struct, params, text_field
from .chat import chat_render
from .constants import Pooling
from .errors import check, live
from .tokenizer import Tokenizer


class ModelInfo(_ffi.vkllm_model_info):
    """A loaded model's shape and memory (vkllm_model_info)."""

    architecture = text_field(_ffi.vkllm_model_info.architecture)
    pooling = enum_field(_ffi.vkllm_model_info.pooling, Pooling)


class Model(Owned):
    """A model's weights on a runtime's device (immutable; shared by sessions). Use as a
    context manager or call close(); the library keeps the memory until the last session of
    the model is gone."""
    _destroy = staticmethod(lib.vkllm_model_destroy)

    def __init__(self, runtime, path, progress=None):
        """progress(fraction) -> True/None to go on, False to cancel the load."""
        self._handle = None
        p = params(_ffi.vkllm_model_params, lib.vkllm_model_params_init)
        self._progress = _ffi.vkllm_progress_fn(lambda _u, f: 0 if progress(f) is not False
                                                else 1)
        if progress is not None:
            p.progress = self._progress
        handle = ctypes.c_void_p()
        check(lib.vkllm_model_load(live(runtime._handle, "runtime"), os.fsencode(path),
                                   ctypes.byref(p), ctypes.byref(handle)))
        self._handle = handle
        self.runtime = runtime

    def info(self):
        info = out_struct(ModelInfo)
        check(lib.vkllm_model_get_info(live(self._handle, "model"), ctypes.byref(info)))
        return info

    def tokenizer(self):
        """The model's own tokenizer (valid while the model is open; nothing to close)."""
        return Tokenizer._of_model(self)

    def chat_render(self, messages, **kwargs):
        """vkllm.chat_render with this model's template, BOS and EOS as the defaults."""
        return chat_render(messages, model=self, **kwargs)

    def chat_template(self):
        return lib.vkllm_model_get_chat_template(live(self._handle, "model")).decode(
            errors="replace")

    def tokenize(self, text, add_special=True, parse_special=False):
        """The token ids of `text` (str or UTF-8 bytes), BOS added where the model wants it.
        Special tokens are parsed only with parse_special=True: by default "<|im_end|>" in the
        text is plain text. Text rendered by a chat template needs parse_special=True (and
        add_special=False where the template writes BOS); Conversation and
        Session.create_chat_completion tokenize it so themselves."""
        return self.tokenizer().tokenize(text, add_special, parse_special)

    def detokenize(self, ids, special=False):
        """The text of a list of token ids."""
        return self.tokenizer().detokenize(ids, special)

    def is_end_of_generation(self, token):
        return self.tokenizer().is_end_of_generation(token)

    # The model file's metadata, read from the copy the model keeps: the file is not opened
    # again.
    def _gguf(self):
        return lib.vkllm_model_get_gguf(live(self._handle, "model"))

    def meta_keys(self):
        """The names of the metadata keys, in file order."""
        return [k.name for k in _gguf.metadata_keys(self._gguf())]

    def meta_int(self, key):
        return _gguf.metadata_int(self._gguf(), key)

    def meta_float(self, key):
        return _gguf.metadata_float(self._gguf(), key)

    def meta_string(self, key):
        return _gguf.metadata_bytes(self._gguf(), key).decode(errors="replace")

    def meta_text(self, key):
        """Any value as readable text (arrays as their first elements and length)."""
        return _gguf.metadata_text(self._gguf(), key)
