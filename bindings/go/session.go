package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"

vkllm_status vkllmgo_generate(vkllm_session *session, const int32_t *prompt, size_t n_prompt,
                              const vkllm_sampling_params *sampling, uint32_t max_tokens,
                              int32_t ignore_eog, int32_t logprobs, int32_t top_logprobs,
                              uintptr_t handle, vkllm_generate_result *result);
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Session holds the KV cache of one sequence. The library allows one thread at a time on a
// session; the Go Session serialises its methods with a mutex, so it may be shared between
// goroutines (calls then wait for each other).
type Session struct {
	mu     sync.Mutex
	h      *C.vkllm_session
	nVocab int // logits per row
	nEmbd  int // floats per embedding
	// The model's own pooling, which Embed and EmbedTokens size their output by.
	pooling Pooling
	// Cancel reaches h without mu, which a running call holds; Close takes both.
	cancelMu sync.Mutex
}

// NewSession creates a session with one sequence of nCtx KV slots (0: the model's training
// context). The session keeps the model alive.
func NewSession(m *Model, nCtx uint32) (*Session, error) {
	opts := DefaultSessionOptions()
	opts.NCtx = nCtx
	return NewSessionWith(m, opts)
}

// NewSessionSequences creates a session with nSeq sequences of nCtx KV slots each. Methods
// without a seq argument work on sequence 0.
func NewSessionSequences(m *Model, nCtx, nSeq uint32) (*Session, error) {
	opts := DefaultSessionOptions()
	opts.NCtx = nCtx
	opts.NSeq = nSeq
	return NewSessionWith(m, opts)
}

// Close releases the session. Idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelMu.Lock()
	defer s.cancelMu.Unlock()
	if s.h != nil {
		C.vkllm_session_destroy(s.h)
		s.h = nil
		runtime.SetFinalizer(s, nil)
	}
	return nil
}

// Reset empties the sequence.
func (s *Session) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(C.vkllm_session_reset(s.h, -1))
}

// Position returns the number of tokens in the cache (the next token's position).
func (s *Session) Position() (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return 0, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var n C.uint32_t
	if err := check(C.vkllm_session_get_position(s.h, 0, &n)); err != nil {
		return 0, err
	}
	return uint32(n), nil
}

// EvalLogits appends tokens to the sequence and returns the logits after each of positions
// (indices into tokens, any order), or after every token when positions is nil: one row of
// vkllm_model_info.n_vocab values each. logSoftmax: the log-probabilities over the
// tokenizer's ids instead (the model's distribution; padded ids past them are -Inf). See
// vkllm_session_eval_logits.
func (s *Session) EvalLogits(tokens []int32, positions []uint32, logSoftmax bool) ([][]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return nil, errClosed
	}
	var params C.vkllm_eval_params
	C.vkllm_eval_params_init(&params)
	if logSoftmax {
		params.kind = C.VKLLM_LOGITS_LOG_SOFTMAX
	}
	rows := len(tokens)
	// C memory: a pointer to Go memory may not be stored in a struct passed to C.
	if positions != nil {
		rows = len(positions)
		pos := (*C.uint32_t)(C.malloc(C.size_t(4 * (len(positions) + 1))))
		defer C.free(unsafe.Pointer(pos))
		copy(unsafe.Slice((*uint32)(unsafe.Pointer(pos)), len(positions)), positions)
		params.positions = pos
		params.n_positions = C.size_t(len(positions))
	}
	out := make([]float32, rows*s.nVocab)
	var tp *C.int32_t
	if len(tokens) > 0 {
		tp = (*C.int32_t)(unsafe.Pointer(&tokens[0]))
	}
	var op *C.float
	if len(out) > 0 {
		op = (*C.float)(unsafe.Pointer(&out[0]))
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check(C.vkllm_session_eval_logits(s.h, 0, tp, C.size_t(len(tokens)), &params, op)); err != nil {
		return nil, err
	}
	result := make([][]float32, rows)
	for r := range result {
		result[r] = out[r*s.nVocab : (r+1)*s.nVocab]
	}
	return result, nil
}

// Sampling chooses the next token (vkllm_sampling_params).
type Sampling struct {
	Temperature   float32 // <= 0: greedy (argmax on the device)
	TopK          int32   // <= 0: off
	TopP          float32 // >= 1: off
	MinP          float32 // <= 0: off
	RepeatPenalty float32 // 1: off
	RepeatLastN   int32   // 0: penalties off; -1: every token
	Seed          uint64  // SeedRandom: one drawn from the system (Generation.Seed)
	// OpenAI's penalties, typical sampling (>= 1: off) and per-token biases
	// (math.Inf(-1) bans), in llama.cpp's chain: bias, penalties, top-k, typical, top-p,
	// min-p, temperature.
	PresencePenalty  float32
	FrequencyPenalty float32
	TypicalP         float32
	LogitBias        map[int32]float32
	// Grammar, when not nil, is the language the generated text must belong to; a generation
	// then stops (StopEndOfGeneration) when the model ends a complete text or when nothing more
	// can follow. It must be open while the sampler or generation is created.
	Grammar *Grammar
}

// SeedRandom asks for a seed from the system's random source.
const SeedRandom = ^uint64(0)

// DefaultSampling returns the library's defaults (temperature 0.8, top-k 40, top-p 0.95,
// min-p 0.05).
func DefaultSampling() Sampling {
	var p C.vkllm_sampling_params
	C.vkllm_sampling_params_init(&p)
	return Sampling{
		Temperature: float32(p.temperature), TopK: int32(p.top_k), TopP: float32(p.top_p),
		MinP: float32(p.min_p), RepeatPenalty: float32(p.repeat_penalty),
		RepeatLastN: int32(p.repeat_last_n), Seed: uint64(p.seed),
		PresencePenalty: float32(p.presence_penalty), FrequencyPenalty: float32(p.frequency_penalty),
		TypicalP: float32(p.typical_p),
	}
}

// Greedy returns sampling that always picks the most likely token.
func Greedy() Sampling {
	s := DefaultSampling()
	s.Temperature = 0
	return s
}

// raw returns the C params and a function, to call after the call that reads them, freeing
// the bias array they point to (C memory: cgo forbids Go memory holding Go pointers in a call's
// arguments) and letting go of the grammar, held open until then.
func (s Sampling) raw() (C.vkllm_sampling_params, func(), error) {
	var p C.vkllm_sampling_params
	C.vkllm_sampling_params_init(&p)
	p.temperature = C.float(s.Temperature)
	p.top_k = C.int32_t(s.TopK)
	p.top_p = C.float(s.TopP)
	p.min_p = C.float(s.MinP)
	p.repeat_penalty = C.float(s.RepeatPenalty)
	p.repeat_last_n = C.int32_t(s.RepeatLastN)
	p.seed = C.uint64_t(s.Seed)
	p.presence_penalty = C.float(s.PresencePenalty)
	p.frequency_penalty = C.float(s.FrequencyPenalty)
	p.typical_p = C.float(s.TypicalP)
	release := func() {}
	if s.Grammar != nil {
		h, done, err := s.Grammar.hold()
		if err != nil {
			return p, nil, err
		}
		p.grammar = h
		release = done
	}
	if len(s.LogitBias) == 0 {
		return p, release, nil
	}
	n := len(s.LogitBias)
	arr := (*C.vkllm_logit_bias)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.vkllm_logit_bias{}))))
	biases := unsafe.Slice(arr, n)
	i := 0
	for token, bias := range s.LogitBias {
		biases[i] = C.vkllm_logit_bias{token: C.int32_t(token), bias: C.float(bias)}
		i++
	}
	p.logit_bias = arr
	p.n_logit_bias = C.size_t(n)
	return p, func() { C.free(unsafe.Pointer(arr)); release() }, nil
}

// Token is one generated token and the text it completes (never half a UTF-8 character).
// At the end of a generation, text held back comes with ID -1.
type Token struct {
	ID   int32
	Text string
}

// StopReason says why a generation ended.
type StopReason int32

const (
	StopEndOfGeneration StopReason = C.VKLLM_STOP_END_OF_GENERATION
	StopMaxTokens       StopReason = C.VKLLM_STOP_MAX_TOKENS
	StopString          StopReason = C.VKLLM_STOP_STRING
	StopCancelled       StopReason = C.VKLLM_STOP_CANCELLED
)

// String names the reason as the C enum does, less its prefix ("MAX_TOKENS").
func (r StopReason) String() string {
	switch r {
	case StopEndOfGeneration:
		return "END_OF_GENERATION"
	case StopMaxTokens:
		return "MAX_TOKENS"
	case StopString:
		return "STRING"
	case StopCancelled:
		return "CANCELLED"
	}
	return fmt.Sprintf("StopReason(%d)", int32(r))
}

// Generation is what a generation did.
type Generation struct {
	NPrompt    int
	NGenerated int
	StopReason StopReason
	PrefillMs  float64
	DecodeMs   float64
	Seed       uint64 // the sampling seed used (the one drawn for SeedRandom)
	// Whether the text is a finished string of the sampling grammar: GrammarIncomplete when
	// MaxTokens, a stop string or a cancel cut it short, so it must not be parsed as the
	// grammar's language. GrammarComplete without a grammar.
	GrammarProgress GrammarProgress
}

// MaxTopLogprobs is the most alternatives a generated token reports.
const MaxTopLogprobs = C.VKLLM_MAX_TOP_LOGPROBS

// TokenLogprob is a token and its log-probability.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// TokenLogprobs is a generated token's log-probability in the model's distribution (the
// log-softmax of the raw logits over the tokenizer's ids, before temperature and penalties)
// and the most likely tokens at its position, most likely first (lowest id first on ties).
type TokenLogprobs struct {
	TokenLogprob
	Top []TokenLogprob
}

// generateState is what the C callbacks reach through a cgo.Handle.
type generateState struct {
	ctx        context.Context
	onToken    func(Token) bool
	onLogprobs func(TokenLogprobs) bool
	stopped    bool // onToken returned false
	panic      any  // a panic of onToken, re-raised after the C call returns
}

//export vkllmgoOnToken
func vkllmgoOnToken(handle C.uintptr_t, token C.int32_t, text *C.char, length C.size_t) C.int32_t {
	st := cgo.Handle(handle).Value().(*generateState)
	if st.panic != nil || st.stopped || st.ctx.Err() != nil {
		return 1
	}
	t := Token{ID: int32(token), Text: C.GoStringN(text, C.int(length))}
	goOn := func() (ok bool) {
		// A Go panic must not unwind through the C frames: keep it and stop the generation.
		defer func() {
			if p := recover(); p != nil {
				st.panic = p
				ok = false
			}
		}()
		return st.onToken(t)
	}()
	if !goOn {
		if st.panic == nil {
			st.stopped = true
		}
		return 1
	}
	return 0
}

//export vkllmgoOnLogprobs
func vkllmgoOnLogprobs(handle C.uintptr_t, token C.int32_t, logprob C.float,
	top *C.vkllm_token_logprob, nTop C.size_t) C.int32_t {
	st := cgo.Handle(handle).Value().(*generateState)
	if st.panic != nil || st.stopped || st.ctx.Err() != nil {
		return 1
	}
	r := TokenLogprobs{TokenLogprob: TokenLogprob{ID: int32(token), Logprob: float32(logprob)}}
	if nTop > 0 {
		for _, t := range unsafe.Slice(top, int(nTop)) {
			r.Top = append(r.Top, TokenLogprob{ID: int32(t.token), Logprob: float32(t.logprob)})
		}
	}
	goOn := func() (ok bool) {
		defer func() {
			if p := recover(); p != nil {
				st.panic = p
				ok = false
			}
		}()
		return st.onLogprobs(r)
	}()
	if !goOn {
		if st.panic == nil {
			st.stopped = true
		}
		return 1
	}
	return 0
}

//export vkllmgoOnPrefill
func vkllmgoOnPrefill(handle C.uintptr_t, done, total C.size_t) C.int32_t {
	st := cgo.Handle(handle).Value().(*generateState)
	if st.ctx.Err() != nil {
		return 1
	}
	return 0
}

// GenerateOptions bound a generation besides the sampling (the rest of vkllm_generate_params).
type GenerateOptions struct {
	// MaxTokens bounds the tokens generated. 0 (the zero value) only prefills: the prompt
	// goes into the cache, nothing is sampled or passed to onToken, and the position grows by
	// len(prompt).
	MaxTokens uint32
	// IgnoreEOG: end-of-generation tokens are generated and decoded like any other token, so
	// only MaxTokens or the callback ends the generation (for benchmarks and for comparisons
	// with runners that continue past an end token).
	IgnoreEOG bool
	// OnLogprobs, when not nil, receives each generated token's log-probability and its
	// TopLogprobs (0 to MaxTopLogprobs) most likely alternatives, computed on the device,
	// just before onToken receives the token; returning false stops the generation as
	// onToken's false does.
	OnLogprobs  func(TokenLogprobs) bool
	TopLogprobs int32
}

// Generate appends prompt to the sequence and generates up to maxTokens tokens, calling
// onToken for each. onToken returns true to go on; false stops the generation cleanly (nil
// error, StopCancelled). When ctx is done the library is told to stop at the next prefill
// chunk or token, and the error is an *Error with StatusCancelled that also matches ctx.Err()
// with errors.Is. As the library documents, the session stays usable after a cancellation, and
// every generated token but the last is in the cache.
//
// maxTokens 0 only prefills: the prompt goes into the cache and nothing is generated
// (NGenerated 0, StopMaxTokens, onToken never called); Position grows by len(prompt), so a
// later Generate continues after it (a system prompt prefilled now, answered later).
func (s *Session) Generate(ctx context.Context, prompt []int32, sampling Sampling,
	maxTokens uint32, onToken func(Token) bool) (Generation, error) {
	return s.GenerateWith(ctx, prompt, sampling, GenerateOptions{MaxTokens: maxTokens}, onToken)
}

// GenerateWith is Generate with every option.
func (s *Session) GenerateWith(ctx context.Context, prompt []int32, sampling Sampling,
	opts GenerateOptions, onToken func(Token) bool) (Generation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return Generation{}, errClosed
	}
	if err := ctx.Err(); err != nil {
		return Generation{}, &Error{Status: StatusCancelled, Message: err.Error(), cause: err}
	}
	st := &generateState{ctx: ctx, onToken: onToken, onLogprobs: opts.OnLogprobs}
	h := cgo.NewHandle(st)
	defer h.Delete()
	var ptr *C.int32_t
	if len(prompt) > 0 {
		ptr = (*C.int32_t)(unsafe.Pointer(&prompt[0]))
	}
	raw, free, err := sampling.raw()
	if err != nil {
		return Generation{}, err
	}
	defer free()
	var res C.vkllm_generate_result
	res.struct_size = C.size_t(unsafe.Sizeof(res))

	runtime.LockOSThread()
	var ignoreEOG C.int32_t
	if opts.IgnoreEOG {
		ignoreEOG = 1
	}
	var logprobs C.int32_t
	if opts.OnLogprobs != nil {
		logprobs = 1
	}
	status := C.vkllmgo_generate(s.h, ptr, C.size_t(len(prompt)), &raw,
		C.uint32_t(opts.MaxTokens), ignoreEOG, logprobs, C.int32_t(opts.TopLogprobs),
		C.uintptr_t(h), &res)
	err = check(status)
	runtime.UnlockOSThread()

	if st.panic != nil {
		panic(st.panic)
	}
	gen := Generation{
		NPrompt: int(res.n_prompt), NGenerated: int(res.n_generated),
		StopReason: StopReason(res.stop_reason),
		PrefillMs:  float64(res.prefill_ms), DecodeMs: float64(res.decode_ms),
		Seed: uint64(res.seed), GrammarProgress: GrammarProgress(res.grammar_progress),
	}
	if status == C.VKLLM_ERR_CANCELLED {
		if cerr := ctx.Err(); cerr != nil {
			e := err.(*Error)
			e.cause = cerr
			return gen, e
		}
		if st.stopped {
			return gen, nil
		}
	}
	return gen, err
}

// GenerateChan runs Generate in a goroutine and streams its tokens through the first channel,
// which is closed at the end; the second then receives the result error (nil on success) and
// is closed. Cancel ctx to stop early; the consumer should drain the tokens channel or cancel.
func (s *Session) GenerateChan(ctx context.Context, prompt []int32, sampling Sampling,
	maxTokens uint32) (<-chan Token, <-chan error) {
	tokens := make(chan Token)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		_, err := s.Generate(ctx, prompt, sampling, maxTokens, func(t Token) bool {
			select {
			case tokens <- t:
				return true
			case <-ctx.Done():
				return false
			}
		})
		close(tokens)
		errc <- err
	}()
	return tokens, errc
}
