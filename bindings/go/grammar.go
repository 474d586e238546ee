package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Grammar is a grammar compiled for a vocabulary (vkllm_grammar): set it as Sampling.Grammar
// and the generated text is a string of its language. Compiled once and read-only, it may be
// shared by any number of samplers and generations on any goroutines, and closed once a sampler
// has been created with it (a Close while a generation given it runs waits for its end): they
// keep references of their own.
type Grammar struct {
	mu sync.RWMutex // Close must not race with a sampler or generation being created
	h  *C.vkllm_grammar
}

// NewGrammar compiles GBNF text (llama.cpp's format) for the tokenizer's vocabulary (a model's:
// Model.Tokenizer()), starting from the rule root ("" for "root"). A bad grammar is an *Error
// of StatusInvalidArgument with "line L, column C: ..." in its message.
func NewGrammar(t *Tokenizer, gbnf, root string) (*Grammar, error) {
	cgbnf := C.CString(gbnf)
	defer C.free(unsafe.Pointer(cgbnf))
	var croot *C.char
	if root != "" {
		croot = C.CString(root)
		defer C.free(unsafe.Pointer(croot))
	}
	var out *C.vkllm_grammar
	err := t.use(func(h *C.vkllm_tokenizer) error {
		return check(C.vkllm_grammar_create(h, cgbnf, croot, &out))
	})
	return newGrammar(out, err)
}

// NewGrammarFromJSONSchema compiles a JSON Schema (JSON text; "" or "{}": any JSON value) for
// the tokenizer's vocabulary: the text generated is one JSON value the schema accepts. A
// keyword the converter cannot enforce is StatusUnsupported naming it; malformed JSON or a
// malformed schema is StatusInvalidArgument.
func NewGrammarFromJSONSchema(t *Tokenizer, schema string) (*Grammar, error) {
	cschema := C.CString(schema)
	defer C.free(unsafe.Pointer(cschema))
	var out *C.vkllm_grammar
	err := t.use(func(h *C.vkllm_tokenizer) error {
		return check(C.vkllm_grammar_create_from_json_schema(h, cschema, &out))
	})
	return newGrammar(out, err)
}

func newGrammar(h *C.vkllm_grammar, err error) (*Grammar, error) {
	if err != nil {
		return nil, err
	}
	g := &Grammar{h: h}
	runtime.SetFinalizer(g, (*Grammar).Close)
	return g, nil
}

// Close releases the grammar; samplers and generations that use it keep working. Idempotent.
func (g *Grammar) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.h != nil {
		C.vkllm_grammar_destroy(g.h)
		g.h = nil
		runtime.SetFinalizer(g, nil)
	}
	return nil
}

// hold returns the live handle with the grammar held open, and the function that lets it go
// (after the call that passes the handle to the library).
func (g *Grammar) hold() (*C.vkllm_grammar, func(), error) {
	g.mu.RLock()
	if g.h == nil {
		g.mu.RUnlock()
		return nil, nil, errClosed
	}
	return g.h, g.mu.RUnlock, nil
}

// JSONSchemaToGBNF returns the GBNF text a JSON Schema converts to, to read or edit and pass to
// NewGrammar.
func JSONSchemaToGBNF(schema string) (string, error) {
	cschema := C.CString(schema)
	defer C.free(unsafe.Pointer(cschema))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var n C.size_t
	status := C.vkllm_json_schema_to_gbnf(cschema, nil, 0, &n)
	if status != C.VKLLM_ERR_BUFFER_TOO_SMALL {
		if err := check(status); err != nil {
			return "", err
		}
	}
	buf := (*C.char)(C.malloc(n + 1))
	defer C.free(unsafe.Pointer(buf))
	if err := check(C.vkllm_json_schema_to_gbnf(cschema, buf, n+1, &n)); err != nil {
		return "", err
	}
	return C.GoStringN(buf, C.int(n)), nil
}

// GrammarProgress says where a sampler's grammar stands.
type GrammarProgress int32

const (
	// GrammarIncomplete: more text is needed; end tokens are not allowed.
	GrammarIncomplete GrammarProgress = C.VKLLM_GRAMMAR_INCOMPLETE
	// GrammarComplete: the text may end here, or go on (also a sampler without a grammar).
	GrammarComplete GrammarProgress = C.VKLLM_GRAMMAR_COMPLETE
	// GrammarFinished: the text is complete and nothing can follow; stop.
	GrammarFinished GrammarProgress = C.VKLLM_GRAMMAR_FINISHED
)

// String names the progress as the C enum does, less its prefix ("INCOMPLETE").
func (p GrammarProgress) String() string {
	switch p {
	case GrammarIncomplete:
		return "INCOMPLETE"
	case GrammarComplete:
		return "COMPLETE"
	case GrammarFinished:
		return "FINISHED"
	}
	return fmt.Sprintf("GrammarProgress(%d)", int32(p))
}

// GrammarProgress reports where the sampler's grammar stands after the tokens it accepted.
func (s *Sampler) GrammarProgress() (GrammarProgress, error) {
	var p C.vkllm_grammar_progress
	err := s.call(func(h *C.vkllm_sampler) C.vkllm_status {
		return C.vkllm_sampler_get_grammar_progress(h, &p)
	})
	return GrammarProgress(p), err
}

// AcceptPrompt adds prompt tokens to the penalties' history only: they do not advance the
// grammar (Accept does, for generated tokens, and refuses one the grammar does not allow).
func (s *Sampler) AcceptPrompt(tokens []int32) error {
	var ptr *C.int32_t
	if len(tokens) > 0 {
		ptr = (*C.int32_t)(unsafe.Pointer(&tokens[0]))
	}
	return s.call(func(h *C.vkllm_sampler) C.vkllm_status {
		return C.vkllm_sampler_accept_prompt(h, ptr, C.size_t(len(tokens)))
	})
}

// ApplyGrammar sets to -Inf, in place, each logit of the row whose token the grammar does not
// allow next, for an app's own sampling chain (without a grammar nothing changes).
func (s *Sampler) ApplyGrammar(logits []float32) error {
	var ptr *C.float
	if len(logits) > 0 {
		ptr = (*C.float)(unsafe.Pointer(&logits[0]))
	}
	return s.call(func(h *C.vkllm_sampler) C.vkllm_status {
		return C.vkllm_sampler_apply_grammar(h, ptr, C.size_t(len(logits)))
	})
}
