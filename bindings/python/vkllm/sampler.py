"""vkllm.Sampler: the sampling chain on its own, for any row of logits; and the sampling
params that Session.generate and Conversation.reply pass the library."""

import array
import ctypes

from . import _ffi
from ._lib import Owned, int32s, lib, named, params
from .constants import GrammarProgress
from .errors import check, live
from .grammar import grammar_of


def sampling_params(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0,
                    repeat_last_n=64, seed=0, presence_penalty=0.0, frequency_penalty=0.0,
                    typical_p=1.0, logit_bias=None, grammar=None):
    """vkllm_sampling_params from keyword arguments, and the bias array it points to (keep it
    alive while the params are in use). logit_bias: {token: bias}, float("-inf") bans;
    grammar: a Grammar (kept open by the caller while the params are in use)."""
    sp = params(_ffi.vkllm_sampling_params, lib.vkllm_sampling_params_init)
    sp.temperature = temperature
    sp.top_k = top_k
    sp.top_p = top_p
    sp.min_p = min_p
    sp.repeat_penalty = repeat_penalty
    sp.repeat_last_n = repeat_last_n
    sp.seed = seed
    sp.presence_penalty = presence_penalty
    sp.frequency_penalty = frequency_penalty
    sp.typical_p = typical_p
    items = sorted((logit_bias or {}).items())
    bias = _ffi.vkllm_logit_bias
    biases = (bias * max(len(items), 1))(*[bias(t, b) for t, b in items])
    if items:
        sp.logit_bias = biases
        sp.n_logit_bias = len(items)
    if grammar is not None:
        sp.grammar = live(grammar._handle, "grammar")
    return sp, biases


class Sampler(Owned):
    """llama.cpp's sampler chain (logit bias, repetition/presence/frequency penalties, top-k,
    typical, top-p, min-p, temperature) with its seed and token history, for the logits of any
    session row. `model` (optional) limits the candidates to its tokenizer's ids. The keyword
    arguments and their defaults are Session.generate's; seed=SEED_RANDOM draws one (see
    `seed`). grammar (a Grammar, or GBNF text compiled for `model`) or json_schema (a dict or
    JSON text, compiled for `model`) constrains the tokens it chooses (see progress()). Use as
    a context manager or call close()."""
    _destroy = staticmethod(lib.vkllm_sampler_destroy)

    def __init__(self, model=None, grammar=None, json_schema=None, **sampling):
        self._handle = None
        compiled, owned = grammar_of(model, grammar, json_schema)
        try:
            sp, biases = sampling_params(grammar=compiled, **sampling)
            tok = (lib.vkllm_model_get_tokenizer(live(model._handle, "model"))
                   if model is not None else None)
            handle = ctypes.c_void_p()
            check(lib.vkllm_sampler_create(tok, ctypes.byref(sp), ctypes.byref(handle)))
            del biases  # copied by the library
        finally:
            if owned:
                compiled.close()  # the sampler holds its own reference
        self._handle = handle
        self.model = model

    def _h(self):
        return live(self._handle, "sampler")

    def sample(self, logits):
        """A token chosen from one row of logits (a sequence of floats: the model's n_vocab).
        It is not recorded: call accept() with the token the sequence keeps."""
        row = (ctypes.c_float * max(len(logits), 1))(*logits)
        token = ctypes.c_int32(0)
        check(lib.vkllm_sampler_sample(self._h(), row, len(logits), ctypes.byref(token)))
        return token.value

    def accept(self, token):
        """A token of the sequence (prompt or generated), for the penalties; it advances the
        grammar, and raises for a token the grammar does not allow."""
        check(lib.vkllm_sampler_accept(self._h(), token))

    def accept_prompt(self, tokens):
        """Prompt tokens, for the penalties' history only: they do not advance the grammar
        (accept() does, for generated tokens)."""
        check(lib.vkllm_sampler_accept_prompt(self._h(), int32s(tokens), len(tokens)))

    def reset(self):
        """Forgets the history and restarts the draws from the seed."""
        check(lib.vkllm_sampler_reset(self._h()))

    @property
    def seed(self):
        """The seed the draws come from (the one drawn for SEED_RANDOM)."""
        out = ctypes.c_uint64(0)
        check(lib.vkllm_sampler_get_seed(self._h(), ctypes.byref(out)))
        return out.value

    def progress(self):
        """A GrammarProgress (INCOMPLETE, COMPLETE or FINISHED): where the sampler's grammar
        stands after the tokens accepted (FINISHED: the text is done, stop; COMPLETE without a
        grammar)."""
        out = _ffi.vkllm_grammar_progress(0)
        check(lib.vkllm_sampler_get_grammar_progress(self._h(), ctypes.byref(out)))
        return named(GrammarProgress, out.value)

    def apply_grammar(self, logits):
        """Sets to -inf each logit whose token the grammar does not allow next, for an app's own
        sampling chain. An array.array('f') is changed in place and returned; any other sequence
        of floats gives a new array.array('f')."""
        row = logits if isinstance(logits, array.array) and logits.typecode == "f" else \
            array.array("f", logits)
        ptr = (ctypes.c_float * max(len(row), 1)).from_buffer(row) if len(row) else None
        check(lib.vkllm_sampler_apply_grammar(self._h(), ptr, len(row)))
        return row
