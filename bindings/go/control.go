package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Sampler is llama.cpp's sampler chain (vkllm_sampler) with its seed and the token history its
// penalties read, for logits of any session row. Its methods are serialised by a mutex.
type Sampler struct {
	mu sync.Mutex
	h  *C.vkllm_sampler
}

// NewSampler creates a sampler; with a model (nil: none) only its tokenizer's ids are
// candidates. With s.Grammar it keeps a parse state (see GrammarProgress); the grammar may be
// closed afterwards.
func NewSampler(m *Model, s Sampling) (*Sampler, error) {
	var tok *C.vkllm_tokenizer
	if m != nil {
		m.mu.RLock()
		defer m.mu.RUnlock()
		if m.h == nil {
			return nil, errClosed
		}
		tok = C.vkllm_model_get_tokenizer(m.h)
	}
	raw, free, err := s.raw()
	if err != nil {
		return nil, err
	}
	defer free()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out *C.vkllm_sampler
	if err := check(C.vkllm_sampler_create(tok, &raw, &out)); err != nil {
		return nil, err
	}
	sp := &Sampler{h: out}
	runtime.SetFinalizer(sp, (*Sampler).Close)
	return sp, nil
}

// Close releases the sampler. Idempotent.
func (s *Sampler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h != nil {
		C.vkllm_sampler_destroy(s.h)
		s.h = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// call runs f on the live handle, on a locked OS thread (the error message is thread-local).
func (s *Sampler) call(f func(h *C.vkllm_sampler) C.vkllm_status) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(f(s.h))
}

// Sample chooses a token from one row of logits (the model's n_vocab). The choice is not
// recorded: Accept the token the sequence keeps.
func (s *Sampler) Sample(logits []float32) (int32, error) {
	var token C.int32_t
	var ptr *C.float
	if len(logits) > 0 {
		ptr = (*C.float)(unsafe.Pointer(&logits[0]))
	}
	err := s.call(func(h *C.vkllm_sampler) C.vkllm_status {
		return C.vkllm_sampler_sample(h, ptr, C.size_t(len(logits)), &token)
	})
	return int32(token), err
}

// Accept adds a token of the sequence (prompt or generated) to the penalties' history.
func (s *Sampler) Accept(token int32) error {
	return s.call(func(h *C.vkllm_sampler) C.vkllm_status {
		return C.vkllm_sampler_accept(h, C.int32_t(token))
	})
}

// Reset forgets the history and restarts the draws from the seed.
func (s *Sampler) Reset() error {
	return s.call(func(h *C.vkllm_sampler) C.vkllm_status { return C.vkllm_sampler_reset(h) })
}

// Seed returns the seed the draws come from (the one drawn for SeedRandom).
func (s *Sampler) Seed() (uint64, error) {
	var seed C.uint64_t
	err := s.call(func(h *C.vkllm_sampler) C.vkllm_status { return C.vkllm_sampler_get_seed(h, &seed) })
	return uint64(seed), err
}

// Cancel stops the session's running generation or prefill at its next decode step or prefill
// chunk (vkllm_session_cancel); it may be called from any goroutine, also while another one is
// inside Generate. That call ends with an *Error of StatusCancelled. A Cancel while nothing runs
// is dropped; on a closed session it does nothing.
func (s *Session) Cancel() {
	s.cancelMu.Lock()
	defer s.cancelMu.Unlock()
	if s.h != nil {
		C.vkllm_session_cancel(s.h)
	}
}

// KV cache types (SessionOptions.KVType, SessionInfo.KVType).
const (
	KVF16  = C.VKLLM_KV_F16
	KVF32  = C.VKLLM_KV_F32
	KVQ8_0 = C.VKLLM_KV_Q8_0
)

// SessionInfo is what a session is (vkllm_session_info).
type SessionInfo struct {
	NCtx, NSeq, NBatch, NSink, Flags uint32
	KVType                           int32
	KVCacheBytes                     uint64
	DeviceBytes                      uint64 // KV caches, activations and step buffers
}

// Info reports the session's context (nCtx 0 asks for the model's, at most 4096), sequences,
// prefill chunk, KV type and memory.
func (s *Session) Info() (SessionInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return SessionInfo{}, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var raw C.vkllm_session_info
	raw.struct_size = C.size_t(unsafe.Sizeof(raw))
	if err := check(C.vkllm_session_get_info(s.h, &raw)); err != nil {
		return SessionInfo{}, err
	}
	return SessionInfo{
		NCtx: uint32(raw.n_ctx), NSeq: uint32(raw.n_seq), NBatch: uint32(raw.n_batch),
		NSink: uint32(raw.n_sink), Flags: uint32(raw.flags), KVType: int32(raw.kv_type),
		KVCacheBytes: uint64(raw.kv_cache_bytes), DeviceBytes: uint64(raw.device_bytes),
	}, nil
}

// GenerateBatch generates for several prompts at once (vkllm_session_generate_batch): prompt i in
// sequence i (see NewSessionWith), all decoded together one step per token, each chosen by
// samplers[i] (nil: greedy; samplers may be nil for all greedy). Of opts, MaxTokens and
// IgnoreEOG apply. It returns each sequence's generated tokens; after Cancel, the tokens so far
// and an *Error of StatusCancelled.
func (s *Session) GenerateBatch(prompts [][]int32, samplers []*Sampler,
	opts GenerateOptions) ([][]int32, error) {
	if samplers == nil {
		samplers = make([]*Sampler, len(prompts))
	}
	if len(samplers) != len(prompts) {
		return nil, &Error{Status: StatusInvalidArgument, Message: "GenerateBatch: one sampler (or nil) per prompt"}
	}
	seen := map[*Sampler]bool{}
	for _, sp := range samplers {
		if sp != nil && seen[sp] {
			return nil, &Error{Status: StatusInvalidArgument, Message: "GenerateBatch: a sampler is shared by two sequences"}
		}
		seen[sp] = sp != nil
	}
	for _, sp := range samplers {
		if sp != nil {
			sp.mu.Lock()
			defer sp.mu.Unlock()
			if sp.h == nil {
				return nil, errClosed
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return nil, errClosed
	}
	// The sequences and their arrays in C memory: they hold pointers.
	n := len(prompts)
	var seqs *C.vkllm_batch_sequence
	if n > 0 {
		seqs = (*C.vkllm_batch_sequence)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.vkllm_batch_sequence{}))))
		defer C.free(unsafe.Pointer(seqs))
	}
	list := unsafe.Slice(seqs, n)
	room := int(opts.MaxTokens)
	if room == 0 {
		room = 1
	}
	for i, prompt := range prompts {
		q := &list[i]
		q.struct_size = C.size_t(unsafe.Sizeof(*q))
		q.seq = C.uint32_t(i)
		if len(prompt) > 0 {
			q.prompt = (*C.int32_t)(C.malloc(C.size_t(len(prompt)) * 4))
			defer C.free(unsafe.Pointer(q.prompt))
			copy(unsafe.Slice((*int32)(unsafe.Pointer(q.prompt)), len(prompt)), prompt)
		}
		q.n_prompt = C.size_t(len(prompt))
		if samplers[i] != nil {
			q.sampler = samplers[i].h
		}
		q.tokens = (*C.int32_t)(C.malloc(C.size_t(room) * 4))
		defer C.free(unsafe.Pointer(q.tokens))
	}
	var params C.vkllm_generate_params
	C.vkllm_generate_params_init(&params)
	params.max_tokens = C.uint32_t(opts.MaxTokens)
	if opts.IgnoreEOG {
		params.ignore_eog = 1
	}
	runtime.LockOSThread()
	status := C.vkllm_session_generate_batch(s.h, seqs, C.size_t(n), &params)
	err := check(status)
	runtime.UnlockOSThread()
	if status != C.VKLLM_OK && status != C.VKLLM_ERR_CANCELLED {
		return nil, err
	}
	out := make([][]int32, n)
	for i := range list {
		got := unsafe.Slice((*int32)(unsafe.Pointer(list[i].tokens)), int(list[i].n_generated))
		out[i] = append([]int32(nil), got...)
	}
	return out, err
}

// gguf runs f on the model's metadata view (vkllm_model_get_gguf): the file is not opened again.
func (m *Model) gguf(f func(g *C.vkllm_gguf) C.vkllm_status) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(f(C.vkllm_model_get_gguf(m.h)))
}

// MetaKeys returns the names of the model file's metadata keys, in file order.
func (m *Model) MetaKeys() ([]string, error) {
	var names []string
	for {
		var key C.vkllm_gguf_key
		key.struct_size = C.size_t(unsafe.Sizeof(key))
		err := m.gguf(func(g *C.vkllm_gguf) C.vkllm_status {
			return C.vkllm_gguf_get_key(g, C.size_t(len(names)), &key)
		})
		if e, ok := err.(*Error); ok && e.Status == StatusNotFound {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		names = append(names, C.GoString(key.name))
	}
}

// MetaInt returns an integer (or bool) metadata value.
func (m *Model) MetaInt(key string) (int64, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var v C.int64_t
	err := m.gguf(func(g *C.vkllm_gguf) C.vkllm_status { return C.vkllm_gguf_get_int(g, ckey, &v) })
	return int64(v), err
}

// MetaFloat returns a float (or integer) metadata value.
func (m *Model) MetaFloat(key string) (float64, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var v C.double
	err := m.gguf(func(g *C.vkllm_gguf) C.vkllm_status { return C.vkllm_gguf_get_float(g, ckey, &v) })
	return float64(v), err
}

// MetaString returns a string metadata value.
func (m *Model) MetaString(key string) (string, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var n C.size_t
	err := m.gguf(func(g *C.vkllm_gguf) C.vkllm_status {
		status := C.vkllm_gguf_get_string(g, ckey, nil, 0, &n)
		if status == C.VKLLM_ERR_BUFFER_TOO_SMALL {
			return C.VKLLM_OK
		}
		return status
	})
	if err != nil {
		return "", err
	}
	buf := (*C.char)(C.malloc(n + 1))
	defer C.free(unsafe.Pointer(buf))
	err = m.gguf(func(g *C.vkllm_gguf) C.vkllm_status {
		return C.vkllm_gguf_get_string(g, ckey, buf, n+1, &n)
	})
	if err != nil {
		return "", err
	}
	return C.GoStringN(buf, C.int(n)), nil
}
