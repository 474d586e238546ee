package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import "unsafe"

// SaveState returns sequence seq's state (KV cache, position, token ids), for LoadState on any
// session of the same model.
func (s *Session) SaveState(seq uint32) ([]byte, error) {
	var state []byte
	err := s.use(func(h *C.vkllm_session) error {
		var size C.size_t
		if err := check(C.vkllm_session_get_state_size(h, C.uint32_t(seq), &size)); err != nil {
			return err
		}
		buf := C.malloc(size + 1)
		defer C.free(buf)
		if err := check(C.vkllm_session_state_save(h, C.uint32_t(seq), buf, size+1, &size)); err != nil {
			return err
		}
		state = C.GoBytes(buf, C.int(size))
		return nil
	})
	return state, err
}

// LoadState replaces sequence seq with a saved state. An error (ErrFormat, ErrInvalidArgument)
// leaves the sequence unchanged.
func (s *Session) LoadState(seq uint32, state []byte) error {
	return s.use(func(h *C.vkllm_session) error {
		data := C.CBytes(state)
		defer C.free(data)
		return check(C.vkllm_session_state_load(h, C.uint32_t(seq), data, C.size_t(len(state))))
	})
}

// SaveStateFile is SaveState into a file.
func (s *Session) SaveStateFile(seq uint32, path string) error {
	return s.use(func(h *C.vkllm_session) error {
		p := C.CString(path)
		defer C.free(unsafe.Pointer(p))
		return check(C.vkllm_session_state_save_file(h, C.uint32_t(seq), p))
	})
}

// LoadStateFile is LoadState from a file.
func (s *Session) LoadStateFile(seq uint32, path string) error {
	return s.use(func(h *C.vkllm_session) error {
		p := C.CString(path)
		defer C.free(unsafe.Pointer(p))
		return check(C.vkllm_session_state_load_file(h, C.uint32_t(seq), p))
	})
}

// Fork replaces sequence dst with the first nKeep positions of sequence src, copied on the
// device.
func (s *Session) Fork(src, dst, nKeep uint32) error {
	return s.use(func(h *C.vkllm_session) error {
		return check(C.vkllm_session_fork(h, C.uint32_t(src), C.uint32_t(dst), C.uint32_t(nKeep)))
	})
}

// Tokens returns the token ids in sequence seq's cache, in position order.
func (s *Session) Tokens(seq uint32) ([]int32, error) {
	var ids []int32
	err := s.use(func(h *C.vkllm_session) error {
		var n C.size_t
		status := C.vkllm_session_get_tokens(h, C.uint32_t(seq), nil, 0, &n)
		if status != C.VKLLM_ERR_BUFFER_TOO_SMALL {
			if err := check(status); err != nil {
				return err
			}
		}
		ids = make([]int32, int(n)+1)
		if err := check(C.vkllm_session_get_tokens(h, C.uint32_t(seq), (*C.int32_t)(&ids[0]),
			C.size_t(len(ids)), &n)); err != nil {
			return err
		}
		ids = ids[:n]
		return nil
	})
	return ids, err
}
