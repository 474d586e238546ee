package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"
*/
import "C"

import (
	"runtime"
	"unicode/utf8"
	"unsafe"
)

// ReplyFormat names the markers a model's chat template taught it (vkllm_reply_format).
type ReplyFormat int32

const (
	ReplyPlain   ReplyFormat = C.VKLLM_REPLY_PLAIN   // all answer, as generated
	ReplyHermes  ReplyFormat = C.VKLLM_REPLY_HERMES  // <think>, <tool_call>{...}</tool_call>
	ReplyMistral ReplyFormat = C.VKLLM_REPLY_MISTRAL // [THINK], [TOOL_CALLS]
	ReplyLlama3  ReplyFormat = C.VKLLM_REPLY_LLAMA3  // a {"name", "parameters"} reply
	ReplyHarmony ReplyFormat = C.VKLLM_REPLY_HARMONY // GPT-OSS's channels
)

// ReplyFormatOfTemplate returns the format a chat template (Jinja text) teaches its model.
func ReplyFormatOfTemplate(templateSource string) ReplyFormat {
	c := C.CString(templateSource)
	defer C.free(unsafe.Pointer(c))
	return ReplyFormat(C.vkllm_reply_format_of_template(c))
}

// PromptOpensReasoning reports whether a rendered prompt ends inside an open reasoning block.
func PromptOpensReasoning(prompt string) bool {
	c := C.CString(prompt)
	defer C.free(unsafe.Pointer(c))
	return C.vkllm_prompt_opens_reasoning(c) != 0
}

// ToolCall is a call a model made: its id ("" where the format has none), the function's name
// and the arguments as the model's JSON text.
type ToolCall struct {
	ID, Name, Arguments string
}

// ReplyPart is what a push made certain: text to append to the reasoning and to the answer,
// and the calls completed.
type ReplyPart struct {
	Reasoning, Content string
	ToolCalls          []ToolCall
}

// ReplyParser splits a chat model's reply into reasoning, answer and tool calls as it streams.
// Text may be split anywhere, even inside a character; the parts' text never ends inside one.
// Not safe for concurrent use.
type ReplyParser struct {
	h                  *C.vkllm_reply_parser
	reasoning, content []byte // bytes of an incomplete character, held for the next push
}

// NewReplyParser makes a parser; inReasoning: the reply begins inside a reasoning block.
func NewReplyParser(format ReplyFormat, inReasoning bool) (*ReplyParser, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	flag := C.int32_t(0)
	if inReasoning {
		flag = 1
	}
	var out *C.vkllm_reply_parser
	if err := check(C.vkllm_reply_parser_create(C.vkllm_reply_format(format), flag, &out)); err != nil {
		return nil, err
	}
	p := &ReplyParser{h: out}
	runtime.SetFinalizer(p, (*ReplyParser).Close)
	return p, nil
}

// Push feeds the next piece of the reply.
func (p *ReplyParser) Push(text []byte) (ReplyPart, error) {
	if p.h == nil {
		return ReplyPart{}, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var part C.vkllm_reply_part
	part.struct_size = C.size_t(unsafe.Sizeof(part))
	var ptr *C.char
	if len(text) > 0 {
		ptr = (*C.char)(C.CBytes(text))
		defer C.free(unsafe.Pointer(ptr))
	}
	if err := check(C.vkllm_reply_parser_push(p.h, ptr, C.size_t(len(text)), &part)); err != nil {
		return ReplyPart{}, err
	}
	return p.convert(&part, false), nil
}

// Finish ends the reply, returning what was still held; the parser is then ready for another.
func (p *ReplyParser) Finish() (ReplyPart, error) {
	if p.h == nil {
		return ReplyPart{}, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var part C.vkllm_reply_part
	part.struct_size = C.size_t(unsafe.Sizeof(part))
	if err := check(C.vkllm_reply_parser_finish(p.h, &part)); err != nil {
		return ReplyPart{}, err
	}
	return p.convert(&part, true), nil
}

// Close releases the parser. Idempotent.
func (p *ReplyParser) Close() error {
	if p.h != nil {
		C.vkllm_reply_parser_destroy(p.h)
		p.h = nil
		runtime.SetFinalizer(p, nil)
	}
	return nil
}

func (p *ReplyParser) convert(part *C.vkllm_reply_part, last bool) ReplyPart {
	var out ReplyPart
	out.Reasoning = takeUTF8(&p.reasoning, C.GoString(part.reasoning), last)
	out.Content = takeUTF8(&p.content, C.GoString(part.content), last)
	if part.n_tool_calls > 0 {
		calls := unsafe.Slice(part.tool_calls, int(part.n_tool_calls))
		for _, c := range calls {
			out.ToolCalls = append(out.ToolCalls, ToolCall{
				ID: C.GoString(c.id), Name: C.GoString(c.name), Arguments: C.GoString(c.arguments),
			})
		}
	}
	return out
}

// takeUTF8 appends text to the held bytes and returns the whole characters, keeping a trailing
// incomplete one unless this is the last piece.
func takeUTF8(held *[]byte, text string, last bool) string {
	b := append(*held, text...)
	keep := 0
	if !last {
		// At most 3 bytes of a character can be waiting for the rest of it.
		for n := 1; n <= 3 && n <= len(b); n++ {
			if utf8.RuneStart(b[len(b)-n]) {
				if !utf8.FullRune(b[len(b)-n:]) {
					keep = n
				}
				break
			}
		}
	}
	*held = append([]byte(nil), b[len(b)-keep:]...)
	return string(b[:len(b)-keep])
}
