// Package vkllm is a Go binding of libvkllm, an embeddable LLM inference library on Vulkan,
// over its C API (include/vkllm.h).
//
// Runtime, Model and Session own library handles: call Close when done (a finalizer is only a
// safety net). The library reference-counts them (a session keeps its model alive, a model its
// runtime), so they may be closed in any order. Failures are *Error values carrying the
// library's status and message; compare them with errors.Is against the Err* sentinels.
//
// Build: cgo takes the installed header and library from pkg-config (vkllm.pc, installed by
// `cmake --install`): under a prefix other than the system's, set
// PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, and CGO_LDFLAGS="-Wl,-rpath,PREFIX/lib" (or run
// ldconfig, or set LD_LIBRARY_PATH) for the programs to find libvkllm.so.0.3 when they run.
package vkllm

/*
#cgo pkg-config: vkllm
#cgo CFLAGS: -DVKLLM_EXPERIMENTAL
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

// VersionNumber is the header version these bindings were written for
// (MAJOR*10000 + MINOR*100 + PATCH).
const VersionNumber = C.VKLLM_VERSION_NUMBER

// Version returns the version of the loaded library, encoded like VersionNumber.
func Version() uint32 { return uint32(C.vkllm_version()) }

// Status is a vkllm_status code. The values are stable.
type Status int32

const (
	StatusOK                Status = C.VKLLM_OK
	StatusInvalidArgument   Status = C.VKLLM_ERR_INVALID_ARGUMENT
	StatusNoDevice          Status = C.VKLLM_ERR_NO_DEVICE
	StatusOutOfHostMemory   Status = C.VKLLM_ERR_OUT_OF_HOST_MEMORY
	StatusOutOfDeviceMemory Status = C.VKLLM_ERR_OUT_OF_DEVICE_MEMORY
	StatusVulkan            Status = C.VKLLM_ERR_VULKAN
	StatusDeviceLost        Status = C.VKLLM_ERR_DEVICE_LOST
	StatusIO                Status = C.VKLLM_ERR_IO
	StatusFormat            Status = C.VKLLM_ERR_FORMAT
	StatusUnsupported       Status = C.VKLLM_ERR_UNSUPPORTED
	StatusBufferTooSmall    Status = C.VKLLM_ERR_BUFFER_TOO_SMALL
	StatusContextFull       Status = C.VKLLM_ERR_CONTEXT_FULL
	StatusCancelled         Status = C.VKLLM_ERR_CANCELLED
	StatusInternal          Status = C.VKLLM_ERR_INTERNAL
	StatusNotFound          Status = C.VKLLM_ERR_NOT_FOUND
)

// String returns the library's short description of the status ("i/o error", ...).
func (s Status) String() string {
	return C.GoString(C.vkllm_status_string(C.vkllm_status(s)))
}

// Error is a failed library call: its status and the library's detailed message.
type Error struct {
	Status  Status
	Message string
	cause   error // context error behind a cancellation, if any
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "vkllm: " + e.Status.String()
	}
	return fmt.Sprintf("vkllm: %s (%s)", e.Message, e.Status)
}

// Is makes errors.Is(err, ErrIO) true for every *Error with status IO: a target *Error with
// no message matches on status alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.cause == nil && t.Status == e.Status
}

// Unwrap returns the context error behind a cancellation (so errors.Is(err,
// context.Canceled) works), or nil.
func (e *Error) Unwrap() error { return e.cause }

// Sentinel errors, one per status, for errors.Is.
var (
	ErrInvalidArgument   = &Error{Status: StatusInvalidArgument}
	ErrNoDevice          = &Error{Status: StatusNoDevice}
	ErrOutOfHostMemory   = &Error{Status: StatusOutOfHostMemory}
	ErrOutOfDeviceMemory = &Error{Status: StatusOutOfDeviceMemory}
	ErrVulkan            = &Error{Status: StatusVulkan}
	ErrDeviceLost        = &Error{Status: StatusDeviceLost}
	ErrIO                = &Error{Status: StatusIO}
	ErrFormat            = &Error{Status: StatusFormat}
	ErrUnsupported       = &Error{Status: StatusUnsupported}
	ErrBufferTooSmall    = &Error{Status: StatusBufferTooSmall}
	ErrContextFull       = &Error{Status: StatusContextFull}
	ErrCancelled         = &Error{Status: StatusCancelled}
	ErrInternal          = &Error{Status: StatusInternal}
	ErrNotFound          = &Error{Status: StatusNotFound}
)

// errClosed is returned by methods of a closed object.
var errClosed = &Error{Status: StatusInvalidArgument, Message: "use of a closed vkllm object"}

// check maps a status to an error, reading the library's thread-local message. The caller
// must hold its OS thread (runtime.LockOSThread) since the failing call, so that the message
// read is the one of that call.
func check(status C.vkllm_status) error {
	if status == C.VKLLM_OK {
		return nil
	}
	return &Error{Status: Status(status), Message: C.GoString(C.vkllm_last_error())}
}

// Runtime is a Vulkan device with its memory and compiled kernels. Safe for concurrent use.
type Runtime struct {
	mu sync.RWMutex // Close must not race with other uses (vkllm.h, THREAD SAFETY)
	h  *C.vkllm_runtime
}

// NewRuntime creates a runtime on the best usable device (or the one named by $VKLLM_DEVICE).
func NewRuntime() (*Runtime, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out *C.vkllm_runtime
	if err := check(C.vkllm_runtime_create(nil, &out)); err != nil {
		return nil, err
	}
	r := &Runtime{h: out}
	runtime.SetFinalizer(r, (*Runtime).Close)
	return r, nil
}

// DeviceName returns the name of the runtime's device.
func (r *Runtime) DeviceName() (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.h == nil {
		return "", errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var info C.vkllm_device_info
	info.struct_size = C.size_t(unsafe.Sizeof(info))
	if err := check(C.vkllm_runtime_get_device_info(r.h, &info)); err != nil {
		return "", err
	}
	return C.GoString(&info.name[0]), nil
}

// Close releases the runtime. Models loaded on it keep the device alive. Idempotent.
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h != nil {
		C.vkllm_runtime_destroy(r.h)
		r.h = nil
		runtime.SetFinalizer(r, nil)
	}
	return nil
}

// Model is a set of weights on a runtime's device, shared by sessions. Safe for concurrent use.
type Model struct {
	mu sync.RWMutex // Close must not race with other uses (vkllm.h, THREAD SAFETY)
	h  *C.vkllm_model
}

// LoadModel loads a GGUF model onto the runtime's device. The model keeps the runtime alive.
func LoadModel(r *Runtime, path string) (*Model, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.h == nil {
		return nil, errClosed
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out *C.vkllm_model
	if err := check(C.vkllm_model_load(r.h, cpath, nil, &out)); err != nil {
		return nil, err
	}
	m := &Model{h: out}
	runtime.SetFinalizer(m, (*Model).Close)
	return m, nil
}

// Close releases the model. Its sessions keep it alive. Idempotent.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h != nil {
		C.vkllm_model_destroy(m.h)
		m.h = nil
		runtime.SetFinalizer(m, nil)
	}
	return nil
}

// Tokenize encodes text, adding BOS where the model asks for it. Special tokens stay text: a
// rendered chat needs Tokenizer().Tokenize with TokenizeParseSpecial (a Conversation does that
// itself).
func (m *Model) Tokenize(text string) ([]int32, error) {
	return m.TokenizeFlags(text, C.VKLLM_TOKENIZE_ADD_SPECIAL)
}

// Tokenize flags (vkllm_tokenizer_encode).
const (
	TokenizeAddSpecial   = C.VKLLM_TOKENIZE_ADD_SPECIAL
	TokenizeParseSpecial = C.VKLLM_TOKENIZE_PARSE_SPECIAL
)

// TokenizeFlags encodes text with Tokenize* flags.
func (m *Model) TokenizeFlags(text string, flags uint32) ([]int32, error) {
	return m.Tokenizer().Tokenize(text, flags)
}

// Detokenize returns the text of a sequence of tokens (control tokens produce none).
func (m *Model) Detokenize(tokens []int32) (string, error) {
	return m.Tokenizer().Detokenize(tokens, 0)
}

// NVocab returns the vocabulary size.
func (m *Model) NVocab() (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return 0, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var info C.vkllm_model_info
	info.struct_size = C.size_t(unsafe.Sizeof(info))
	if err := check(C.vkllm_model_get_info(m.h, &info)); err != nil {
		return 0, err
	}
	return int(info.n_vocab), nil
}
