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

// DetokenizeSpecial renders control tokens (BOS, <|im_end|>) as their text
// (vkllm_tokenizer_decode, vkllm_tokenizer_get_piece, NewDetokenizer).
const DetokenizeSpecial = C.VKLLM_DETOKENIZE_SPECIAL

// TokenizerInfo is a tokenizer's vocabulary size and special ids (-1: the model has none).
type TokenizerInfo struct {
	NVocab                  uint32
	BOS, EOS, EOT, UNK, PAD int32
	AddBOS, AddEOS          bool   // whether TokenizeAddSpecial adds them
	Model                   string // "gpt2" (BPE) or "llama" (SentencePiece)
	Pre                     string // the pre-tokenizer's name, "" for SentencePiece
}

// Tokenizer turns text into token ids and back. NewTokenizer builds one from a model file (call
// Close when done); Model.Tokenizer lends the model's, usable while the model is open. Safe
// for concurrent use.
type Tokenizer struct {
	mu    sync.RWMutex // Close must not race with other uses
	h     *C.vkllm_tokenizer
	model *Model // the lender, when lent
}

// NewTokenizer builds the tokenizer of an opened model file; the file may be closed afterwards.
func NewTokenizer(g *GGUF) (*Tokenizer, error) {
	var out *C.vkllm_tokenizer
	err := g.read(func(h *C.vkllm_gguf) error { return check(C.vkllm_tokenizer_create(h, &out)) })
	if err != nil {
		return nil, err
	}
	t := &Tokenizer{h: out}
	runtime.SetFinalizer(t, (*Tokenizer).Close)
	return t, nil
}

// Tokenizer builds the file's tokenizer (see NewTokenizer).
func (g *GGUF) Tokenizer() (*Tokenizer, error) { return NewTokenizer(g) }

// Tokenizer returns the model's own tokenizer, usable while the model is open (its Close does
// nothing).
func (m *Model) Tokenizer() *Tokenizer { return &Tokenizer{model: m} }

// Close frees a tokenizer built by NewTokenizer. Close its detokenizers first. Idempotent.
func (t *Tokenizer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h != nil {
		C.vkllm_tokenizer_destroy(t.h)
		t.h = nil
		runtime.SetFinalizer(t, nil)
	}
	return nil
}

// use runs f with the tokenizer's handle, its owner held open, on a locked OS thread.
func (t *Tokenizer) use(f func(h *C.vkllm_tokenizer) error) error {
	var h *C.vkllm_tokenizer
	if t.model != nil {
		t.model.mu.RLock()
		defer t.model.mu.RUnlock()
		if t.model.h == nil {
			return errClosed
		}
		h = C.vkllm_model_get_tokenizer(t.model.h)
	} else {
		t.mu.RLock()
		defer t.mu.RUnlock()
		h = t.h
	}
	if h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return f(h)
}

// Info returns the vocabulary size and special ids.
func (t *Tokenizer) Info() (TokenizerInfo, error) {
	var i C.vkllm_tokenizer_info
	i.struct_size = C.size_t(unsafe.Sizeof(i))
	err := t.use(func(h *C.vkllm_tokenizer) error { return check(C.vkllm_tokenizer_get_info(h, &i)) })
	if err != nil {
		return TokenizerInfo{}, err
	}
	return TokenizerInfo{NVocab: uint32(i.n_vocab), BOS: int32(i.bos), EOS: int32(i.eos),
		EOT: int32(i.eot), UNK: int32(i.unk), PAD: int32(i.pad), AddBOS: i.add_bos != 0,
		AddEOS: i.add_eos != 0, Model: C.GoString(&i.model[0]), Pre: C.GoString(&i.pre[0])}, nil
}

// Tokenize encodes text with Tokenize* flags.
func (t *Tokenizer) Tokenize(text string, flags uint32) ([]int32, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	ids := make([]int32, len(text)+8)
	err := t.use(func(h *C.vkllm_tokenizer) error {
		for {
			var n C.size_t
			status := C.vkllm_tokenizer_encode(h, ctext, C.size_t(len(text)), C.uint32_t(flags),
				(*C.int32_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), &n)
			if status == C.VKLLM_ERR_BUFFER_TOO_SMALL {
				ids = make([]int32, int(n))
				continue
			}
			if err := check(status); err != nil {
				return err
			}
			ids = ids[:int(n)]
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// Detokenize returns the text of a sequence of ids, with DetokenizeSpecial or 0.
func (t *Tokenizer) Detokenize(tokens []int32, flags uint32) (string, error) {
	var ptr *C.int32_t
	if len(tokens) > 0 {
		ptr = (*C.int32_t)(unsafe.Pointer(&tokens[0]))
	}
	var out []byte
	err := t.use(func(h *C.vkllm_tokenizer) (err error) {
		out, err = readSized(func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status {
			return C.vkllm_tokenizer_decode(h, ptr, C.size_t(len(tokens)), C.uint32_t(flags), buf,
				capacity, n)
		})
		return err
	})
	return string(out), err
}

// TokenToPiece returns the bytes of one token, which may be part of a UTF-8 character.
func (t *Tokenizer) TokenToPiece(token int32, flags uint32) ([]byte, error) {
	var out []byte
	err := t.use(func(h *C.vkllm_tokenizer) (err error) {
		out, err = readSized(func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status {
			return C.vkllm_tokenizer_get_piece(h, C.int32_t(token), C.uint32_t(flags), buf, capacity, n)
		})
		return err
	})
	return out, err
}

// IsEndOfGeneration reports whether generation stops at this token (EOS, EOT, <|im_end|>...).
func (t *Tokenizer) IsEndOfGeneration(token int32) (bool, error) {
	var out C.int32_t
	err := t.use(func(h *C.vkllm_tokenizer) error {
		return check(C.vkllm_tokenizer_is_end_of_generation(h, C.int32_t(token), &out))
	})
	return out != 0, err
}

// Detokenizer turns a stream of token ids into text as it comes: Push returns what became
// complete, never ending inside a UTF-8 character; Flush ends the stream. One stream at a
// time; not safe for concurrent use. Its tokenizer must stay open while it is used.
type Detokenizer struct {
	h   *C.vkllm_detokenizer
	tok *Tokenizer
}

// NewDetokenizer starts a stream over this tokenizer's ids, with DetokenizeSpecial or 0.
func (t *Tokenizer) NewDetokenizer(flags uint32) (*Detokenizer, error) {
	var out *C.vkllm_detokenizer
	err := t.use(func(h *C.vkllm_tokenizer) error {
		return check(C.vkllm_detokenizer_create(h, C.uint32_t(flags), &out))
	})
	if err != nil {
		return nil, err
	}
	d := &Detokenizer{h: out, tok: t}
	runtime.SetFinalizer(d, (*Detokenizer).Close)
	return d, nil
}

// Close frees the detokenizer. Idempotent.
func (d *Detokenizer) Close() error {
	if d.h != nil {
		C.vkllm_detokenizer_destroy(d.h)
		d.h = nil
		runtime.SetFinalizer(d, nil)
	}
	return nil
}

// text runs a push or flush, holding the tokenizer (and its owner) open during it.
func (d *Detokenizer) text(call func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status) (string, error) {
	if d.h == nil {
		return "", errClosed
	}
	var out []byte
	err := d.tok.use(func(*C.vkllm_tokenizer) (err error) {
		out, err = readSized(call)
		return err
	})
	return string(out), err
}

// Push feeds one token and returns the text it completed (maybe "").
func (d *Detokenizer) Push(token int32) (string, error) {
	return d.text(func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status {
		return C.vkllm_detokenizer_push(d.h, C.int32_t(token), buf, capacity, n)
	})
}

// Flush ends the stream with what is still held and readies the detokenizer for a new one.
func (d *Detokenizer) Flush() (string, error) {
	return d.text(func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status {
		return C.vkllm_detokenizer_flush(d.h, buf, capacity, n)
	})
}
