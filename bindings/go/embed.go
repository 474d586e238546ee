package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Pooling is how the rows of an input become its embedding (vkllm_pooling: llama.cpp's pooling
// types). Its zero value is PoolingModel, so that EmbedOptions{} means the model's own.
type Pooling int32

const (
	PoolingModel Pooling = iota // the model's own (Model.Pooling)
	PoolingNone                 // one vector per token (EmbedTokens only)
	PoolingMean                 // the mean of every token's vector, [CLS] and [SEP] included
	PoolingCLS                  // the first token's
	PoolingLast                 // the last token's (decoder embedding models)
)

var poolingC = map[Pooling]C.vkllm_pooling{
	PoolingModel: C.VKLLM_POOLING_MODEL, PoolingNone: C.VKLLM_POOLING_NONE,
	PoolingMean: C.VKLLM_POOLING_MEAN, PoolingCLS: C.VKLLM_POOLING_CLS,
	PoolingLast: C.VKLLM_POOLING_LAST,
}

func poolingOf(c C.vkllm_pooling) Pooling {
	for p, v := range poolingC {
		if v == c {
			return p
		}
	}
	return PoolingNone
}

// EmbedOptions are what Embed and EmbedTokens do (vkllm_embed_params). The zero value is the
// library's default: the model's pooling, no normalization, no truncation.
type EmbedOptions struct {
	Pooling   Pooling
	Normalize bool // each vector scaled to unit L2 norm
	// Truncate cuts an input over MaxTokens (its end dropped, the model's end token kept)
	// instead of failing with ErrContextFull.
	Truncate  bool
	MaxTokens uint32 // 0: the session's context and the model's positions
}

func (o EmbedOptions) params() C.vkllm_embed_params {
	var p C.vkllm_embed_params
	C.vkllm_embed_params_init(&p)
	if c, ok := poolingC[o.Pooling]; ok {
		p.pooling = c
	} else {
		p.pooling = C.vkllm_pooling(-2) // unknown: the library refuses it, naming it
	}
	if o.Normalize {
		p.flags |= C.VKLLM_EMBED_NORMALIZE
	}
	if o.Truncate {
		p.flags |= C.VKLLM_EMBED_TRUNCATE
	}
	p.max_tokens = C.uint32_t(o.MaxTokens)
	return p
}

// Pooling returns the model's own pooling (<arch>.pooling_type; PoolingNone where the file
// states none).
func (m *Model) Pooling() (Pooling, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return 0, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	info, err := modelInfo(m.h)
	return poolingOf(info.pooling), err
}

// NEmbd returns the floats in one embedding (vkllm_model_info.n_embd).
func (s *Session) NEmbd() int { return s.nEmbd }

func (s *Session) rows(vectors []float32) [][]float32 {
	out := make([][]float32, len(vectors)/max(s.nEmbd, 1))
	for i := range out {
		out[i] = vectors[i*s.nEmbd : (i+1)*s.nEmbd]
	}
	return out
}

// Embed returns one embedding per text, each tokenized with the model's special tokens
// (vkllm_session_embed). PoolingNone is refused here: see EmbedTokens.
func (s *Session) Embed(texts []string, opts EmbedOptions) ([][]float32, error) {
	n := len(texts)
	// C memory: a pointer array passed to C may not hold Go pointers.
	arr := (**C.char)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0))) * C.size_t(n+1)))
	defer C.free(unsafe.Pointer(arr))
	ptrs := unsafe.Slice(arr, n+1)
	for i, t := range texts {
		ptrs[i] = C.CString(t)
		defer C.free(unsafe.Pointer(ptrs[i]))
	}
	out := make([]float32, n*s.nEmbd+1)
	p := opts.params()
	err := s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_embed(h, arr, C.size_t(n), &p, (*C.float)(&out[0]),
			C.size_t(n*s.nEmbd)))
	})
	if err != nil {
		return nil, err
	}
	return s.rows(out[:n*s.nEmbd]), nil
}

// EmbedTokens is Embed from token ids, used as given (add the model's special tokens
// yourself: Model.Tokenize) (vkllm_session_embed_tokens). With PoolingNone, or the model's own
// pooling when that is none, each input gives one vector per token, all of them in order,
// input by input; else one vector per input.
func (s *Session) EmbedTokens(inputs [][]int32, opts EmbedOptions) ([][]float32, error) {
	n := len(inputs)
	p := opts.params()
	none := opts.Pooling == PoolingNone || (opts.Pooling == PoolingModel && s.pooling == PoolingNone)
	rows := n
	if none {
		rows = 0
		limit := 0
		if opts.Truncate { // a cut input gives as many rows as the limit
			info, err := s.Info()
			if err != nil {
				return nil, err
			}
			limit = int(info.NCtx)
			if opts.MaxTokens > 0 {
				limit = min(limit, int(opts.MaxTokens))
			}
		}
		for _, in := range inputs {
			if limit > 0 {
				rows += min(len(in), limit)
			} else {
				rows += len(in)
			}
		}
	}
	word := C.size_t(unsafe.Sizeof(uintptr(0)))
	arr := (**C.int32_t)(C.malloc(word * C.size_t(n+1)))
	defer C.free(unsafe.Pointer(arr))
	lengths := (*C.size_t)(C.malloc(word * C.size_t(n+1)))
	defer C.free(unsafe.Pointer(lengths))
	ptrs, lens := unsafe.Slice(arr, n+1), unsafe.Slice(lengths, n+1)
	for i, in := range inputs {
		ptrs[i] = (*C.int32_t)(C.malloc(C.size_t(4 * (len(in) + 1))))
		defer C.free(unsafe.Pointer(ptrs[i]))
		copy(unsafe.Slice((*int32)(unsafe.Pointer(ptrs[i])), len(in)), in)
		lens[i] = C.size_t(len(in))
	}
	out := make([]float32, rows*s.nEmbd+1)
	err := s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_embed_tokens(h, arr, lengths, C.size_t(n), &p,
			(*C.float)(&out[0]), C.size_t(rows*s.nEmbd)))
	})
	if err != nil {
		return nil, err
	}
	return s.rows(out[:rows*s.nEmbd]), nil
}
