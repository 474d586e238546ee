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

// readSized returns the bytes of a C function with the buffer rules of vkllm_gguf_get_string:
// call is tried with a small buffer, then, when that is too small, with one of the length it
// reported (a refused call changes nothing, so the retry is the same call). The caller holds
// its OS thread, so that an error's message is the call's.
func readSized(call func(buf *C.char, capacity C.size_t, length *C.size_t) C.vkllm_status) ([]byte, error) {
	buf := make([]byte, 64)
	var n C.size_t
	status := call((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n)
	if status == C.VKLLM_ERR_BUFFER_TOO_SMALL {
		buf = make([]byte, int(n)+1)
		status = call((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n)
	}
	if err := check(status); err != nil {
		return nil, err
	}
	return buf[:int(n)], nil
}

// GGMLTypeName returns the name of a ggml tensor type ("Q4_K"), false for an id ggml does not
// define.
func GGMLTypeName(typeID uint32) (string, bool) {
	p := C.vkllm_ggml_type_name(C.uint32_t(typeID))
	if p == nil {
		return "", false
	}
	return C.GoString(p), true
}

// GGUFType is a metadata value type, numbered as GGUF numbers them.
type GGUFType int32

const (
	GGUFUint8   GGUFType = C.VKLLM_GGUF_UINT8
	GGUFInt8    GGUFType = C.VKLLM_GGUF_INT8
	GGUFUint16  GGUFType = C.VKLLM_GGUF_UINT16
	GGUFInt16   GGUFType = C.VKLLM_GGUF_INT16
	GGUFUint32  GGUFType = C.VKLLM_GGUF_UINT32
	GGUFInt32   GGUFType = C.VKLLM_GGUF_INT32
	GGUFFloat32 GGUFType = C.VKLLM_GGUF_FLOAT32
	GGUFBool    GGUFType = C.VKLLM_GGUF_BOOL
	GGUFString  GGUFType = C.VKLLM_GGUF_STRING
	GGUFArray   GGUFType = C.VKLLM_GGUF_ARRAY
	GGUFUint64  GGUFType = C.VKLLM_GGUF_UINT64
	GGUFInt64   GGUFType = C.VKLLM_GGUF_INT64
	GGUFFloat64 GGUFType = C.VKLLM_GGUF_FLOAT64
)

// ModelSummary is what a model file is (vkllm_model_summary); what the file does not state is
// 0 or "".
type ModelSummary struct {
	GGUFVersion                              uint32
	Architecture, Name                       string
	FileBytes, TensorBytes, NParams          uint64
	NTensors, NKeys                          uint64
	ContextLength, NLayers, NEmbd            uint32
	NHeads, NKVHeads, NExperts, NExpertsUsed uint32
	NVocab                                   uint32
	TokenizerModel, TokenizerPre             string
	TensorsOfType                            []uint64 // tensor count per ggml type id
}

// GGUFKey is one metadata key. For arrays ElementType and Count describe the elements; for
// scalars ElementType == Type and Count == 1.
type GGUFKey struct {
	Name              string
	Type, ElementType GGUFType
	Count             uint64
}

// TensorInfo is one tensor of a model file.
type TensorInfo struct {
	Name       string
	Type       uint32   // ggml type
	TypeName   string   // "" for a type ggml does not name
	Dims       []uint64 // innermost first: a weight matrix is [in_features, out_features]
	NElements  uint64
	NBytes     uint64
	FileOffset uint64
}

// GGUF is an opened, validated model file, memory-mapped, without its weights loaded
// (vkllm_gguf). Safe for concurrent use; call Close when done.
type GGUF struct {
	mu sync.RWMutex // Close must not race with reads
	h  *C.vkllm_gguf
}

// OpenGGUF opens and validates a model file (ErrIO, or ErrFormat naming what is wrong).
func OpenGGUF(path string) (*GGUF, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out *C.vkllm_gguf
	if err := check(C.vkllm_gguf_open(cpath, &out)); err != nil {
		return nil, err
	}
	g := &GGUF{h: out}
	runtime.SetFinalizer(g, (*GGUF).Close)
	return g, nil
}

// Close unmaps the file. Tokenizers built from it do not need it. Idempotent.
func (g *GGUF) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.h != nil {
		C.vkllm_gguf_destroy(g.h)
		g.h = nil
		runtime.SetFinalizer(g, nil)
	}
	return nil
}

// read runs f on the open file's handle, on a locked OS thread.
func (g *GGUF) read(f func(h *C.vkllm_gguf) error) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return f(g.h)
}

// Summary returns what the file is.
func (g *GGUF) Summary() (ModelSummary, error) {
	var s C.vkllm_model_summary
	s.struct_size = C.size_t(unsafe.Sizeof(s))
	err := g.read(func(h *C.vkllm_gguf) error { return check(C.vkllm_gguf_get_summary(h, &s)) })
	if err != nil {
		return ModelSummary{}, err
	}
	counts := make([]uint64, len(s.tensors_of_type))
	for i, c := range s.tensors_of_type {
		counts[i] = uint64(c)
	}
	return ModelSummary{
		GGUFVersion: uint32(s.gguf_version), Architecture: C.GoString(&s.architecture[0]),
		Name: C.GoString(&s.name[0]), FileBytes: uint64(s.file_bytes),
		TensorBytes: uint64(s.tensor_bytes), NParams: uint64(s.n_params),
		NTensors: uint64(s.n_tensors), NKeys: uint64(s.n_keys),
		ContextLength: uint32(s.context_length), NLayers: uint32(s.n_layers),
		NEmbd: uint32(s.n_embd), NHeads: uint32(s.n_heads), NKVHeads: uint32(s.n_kv_heads),
		NExperts: uint32(s.n_experts), NExpertsUsed: uint32(s.n_experts_used),
		NVocab: uint32(s.n_vocab), TokenizerModel: C.GoString(&s.tokenizer_model[0]),
		TokenizerPre: C.GoString(&s.tokenizer_pre[0]), TensorsOfType: counts,
	}, nil
}

// Keys returns every metadata key, in file order.
func (g *GGUF) Keys() ([]GGUFKey, error) {
	var keys []GGUFKey
	err := g.read(func(h *C.vkllm_gguf) error {
		for {
			var k C.vkllm_gguf_key
			k.struct_size = C.size_t(unsafe.Sizeof(k))
			status := C.vkllm_gguf_get_key(h, C.size_t(len(keys)), &k)
			if status == C.VKLLM_ERR_NOT_FOUND {
				return nil
			}
			if err := check(status); err != nil {
				return err
			}
			keys = append(keys, GGUFKey{Name: C.GoString(k.name), Type: GGUFType(k._type),
				ElementType: GGUFType(k.element_type), Count: uint64(k.count)})
		}
	})
	return keys, err
}

// GetInt returns an integer or bool value (ErrNotFound when absent, ErrFormat when of another
// type).
func (g *GGUF) GetInt(key string) (int64, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var v C.int64_t
	err := g.read(func(h *C.vkllm_gguf) error { return check(C.vkllm_gguf_get_int(h, ckey, &v)) })
	return int64(v), err
}

// GetFloat returns a float or integer value as a float64.
func (g *GGUF) GetFloat(key string) (float64, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var v C.double
	err := g.read(func(h *C.vkllm_gguf) error { return check(C.vkllm_gguf_get_float(h, ckey, &v)) })
	return float64(v), err
}

// GetBytes returns a string value's bytes as stored (they may hold NUL bytes or invalid UTF-8).
func (g *GGUF) GetBytes(key string) ([]byte, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var out []byte
	err := g.read(func(h *C.vkllm_gguf) (err error) {
		out, err = readSized(func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status {
			return C.vkllm_gguf_get_string(h, ckey, buf, capacity, n)
		})
		return err
	})
	return out, err
}

// GetString returns a string value.
func (g *GGUF) GetString(key string) (string, error) {
	b, err := g.GetBytes(key)
	return string(b), err
}

// GetText returns any value as readable text (strings quoted, arrays as their first elements).
func (g *GGUF) GetText(key string) (string, error) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var out []byte
	err := g.read(func(h *C.vkllm_gguf) (err error) {
		out, err = readSized(func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status {
			return C.vkllm_gguf_get_text(h, ckey, buf, capacity, n)
		})
		return err
	})
	return string(out), err
}

// Tensors returns every tensor, in file order.
func (g *GGUF) Tensors() ([]TensorInfo, error) {
	var tensors []TensorInfo
	err := g.read(func(h *C.vkllm_gguf) error {
		for {
			var t C.vkllm_tensor_info
			t.struct_size = C.size_t(unsafe.Sizeof(t))
			status := C.vkllm_gguf_get_tensor(h, C.size_t(len(tensors)), &t)
			if status == C.VKLLM_ERR_NOT_FOUND {
				return nil
			}
			if err := check(status); err != nil {
				return err
			}
			dims := make([]uint64, min(int(t.n_dims), len(t.dims)))
			for i := range dims {
				dims[i] = uint64(t.dims[i])
			}
			info := TensorInfo{Name: C.GoString(t.name), Type: uint32(t._type), Dims: dims,
				NElements: uint64(t.n_elements), NBytes: uint64(t.n_bytes),
				FileOffset: uint64(t.file_offset)}
			if t.type_name != nil {
				info.TypeName = C.GoString(t.type_name)
			}
			tensors = append(tensors, info)
		}
	})
	return tensors, err
}
