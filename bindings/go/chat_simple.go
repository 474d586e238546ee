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

// ChatMessage is a plain turn of a conversation for ChatApplyTemplate.
type ChatMessage struct {
	Role, Content string
}

// ChatApplyTemplate is the simple form of ChatRender: plain turns rendered with the built-in
// templateName ("chatml", "llama3", "gemma", "mistral-v3", "phi4", ...: `vkllm chat --template
// help` lists them) or, when that is "", modelTemplate (a model's Jinja text, e.g.
// Model.ChatTemplate). BOS and EOS are left undefined: tokenize the result with
// TokenizeAddSpecial|TokenizeParseSpecial. addAssistant ends it with the opening of the reply.
// An unknown templateName is ErrNotFound.
func ChatApplyTemplate(templateName, modelTemplate string, messages []ChatMessage,
	addAssistant bool) (string, error) {
	var name, source *C.char
	if templateName != "" {
		name = C.CString(templateName)
		defer C.free(unsafe.Pointer(name))
	}
	if modelTemplate != "" {
		source = C.CString(modelTemplate)
		defer C.free(unsafe.Pointer(source))
	}
	// The array holds only C pointers, so it may live in Go memory.
	raw := make([]C.vkllm_chat_message, len(messages)+1)
	for i, m := range messages {
		raw[i].role = C.CString(m.Role)
		raw[i].content = C.CString(m.Content)
		defer C.free(unsafe.Pointer(raw[i].role))
		defer C.free(unsafe.Pointer(raw[i].content))
	}
	assistant := C.int32_t(0)
	if addAssistant {
		assistant = 1
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	out, err := readSized(func(buf *C.char, capacity C.size_t, n *C.size_t) C.vkllm_status {
		return C.vkllm_chat_apply_template(name, source, &raw[0], C.size_t(len(messages)),
			assistant, buf, capacity, n)
	})
	return string(out), err
}
