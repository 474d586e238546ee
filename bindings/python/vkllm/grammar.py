"""vkllm.Grammar: output an app can parse. GBNF text or a JSON Schema compiled for a vocabulary
constrains what a Sampler or a generation may choose."""

import ctypes
import json

from ._lib import encode, lib
from .errors import check, live, sized
from .tokenizer import Tokenizer


def _schema_text(schema):
    """A JSON Schema as the JSON text the library reads: a str is taken as it is, anything else
    (a dict, True) is json.dumps'ed."""
    return (schema if isinstance(schema, str) else json.dumps(schema)).encode()


def _vocabulary(model_or_tokenizer):
    """The vkllm_tokenizer of a Model or a Tokenizer."""
    if isinstance(model_or_tokenizer, Tokenizer):
        return model_or_tokenizer._h()
    return lib.vkllm_model_get_tokenizer(live(model_or_tokenizer._handle, "model"))


class _GrammarRef:
    """Owns a vkllm_grammar until its last Python reference goes: the Grammar's, and those of
    the generations given it that have not run yet (Grammar.close() must not free a handle one
    of them will still pass to the library; the library keeps its own once a sampler or a
    generation has started)."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        lib.vkllm_grammar_destroy(self.handle)


class Grammar:
    """A grammar compiled for a vocabulary (vkllm_grammar): generated text must be a string of
    its language. Grammar(model, gbnf, root=None) compiles GBNF text (llama.cpp's format; root:
    the rule to start from, "root" by default) for a Model's or Tokenizer's vocabulary;
    Grammar.from_json_schema(model, schema) compiles a JSON Schema (a dict, or JSON text). A bad
    grammar raises vkllm.Error (ERR_INVALID_ARGUMENT, "line L, column C: ..."); a schema keyword
    the converter cannot enforce raises ERR_UNSUPPORTED naming it. Read-only once compiled: any
    number of Samplers and generations share it, and they keep working after close(). Use as a
    context manager or call close()."""

    def __init__(self, model, gbnf, root=None):
        self._ref = None
        handle = ctypes.c_void_p()
        check(lib.vkllm_grammar_create(
            _vocabulary(model), gbnf.encode() if isinstance(gbnf, str) else bytes(gbnf),
            encode(root), ctypes.byref(handle)))
        self._ref = _GrammarRef(handle)

    @classmethod
    def from_json_schema(cls, model, schema):
        g = cls.__new__(cls)
        g._ref = None
        handle = ctypes.c_void_p()
        check(lib.vkllm_grammar_create_from_json_schema(
            _vocabulary(model), _schema_text(schema), ctypes.byref(handle)))
        g._ref = _GrammarRef(handle)
        return g

    @property
    def _handle(self):
        return self._ref.handle if self._ref is not None else None

    def close(self):
        self._ref = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def json_schema_to_gbnf(schema):
    """The GBNF text a JSON Schema (a dict, or JSON text) converts to, to read or edit and pass
    to Grammar."""
    text = _schema_text(schema)
    return sized(lambda b, c, n: lib.vkllm_json_schema_to_gbnf(text, b, c, n)).decode()


def grammar_of(model, grammar, json_schema):
    """The Grammar that grammar= or json_schema= asks for, and whether it was compiled here
    (for `model`) and is the caller's to close."""
    if grammar is not None and json_schema is not None:
        raise ValueError("pass grammar= or json_schema=, not both")
    if isinstance(grammar, Grammar):
        return grammar, False
    if grammar is None and json_schema is None:
        return None, False
    if model is None:
        raise ValueError("a grammar given as text needs a model to compile it for")
    if grammar is not None:
        return Grammar(model, grammar), True
    return Grammar.from_json_schema(model, json_schema), True
