"""vkllm.Tokenizer (text <-> token ids) and vkllm.Detokenizer (streamed text)."""

import ctypes

from . import _ffi
from ._lib import Owned, int32s, lib, out_struct, text_field
from .constants import (DETOKENIZE_SPECIAL, ERR_BUFFER_TOO_SMALL, OK, TOKENIZE_ADD_SPECIAL,
                        TOKENIZE_PARSE_SPECIAL)
from .errors import check, live, sized


class TokenizerInfo(_ffi.vkllm_tokenizer_info):
    """A tokenizer's vocabulary size and special ids (-1: none) (vkllm_tokenizer_info)."""

    model = text_field(_ffi.vkllm_tokenizer_info.model)
    pre = text_field(_ffi.vkllm_tokenizer_info.pre)


class Tokenizer(Owned):
    """Text <-> token ids. Tokenizer(gguf) builds one from a model file and owns it (close() or
    a context manager frees it); Model.tokenizer() lends the model's, valid while the model is
    open."""
    _destroy = staticmethod(lib.vkllm_tokenizer_destroy)

    def __init__(self, gguf):
        self._handle = None
        self._model = None
        handle = ctypes.c_void_p()
        check(lib.vkllm_tokenizer_create(gguf._h(), ctypes.byref(handle)))
        self._handle = handle

    @classmethod
    def _of_model(cls, model):
        tok = cls.__new__(cls)
        tok._handle = None
        tok._model = model
        return tok

    def _h(self):
        if self._model is not None:
            return lib.vkllm_model_get_tokenizer(live(self._model._handle, "model"))
        return live(self._handle, "tokenizer")

    def info(self):
        info = out_struct(TokenizerInfo)
        check(lib.vkllm_tokenizer_get_info(self._h(), ctypes.byref(info)))
        return info

    def tokenize(self, text, add_special=True, parse_special=False):
        """The token ids of `text` (str or UTF-8 bytes), BOS added where the model wants it.
        Special tokens are parsed only with parse_special=True (see Model.tokenize)."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        flags = (TOKENIZE_ADD_SPECIAL if add_special else 0) | (
            TOKENIZE_PARSE_SPECIAL if parse_special else 0)
        tok = self._h()
        n = ctypes.c_size_t(0)
        code = lib.vkllm_tokenizer_encode(tok, data, len(data), flags, None, 0, ctypes.byref(n))
        if code not in (OK, ERR_BUFFER_TOO_SMALL):
            check(code)
        ids = (ctypes.c_int32 * max(n.value, 1))()
        check(lib.vkllm_tokenizer_encode(tok, data, len(data), flags, ids, n.value,
                                         ctypes.byref(n)))
        return list(ids[: n.value])

    def detokenize(self, ids, special=False):
        """The text of a list of token ids."""
        arr = int32s(ids)
        flags = DETOKENIZE_SPECIAL if special else 0
        tok = self._h()
        return sized(lambda b, c, n: lib.vkllm_tokenizer_decode(tok, arr, len(ids), flags, b, c,
                                                                n)).decode(errors="replace")

    def token_to_piece(self, token, special=False):
        """The bytes of one token (maybe part of a UTF-8 character)."""
        tok, flags = self._h(), DETOKENIZE_SPECIAL if special else 0
        return sized(lambda b, c, n: lib.vkllm_tokenizer_get_piece(tok, token, flags, b, c, n))

    def is_end_of_generation(self, token):
        out = ctypes.c_int32(0)
        check(lib.vkllm_tokenizer_is_end_of_generation(self._h(), token, ctypes.byref(out)))
        return out.value != 0

    def detokenizer(self, special=False):
        """A Detokenizer for one stream of this tokenizer's ids."""
        return Detokenizer(self, special)


class Detokenizer(Owned):
    """Streaming detokenization: push(token) returns the text it completed, never ending inside
    a UTF-8 character; flush() ends the stream with what is held. One stream at a time; the
    tokenizer (and the model it may belong to) is kept alive by it."""
    _destroy = staticmethod(lib.vkllm_detokenizer_destroy)

    def __init__(self, tokenizer, special=False):
        self._handle = None
        handle = ctypes.c_void_p()
        check(lib.vkllm_detokenizer_create(tokenizer._h(), DETOKENIZE_SPECIAL if special else 0,
                                           ctypes.byref(handle)))
        self._handle = handle
        self.tokenizer = tokenizer

    def _h(self):
        self.tokenizer._h()  # raises once the tokenizer (or its model) is closed
        return live(self._handle, "detokenizer")

    def push(self, token):
        h = self._h()
        return sized(lambda b, c, n: lib.vkllm_detokenizer_push(h, token, b, c, n)).decode(
            errors="replace")

    def flush(self):
        h = self._h()
        return sized(lambda b, c, n: lib.vkllm_detokenizer_flush(h, b, c, n)).decode(
            errors="replace")
