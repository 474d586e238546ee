package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"

vkllm_status vkllmgo_model_load(vkllm_runtime *runtime, const char *path, uintptr_t handle,
                                vkllm_model **out);
*/
import "C"

import (
	"runtime"
	"runtime/cgo"
	"unsafe"
)

// The steps below Generate: sessions of several sequences, prefill and batched decode with
// their logits, greedy decode chained on the device, rewinding a sequence, a session's
// counters, KV-cache sizes and kernel profile; and model loads that report progress.

// Session flags (SessionOptions.Flags).
const (
	SessionStreaming       = C.VKLLM_SESSION_STREAMING
	SessionRecordEveryStep = C.VKLLM_SESSION_RECORD_EVERY_STEP
	SessionProfile         = C.VKLLM_SESSION_PROFILE
)

// MaxChainedSteps is the most steps DecodeGreedy chains in one submission.
const MaxChainedSteps = C.VKLLM_MAX_CHAINED_STEPS

// SessionOptions shape a session (vkllm_session_params).
type SessionOptions struct {
	NCtx   uint32 // KV slots per sequence; 0: the model's training context
	NSeq   uint32 // independent sequences
	NBatch uint32 // prefill chunk
	Flags  uint32 // Session* flags
	NSink  uint32 // streaming: tokens kept at the start
	KVType int32  // KVF16, KVF32 or KVQ8_0: how the KV cache stores keys and values
}

// DefaultSessionOptions returns the library's defaults (vkllm_session_params_init).
func DefaultSessionOptions() SessionOptions {
	var p C.vkllm_session_params
	C.vkllm_session_params_init(&p)
	return SessionOptions{NCtx: uint32(p.n_ctx), NSeq: uint32(p.n_seq),
		NBatch: uint32(p.n_batch), Flags: uint32(p.flags), NSink: uint32(p.n_sink),
		KVType: int32(p.kv_type)}
}

func modelInfo(h *C.vkllm_model) (C.vkllm_model_info, error) {
	var info C.vkllm_model_info
	info.struct_size = C.size_t(unsafe.Sizeof(info))
	err := check(C.vkllm_model_get_info(h, &info))
	return info, err
}

// NewSessionWith creates a session with options (start from DefaultSessionOptions). The
// session keeps the model alive.
func NewSessionWith(m *Model, opts SessionOptions) (*Session, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return nil, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	info, err := modelInfo(m.h)
	if err != nil {
		return nil, err
	}
	var p C.vkllm_session_params
	C.vkllm_session_params_init(&p)
	p.n_ctx = C.uint32_t(opts.NCtx)
	p.n_seq = C.uint32_t(opts.NSeq)
	p.n_batch = C.uint32_t(opts.NBatch)
	p.flags = C.uint32_t(opts.Flags)
	p.n_sink = C.uint32_t(opts.NSink)
	p.kv_type = C.vkllm_kv_type(opts.KVType)
	var out *C.vkllm_session
	if err := check(C.vkllm_session_create(m.h, &p, &out)); err != nil {
		return nil, err
	}
	s := &Session{h: out, nVocab: int(info.n_vocab), nEmbd: int(info.n_embd),
		pooling: poolingOf(info.pooling)}
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

// use runs f with the open session's handle, holding the session, on a locked OS thread.
func (s *Session) use(f func(h *C.vkllm_session) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return f(s.h)
}

// NVocab returns the logits per row: the model's vocabulary size.
func (s *Session) NVocab() int { return s.nVocab }

// PositionOf returns the number of tokens in sequence seq's cache.
func (s *Session) PositionOf(seq uint32) (uint32, error) {
	var n C.uint32_t
	err := s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_get_position(h, C.uint32_t(seq), &n))
	})
	return uint32(n), err
}

// Truncate keeps the first nKeep positions of sequence seq and forgets the rest.
func (s *Session) Truncate(seq, nKeep uint32) error {
	return s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_truncate(h, C.uint32_t(seq), C.uint32_t(nKeep)))
	})
}

func int32Ptr(v []int32) *C.int32_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.int32_t)(unsafe.Pointer(&v[0]))
}

func uint32Ptr(v []uint32) *C.uint32_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.uint32_t)(unsafe.Pointer(&v[0]))
}

// EvalInto appends tokens to sequence seq (prefill, in chunks) and writes the logits after the
// last one into logits (NVocab floats), or nowhere when logits is nil.
func (s *Session) EvalInto(seq uint32, tokens []int32, logits []float32) error {
	var out *C.float
	if logits != nil {
		if len(logits) != s.nVocab {
			return &Error{Status: StatusInvalidArgument, Message: "EvalInto: logits must hold NVocab floats"}
		}
		out = (*C.float)(unsafe.Pointer(&logits[0]))
	}
	return s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_eval(h, C.uint32_t(seq), int32Ptr(tokens),
			C.size_t(len(tokens)), out))
	})
}

// Eval is EvalInto returning the logits.
func (s *Session) Eval(seq uint32, tokens []int32) ([]float32, error) {
	logits := make([]float32, s.nVocab)
	if err := s.EvalInto(seq, tokens, logits); err != nil {
		return nil, err
	}
	return logits, nil
}

// DecodeInto decodes one token for each of several distinct sequences in one step, writing
// len(tokens) rows of NVocab logits (row i: sequence seqs[i]) into logits, or nowhere when it
// is nil.
func (s *Session) DecodeInto(seqs []uint32, tokens []int32, logits []float32) error {
	if len(seqs) != len(tokens) {
		return &Error{Status: StatusInvalidArgument, Message: "Decode: as many sequences as tokens are needed"}
	}
	var out *C.float
	if logits != nil {
		if len(logits) != len(tokens)*s.nVocab || len(logits) == 0 {
			return &Error{Status: StatusInvalidArgument, Message: "DecodeInto: logits must hold len(tokens) x NVocab floats"}
		}
		out = (*C.float)(unsafe.Pointer(&logits[0]))
	}
	return s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_decode(h, uint32Ptr(seqs), int32Ptr(tokens),
			C.size_t(len(tokens)), out))
	})
}

// Decode is DecodeInto returning the rows, one slice per sequence.
func (s *Session) Decode(seqs []uint32, tokens []int32) ([][]float32, error) {
	logits := make([]float32, len(tokens)*s.nVocab)
	if len(tokens) == 0 {
		logits = nil
	}
	if err := s.DecodeInto(seqs, tokens, logits); err != nil {
		return nil, err
	}
	rows := make([][]float32, len(tokens))
	for i := range rows {
		rows[i] = logits[i*s.nVocab : (i+1)*s.nVocab : (i+1)*s.nVocab]
	}
	return rows, nil
}

// DecodeGreedy runs steps greedy decode steps for each sequence, chained in one submission:
// the first decodes tokens, each later one the token the step before chose. The result has
// one slice per step, with each sequence's choice.
func (s *Session) DecodeGreedy(seqs []uint32, tokens []int32, steps uint32) ([][]int32, error) {
	if len(seqs) != len(tokens) {
		return nil, &Error{Status: StatusInvalidArgument, Message: "DecodeGreedy: as many sequences as tokens are needed"}
	}
	n := len(tokens)
	out := make([]int32, n*int(steps)+1) // never empty, for &out[0]
	err := s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_decode_greedy(h, uint32Ptr(seqs), int32Ptr(tokens),
			C.size_t(n), C.uint32_t(steps), (*C.int32_t)(unsafe.Pointer(&out[0]))))
	})
	if err != nil {
		return nil, err
	}
	chosen := make([][]int32, steps)
	for st := range chosen {
		chosen[st] = out[st*n : (st+1)*n : (st+1)*n]
	}
	return chosen, nil
}

// SessionStats are a session's counters (vkllm_session_stats).
type SessionStats struct {
	CommandBuffersRecorded, Submits uint64
	TokensPrefilled, TokensDecoded  uint64
	PrefillMs, DecodeMs             float64
	KVCacheBytes                    uint64
}

// Stats returns the session's counters.
func (s *Session) Stats() (SessionStats, error) {
	var st C.vkllm_session_stats
	st.struct_size = C.size_t(unsafe.Sizeof(st))
	err := s.use(func(h *C.vkllm_session) error { return check(C.vkllm_session_get_stats(h, &st)) })
	return SessionStats{CommandBuffersRecorded: uint64(st.command_buffers_recorded),
		Submits: uint64(st.submits), TokensPrefilled: uint64(st.tokens_prefilled),
		TokensDecoded: uint64(st.tokens_decoded), PrefillMs: float64(st.prefill_ms),
		DecodeMs: float64(st.decode_ms), KVCacheBytes: uint64(st.kv_cache_bytes)}, err
}

// LayerKVBytes returns the K and V cache bytes of one layer of the model (all sequences).
func (s *Session) LayerKVBytes(layer uint32) (uint64, error) {
	var b C.uint64_t
	err := s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_get_layer_kv_bytes(h, C.uint32_t(layer), &b))
	})
	return uint64(b), err
}

// KernelTime is the device time of one compute kernel in a profiled session.
type KernelTime struct {
	Kernel     string
	Dispatches uint64
	Ms         float64
}

// Profile returns the device time per kernel since the session was created (with
// SessionProfile), most time first.
func (s *Session) Profile() ([]KernelTime, error) {
	var out []KernelTime
	err := s.use(func(h *C.vkllm_session) error {
		var n C.size_t
		if err := check(C.vkllm_session_get_profile(h, nil, 0, &n)); err != nil {
			return err
		}
		raw := make([]C.vkllm_kernel_time, int(n)+1) // never empty, for &raw[0]
		if err := check(C.vkllm_session_get_profile(h, &raw[0], n, &n)); err != nil {
			return err
		}
		out = make([]KernelTime, int(n))
		for i := range out {
			out[i] = KernelTime{Kernel: C.GoString(raw[i].kernel),
				Dispatches: uint64(raw[i].dispatches), Ms: float64(raw[i].ms)}
		}
		return nil
	})
	return out, err
}

// ModelOptions shape a model load (vkllm_model_params).
type ModelOptions struct {
	// Progress receives the fraction loaded (0 to 1); false stops the load (ErrCancelled,
	// nothing kept). A panic in it stops the load and is raised again from LoadModelWith.
	Progress func(fraction float32) bool
}

type progressState struct {
	progress func(float32) bool
	panic    any
}

//export vkllmgoOnProgress
func vkllmgoOnProgress(handle C.uintptr_t, fraction C.float) C.int32_t {
	st := cgo.Handle(handle).Value().(*progressState)
	if st.panic != nil {
		return 1
	}
	goOn := func() (ok bool) {
		// A Go panic must not unwind through the C frames: keep it and stop the load.
		defer func() {
			if p := recover(); p != nil {
				st.panic = p
				ok = false
			}
		}()
		return st.progress(float32(fraction))
	}()
	if !goOn {
		return 1
	}
	return 0
}

// LoadModelWith loads a model with options. The model keeps the runtime alive.
func LoadModelWith(r *Runtime, path string, opts ModelOptions) (*Model, error) {
	if opts.Progress == nil {
		return LoadModel(r, path)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	st := &progressState{progress: opts.Progress}
	handle := cgo.NewHandle(st)
	defer handle.Delete()
	var out *C.vkllm_model
	err := r.use(func(h *C.vkllm_runtime) error {
		return check(C.vkllmgo_model_load(h, cpath, C.uintptr_t(handle), &out))
	})
	if st.panic != nil {
		panic(st.panic)
	}
	if err != nil {
		return nil, err
	}
	m := &Model{h: out}
	runtime.SetFinalizer(m, (*Model).Close)
	return m, nil
}

// ChatTemplate returns the model's chat template (GGUF tokenizer.chat_template), "" when it
// has none.
func (m *Model) ChatTemplate() (string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return "", errClosed
	}
	return C.GoString(C.vkllm_model_get_chat_template(m.h)), nil
}
