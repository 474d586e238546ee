"""vkllm.Session: the KV caches of one or more sequences of a model, what is in them, and the
low-level steps that run the model (Session.generate and the other generating calls are in
generation.py)."""

import array
import collections
import ctypes
import os

from . import _ffi
from ._lib import int32s, lib, out_struct, params, uint32s
from .constants import ERR_BUFFER_TOO_SMALL, ERR_INVALID_ARGUMENT, KV_F16, OK, Pooling
from .errors import Error, check, live
from .generation import Generation


class SessionInfo(_ffi.vkllm_session_info):
    """What a session is: its context, sequences, chunk, KV type and memory."""


class SessionStats(_ffi.vkllm_session_stats):
    """What a session has done: command buffers, submits, tokens, time, KV bytes."""


KernelTime = collections.namedtuple("KernelTime", "kernel dispatches ms")
KernelTime.__doc__ = "Device time of one compute kernel in a profiled session, summed."


class Session(Generation):
    """KV caches of one or more sequences of a model. Used by one thread at a time; a
    generation in progress (a generate() iterator not yet exhausted or closed) holds it."""

    def __init__(self, model, n_ctx=0, n_seq=1, n_batch=None, flags=0, n_sink=None,
                 kv_type=KV_F16):
        self._handle = None
        self._busy = False
        self._cancel_asked = False
        self.last_result = None
        self.last_batch = None
        self.last_logprobs = None
        p = params(_ffi.vkllm_session_params, lib.vkllm_session_params_init)
        p.n_ctx = n_ctx
        p.n_seq = n_seq
        p.flags = flags
        p.kv_type = kv_type
        if n_batch is not None:
            p.n_batch = n_batch
        if n_sink is not None:
            p.n_sink = n_sink
        handle = ctypes.c_void_p()
        check(lib.vkllm_session_create(live(model._handle, "model"), ctypes.byref(p),
                                       ctypes.byref(handle)))
        self._handle = handle
        self.model = model

    def close(self):
        if getattr(self, "_handle", None):
            if self._busy:
                raise RuntimeError("vkllm.Session.close: a generation is in progress")
            lib.vkllm_session_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # A generator still holding the session keeps a reference to it, so it is not busy.
        if not getattr(self, "_busy", False):
            self.close()

    def _idle(self):
        h = live(self._handle, "session")
        if self._busy:
            raise RuntimeError("vkllm.Session: a generation is in progress on this session")
        return h

    def info(self):
        """SessionInfo: the context it got (n_ctx 0 asks for the model's, at most 4096), its
        sequences, prefill chunk, KV type, KV bytes and device memory."""
        s = out_struct(SessionInfo)
        check(lib.vkllm_session_get_info(live(self._handle, "session"), ctypes.byref(s)))
        return s

    def stats(self):
        s = out_struct(SessionStats)
        check(lib.vkllm_session_get_stats(self._idle(), ctypes.byref(s)))
        return s

    def cancel(self):
        """From any thread: stops the running generation (or prefill) at its next step or
        chunk; it ends as if stopped early (last_result.stop_reason STOP_CANCELLED). A cancel
        while nothing runs is dropped."""
        self._cancel_asked = True
        check(lib.vkllm_session_cancel(live(self._handle, "session")))

    # --- What the cache holds ----------------------------------------------------------
    def reset(self, seq=-1):
        """Empties sequence `seq`, or all of them."""
        check(lib.vkllm_session_reset(self._idle(), seq))

    def truncate(self, n_keep, seq=0):
        """Keeps the first n_keep positions of sequence `seq` and forgets the rest."""
        check(lib.vkllm_session_truncate(self._idle(), seq, n_keep))

    def position(self, seq=0):
        """Tokens in the sequence's cache so far."""
        n = ctypes.c_uint32(0)
        check(lib.vkllm_session_get_position(self._idle(), seq, ctypes.byref(n)))
        return n.value

    def tokens(self, seq=0):
        """The token ids in sequence `seq`'s cache, in position order."""
        handle = self._idle()
        n = ctypes.c_size_t(0)
        code = lib.vkllm_session_get_tokens(handle, seq, None, 0, ctypes.byref(n))
        if code not in (OK, ERR_BUFFER_TOO_SMALL):
            check(code)
        ids = (ctypes.c_int32 * max(n.value, 1))()
        check(lib.vkllm_session_get_tokens(handle, seq, ids, n.value, ctypes.byref(n)))
        return list(ids[: n.value])

    def save_state(self, seq=0):
        """Sequence `seq`'s state (its KV cache, position and token ids) as bytes, for
        load_state() on any session of the same model."""
        handle = self._idle()
        size = ctypes.c_size_t(0)
        check(lib.vkllm_session_get_state_size(handle, seq, ctypes.byref(size)))
        buf = ctypes.create_string_buffer(max(size.value, 1))
        check(lib.vkllm_session_state_save(handle, seq, buf, size.value, ctypes.byref(size)))
        return buf.raw[: size.value]

    def load_state(self, data, seq=0):
        """Replaces sequence `seq` with a state save_state() returned. vkllm.Error
        (ERR_FORMAT, ERR_INVALID_ARGUMENT), with the sequence unchanged, for bytes that are not
        an intact state of this model and session's settings."""
        data = bytes(data)
        check(lib.vkllm_session_state_load(self._idle(), seq, data, len(data)))

    def save_state_file(self, path, seq=0):
        check(lib.vkllm_session_state_save_file(self._idle(), seq, os.fsencode(path)))

    def load_state_file(self, path, seq=0):
        check(lib.vkllm_session_state_load_file(self._idle(), seq, os.fsencode(path)))

    def fork(self, src_seq, dst_seq, n_keep=None):
        """Replaces sequence `dst_seq` with the first `n_keep` positions of `src_seq` (all of
        them by default), copied on the device."""
        if n_keep is None:
            n_keep = self.position(src_seq)
        check(lib.vkllm_session_fork(self._idle(), src_seq, dst_seq, n_keep))

    # --- Low-level steps: they run the model and hand back logits (array.array('f'), one row
    # of model.info().n_vocab floats per token asked for) ------------------------------------
    def _rows(self, n):
        width = self.model.info().n_vocab
        return width, array.array("f", bytes(4 * width * n))

    def eval(self, tokens, seq=0, logits=True):
        """Appends `tokens` to sequence `seq` (prefill, in chunks); returns the logits after the
        last one (array.array('f')), or None with logits=False (nothing is copied back)."""
        h = self._idle()
        ids = int32s(tokens)
        if not logits:
            check(lib.vkllm_session_eval(h, seq, ids, len(tokens), None))
            return None
        _, row = self._rows(1)
        ptr = (ctypes.c_float * len(row)).from_buffer(row)
        check(lib.vkllm_session_eval(h, seq, ids, len(tokens), ptr))
        return row

    def decode(self, tokens, seqs=None):
        """One token for each of several distinct sequences (seqs; default 0, 1, ...), decoded
        together in one step; returns one row of logits per sequence."""
        h = self._idle()
        seqs = list(range(len(tokens))) if seqs is None else list(seqs)
        if len(seqs) != len(tokens):
            raise Error(ERR_INVALID_ARGUMENT, "decode: as many sequences as tokens are needed")
        width, rows = self._rows(len(tokens))
        ptr = (ctypes.c_float * max(len(rows), 1)).from_buffer(rows) if rows else None
        check(lib.vkllm_session_decode(h, uint32s(seqs), int32s(tokens), len(tokens), ptr))
        return [rows[i * width:(i + 1) * width] for i in range(len(tokens))]

    def decode_greedy(self, tokens, steps, seqs=None):
        """`steps` greedy decode steps for each sequence, chained in one submission: the first
        decodes `tokens`, each later one the token the step before chose. Returns a list of
        steps, each the chosen id of every sequence."""
        h = self._idle()
        seqs = list(range(len(tokens))) if seqs is None else list(seqs)
        if len(seqs) != len(tokens):
            raise Error(ERR_INVALID_ARGUMENT,
                        "decode_greedy: as many sequences as tokens are needed")
        out = (ctypes.c_int32 * max(steps * len(tokens), 1))()
        check(lib.vkllm_session_decode_greedy(h, uint32s(seqs), int32s(tokens), len(tokens),
                                              steps, out))
        n = len(tokens)
        return [list(out[s * n:(s + 1) * n]) for s in range(steps)]

    def eval_logits(self, tokens, seq=0, positions=None, log_softmax=False):
        """Appends `tokens` (ids) to sequence `seq` and returns the logits after each position
        (a list of rows of vkllm_model_info.n_vocab floats), or after each of `positions`
        (indices into `tokens`, any order); log_softmax: the log-probabilities over the
        tokenizer's ids instead (the padded ids past them -inf). See
        vkllm_session_eval_logits."""
        handle = self._idle()
        n_vocab = self.model.info().n_vocab
        p = params(_ffi.vkllm_eval_params, lib.vkllm_eval_params_init)
        p.kind = _ffi.VKLLM_LOGITS_LOG_SOFTMAX if log_softmax else _ffi.VKLLM_LOGITS_RAW
        rows = len(tokens)
        if positions is not None:
            p.positions = uint32s(positions)
            p.n_positions = len(positions)
            rows = len(positions)
        out = (ctypes.c_float * max(rows * n_vocab, 1))()
        check(lib.vkllm_session_eval_logits(handle, seq, int32s(tokens), len(tokens),
                                            ctypes.byref(p), out))
        return [list(out[r * n_vocab:(r + 1) * n_vocab]) for r in range(rows)]

    def _embed_params(self, pooling, normalize, truncate, max_tokens):
        p = params(_ffi.vkllm_embed_params, lib.vkllm_embed_params_init)
        p.pooling = Pooling.MODEL if pooling is None else pooling
        p.flags = ((_ffi.VKLLM_EMBED_NORMALIZE if normalize else 0) |
                   (_ffi.VKLLM_EMBED_TRUNCATE if truncate else 0))
        p.max_tokens = max_tokens
        return p

    def embed(self, texts, pooling=None, normalize=False, truncate=False, max_tokens=0):
        """One embedding (a list of vkllm_model_info.n_embd floats) per text of `texts` (a list
        of str), each tokenized with the model's special tokens. pooling: a Pooling (None: the
        model's own; NONE is refused here, see embed_tokens); normalize: unit L2 norm;
        truncate: cut a text over max_tokens (0: the session's context and the model's
        positions) instead of raising. See vkllm_session_embed."""
        handle = self._idle()
        texts = [t.encode() for t in texts]
        n_embd = self.model.info().n_embd
        p = self._embed_params(pooling, normalize, truncate, max_tokens)
        arr = (ctypes.c_char_p * max(len(texts), 1))(*texts)
        out = (ctypes.c_float * max(len(texts) * n_embd, 1))()
        check(lib.vkllm_session_embed(handle, arr, len(texts), ctypes.byref(p), out,
                                      len(texts) * n_embd))
        return [list(out[i * n_embd:(i + 1) * n_embd]) for i in range(len(texts))]

    def embed_tokens(self, inputs, pooling=None, normalize=False, truncate=False,
                     max_tokens=0):
        """embed() from token ids: `inputs` is a list of lists of ids, used as given (add the
        model's special tokens yourself: Tokenizer.encode(text, add_special=True)). Returns
        one vector per input, or with Pooling.NONE one list of vectors (one per token) per
        input. See vkllm_session_embed_tokens."""
        handle = self._idle()
        inputs = [list(i) for i in inputs]
        n_embd = self.model.info().n_embd
        p = self._embed_params(pooling, normalize, truncate, max_tokens)
        per_token = p.pooling == Pooling.NONE or (
            p.pooling == Pooling.MODEL and self.model.info().pooling == Pooling.NONE)
        arrays = [int32s(i) for i in inputs]
        ptrs = (ctypes.POINTER(ctypes.c_int32) * max(len(inputs), 1))(
            *[ctypes.cast(a, ctypes.POINTER(ctypes.c_int32)) for a in arrays])
        lengths = (ctypes.c_size_t * max(len(inputs), 1))(*[len(i) for i in inputs])
        rows = [len(i) if per_token else 1 for i in inputs]
        if per_token and truncate:  # a cut input gives fewer rows: as many as the limit
            limit = self.info().n_ctx
            if max_tokens > 0:
                limit = min(limit, max_tokens)
            rows = [min(r, limit) for r in rows]
        out_len = sum(rows) * n_embd
        out = (ctypes.c_float * max(out_len, 1))()
        check(lib.vkllm_session_embed_tokens(handle, ptrs, lengths, len(inputs),
                                             ctypes.byref(p), out, out_len))
        vectors = [list(out[r * n_embd:(r + 1) * n_embd]) for r in range(sum(rows))]
        if not per_token:
            return vectors
        result, at = [], 0
        for r in rows:
            result.append(vectors[at:at + r])
            at += r
        return result

    # --- Experimental (the header's VKLLM_EXPERIMENTAL): may change in any minor version -----
    def layer_kv_bytes(self, layer):
        """K and V cache bytes of one layer of the model (all sequences)."""
        v = ctypes.c_uint64(0)
        check(lib.vkllm_session_get_layer_kv_bytes(self._idle(), layer, ctypes.byref(v)))
        return v.value

    def profile(self):
        """Device time per kernel since the session was created (flags=SESSION_PROFILE), most
        time first: a list of KernelTime."""
        h = self._idle()
        n = ctypes.c_size_t(0)
        check(lib.vkllm_session_get_profile(h, None, 0, ctypes.byref(n)))
        arr = (_ffi.vkllm_kernel_time * max(n.value, 1))()
        check(lib.vkllm_session_get_profile(h, arr, n.value, ctypes.byref(n)))
        return [KernelTime(k.kernel.decode(errors="replace"), k.dispatches, k.ms)
                for k in arr[: n.value]]
