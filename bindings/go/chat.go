package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// ChatOptions choose the template and its variables for ChatRender (vkllm_chat_params).
// `vkllm chat --template help` lists the built-in templates.
type ChatOptions struct {
	Model              *Model         // its template, BOS and EOS are the defaults
	Template           string         // Jinja text: used when set
	TemplateName       string         // else a built-in: "chatml", "llama3", "gemma", "phi4", ...
	Tools              any            // OpenAI function tools, marshalled to JSON; nil: None
	Extra              map[string]any // more template variables (enable_thinking, ...)
	NoGenerationPrompt bool           // leave out the opening of the reply
	BOSToken, EOSToken *string        // nil: the model's
	Now                *int64         // strftime_now's time (seconds since 1970, UTC); nil: the clock
}

// ChatRender renders messages (OpenAI-style: maps or structs that marshal to
// {"role", "content", "tool_calls", ...}, tool-call arguments as objects) with a chat template
// exactly as transformers' apply_chat_template does. A template's refusal is an *Error carrying
// its own message.
func ChatRender(opts ChatOptions, messages any) (string, error) {
	msgs, err := json.Marshal(messages)
	if err != nil {
		return "", err
	}
	var p C.vkllm_chat_params
	C.vkllm_chat_params_init(&p)
	var frees []unsafe.Pointer
	defer func() {
		for _, f := range frees {
			C.free(f)
		}
	}()
	cstr := func(s string) *C.char {
		c := C.CString(s)
		frees = append(frees, unsafe.Pointer(c))
		return c
	}
	if opts.Template != "" {
		p.template_source = cstr(opts.Template)
	}
	if opts.TemplateName != "" {
		p.template_name = cstr(opts.TemplateName)
	}
	if opts.Tools != nil {
		t, err := json.Marshal(opts.Tools)
		if err != nil {
			return "", err
		}
		p.tools = cstr(string(t))
	}
	if len(opts.Extra) > 0 {
		e, err := json.Marshal(opts.Extra)
		if err != nil {
			return "", err
		}
		p.extra = cstr(string(e))
	}
	if opts.NoGenerationPrompt {
		p.add_generation_prompt = 0
	}
	if opts.BOSToken != nil {
		p.bos_token = cstr(*opts.BOSToken)
	}
	if opts.EOSToken != nil {
		p.eos_token = cstr(*opts.EOSToken)
	}
	if opts.Now != nil {
		p.now = C.int64_t(*opts.Now)
	}
	if opts.Model != nil {
		opts.Model.mu.RLock()
		defer opts.Model.mu.RUnlock()
		if opts.Model.h == nil {
			return "", errClosed
		}
		p.model = opts.Model.h
	}
	cmsgs := cstr(string(msgs))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var n C.size_t
	status := C.vkllm_chat_render_json(&p, cmsgs, nil, 0, &n)
	if status != C.VKLLM_ERR_BUFFER_TOO_SMALL {
		if err := check(status); err != nil {
			return "", err
		}
	}
	buf := make([]byte, int(n)+1)
	if err := check(C.vkllm_chat_render_json(&p, cmsgs, (*C.char)(unsafe.Pointer(&buf[0])),
		C.size_t(len(buf)), &n)); err != nil {
		return "", err
	}
	return string(buf[:int(n)]), nil
}
