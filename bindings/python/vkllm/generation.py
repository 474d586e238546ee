"""Generation on a session: Session.generate (streamed text), generate_batch (several prompts
at once) and create_chat_completion (OpenAI's shape). Session inherits them from Generation."""

import ctypes

from . import _ffi
from ._lib import enum_field, int32s, lib, out_struct, params, stop_strings
from ._stream import Stream
from .completion import create_chat_completion
from .constants import GrammarProgress, StopReason
from .errors import check, live
from .grammar import grammar_of
from .sampler import sampling_params


class GenerateResult(_ffi.vkllm_generate_result):
    """What a generation did: prompt tokens, generated tokens, why it stopped (stop_reason, a
    StopReason), timings, the seed, and whether the text is a finished string of the grammar
    (grammar_progress, a GrammarProgress: INCOMPLETE when a cap, a stop string or a cancel cut
    it short, so it must not be parsed as the grammar's language; COMPLETE without a
    grammar)."""

    stop_reason = enum_field(_ffi.vkllm_generate_result.stop_reason, StopReason)
    grammar_progress = enum_field(_ffi.vkllm_generate_result.grammar_progress, GrammarProgress)


class Generation:
    """The generating calls of a Session (see session.py for the rest)."""

    def generate(self, prompt, max_tokens=256, temperature=0.8, top_k=40, top_p=0.95,
                 min_p=0.05, repeat_penalty=1.0, repeat_last_n=64, seed=0, stop=(), seq=0,
                 steps_per_submit=0, ignore_eog=False, presence_penalty=0.0,
                 frequency_penalty=0.0, typical_p=1.0, logit_bias=None, logprobs=False,
                 top_logprobs=0, grammar=None, json_schema=None):
        """Appends `prompt` (token ids) to sequence `seq` and yields the generated text as it
        streams, piece by piece (str; never half a UTF-8 character). The defaults are C's
        (vkllm_sampling_params_init); temperature 0: greedy.

        Stopping early (break, close() on the iterator, or dropping it) cancels the generation
        on the library's side; the session stays usable. Afterwards `last_result` holds the
        GenerateResult (stop_reason STOP_CANCELLED when stopped early). A failure raises
        vkllm.Error from the iteration. steps_per_submit: decode steps per submission, greedy
        ones or sampled ones the device's sampler takes (0: the library's choice; see
        vkllm_generate_params). ignore_eog: end-of-generation tokens are generated and decoded
        like any other (only max_tokens, a stop string or stopping early ends it), for
        benchmarks and comparisons with other runners.

        max_tokens=0 only prefills: the prompt goes into the cache and nothing is yielded
        (last_result.n_generated 0, STOP_MAX_TOKENS); position() grows by len(prompt), so a
        later generate continues after it. As for any generation, the work runs as the iterator
        is consumed: list(session.generate(system_prompt, max_tokens=0)).

        The sampler chain is Sampler's: presence_penalty, frequency_penalty, typical_p and
        logit_bias ({token: bias}, float("-inf") bans) as there; seed=SEED_RANDOM draws a
        seed, reported as last_result.seed.

        logprobs (or top_logprobs > 0): `last_logprobs` gets, for each generated token, a tuple
        (token, logprob, [(id, logprob), ...]) with the top_logprobs (0 to MAX_TOP_LOGPROBS)
        most likely ids at its position, most likely first: the model's log-probabilities,
        before temperature and penalties, computed on the device (vkllm_logprobs_fn).

        grammar (a Grammar, or GBNF text) or json_schema (a dict, or JSON text) constrains the
        generated text to the grammar's language: it stops (STOP_END_OF_GENERATION) when the
        model ends a complete text or when nothing more can follow. A bad grammar or schema
        raises vkllm.Error here, before anything runs."""
        handle = self._idle()
        ids = int32s(prompt)
        compiled, _ = grammar_of(self.model, grammar, json_schema)
        sp, biases = sampling_params(
            temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed,
            presence_penalty, frequency_penalty, typical_p, logit_bias, compiled)
        gp = params(_ffi.vkllm_generate_params, lib.vkllm_generate_params_init)
        gp.seq = seq
        gp.max_tokens = max_tokens
        gp.steps_per_submit = steps_per_submit
        gp.ignore_eog = 1 if ignore_eog else 0
        gp.top_logprobs = top_logprobs
        self.last_logprobs = [] if logprobs or top_logprobs else None
        stop_arr, n_stop = stop_strings(stop)
        if n_stop:
            gp.stop = stop_arr
            gp.n_stop = n_stop
        # The worker's vkllm_session_generate reads the stop strings, the biases and the
        # grammar: alive till then, even if the Grammar is closed before the stream starts.
        keep_alive = (stop_arr, biases, compiled._ref if compiled else None)
        return self._stream(handle, ids, len(prompt), sp, gp, keep_alive)

    def _stream(self, handle, ids, n_prompt, sp, gp, keep_alive):
        stream = Stream()
        reports = self.last_logprobs

        def on_token(_user, _token, text, length):
            return stream.put(ctypes.string_at(text, length).decode(errors="replace")
                              if length else None)

        def on_logprobs(_user, token, logprob, top, n_top):
            reports.append((token, logprob, [(top[i].token, top[i].logprob)
                                             for i in range(n_top)]))
            return stream.stopping()

        callbacks = (_ffi.vkllm_token_fn(on_token),
                     _ffi.vkllm_logprobs_fn(on_logprobs) if reports is not None
                     else _ffi.vkllm_logprobs_fn())
        gp.on_token, gp.on_logprobs = callbacks
        result = out_struct(GenerateResult)

        def call():
            return lib.vkllm_session_generate(handle, ids, n_prompt, ctypes.byref(sp),
                                              ctypes.byref(gp), ctypes.byref(result))

        def finished():
            self.last_result = result

        yield from stream.run(self, call, finished, "vkllm-generate")
        del callbacks, keep_alive  # alive until the library is done with them

    def generate_batch(self, prompts, max_tokens=256, samplers=None, ignore_eog=False):
        """Generates for several prompts at once, prompt i in sequence i (the session needs
        n_seq >= len(prompts)), all decoded together one step per token; samplers[i] (a
        Sampler, or None for greedy) chooses sequence i's tokens. Returns one list of token ids
        per prompt. Raises vkllm.Error(ERR_CANCELLED) after cancel(), with `last_batch` holding
        the tokens so far."""
        handle = self._idle()
        samplers = samplers or [None] * len(prompts)
        if len(samplers) != len(prompts):
            raise ValueError("one sampler (or None) per prompt")
        seqs = (_ffi.vkllm_batch_sequence * max(len(prompts), 1))()
        arrays = []  # what the sequences point to, alive through the call
        for i, prompt in enumerate(prompts):
            ids, out = int32s(prompt), (ctypes.c_int32 * max(max_tokens, 1))()
            arrays += [ids, out]
            seqs[i].struct_size = ctypes.sizeof(_ffi.vkllm_batch_sequence)
            seqs[i].seq = i
            seqs[i].prompt = ids
            seqs[i].n_prompt = len(prompt)
            seqs[i].sampler = live(samplers[i]._handle, "sampler") if samplers[i] else None
            seqs[i].tokens = out
        gp = params(_ffi.vkllm_generate_params, lib.vkllm_generate_params_init)
        gp.max_tokens = max_tokens
        gp.ignore_eog = 1 if ignore_eog else 0
        self._busy = True
        try:
            code = lib.vkllm_session_generate_batch(handle, seqs, len(prompts), ctypes.byref(gp))
        finally:
            self._busy = False
        self.last_batch = [list(seqs[i].tokens[: seqs[i].n_generated])
                           for i in range(len(prompts))]
        check(code)
        return self.last_batch

    # Answers OpenAI-style messages (completion.py, built on Conversation).
    create_chat_completion = create_chat_completion
