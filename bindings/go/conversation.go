package vkllm

/*
#include <stdlib.h>
#include "vkllm.h"

vkllm_status vkllmgo_conversation_reply(vkllm_conversation *conversation,
                                        const vkllm_sampling_params *sampling,
                                        uint32_t max_tokens, uintptr_t handle,
                                        vkllm_conversation_result *result);
*/
import "C"

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// ConversationOptions choose the template a Conversation renders with and the session's
// sequence it runs on (vkllm_conversation_params). The zero value: sequence 0, the model's own
// template.
type ConversationOptions struct {
	Seq          uint32
	Template     string         // Jinja text: used when set
	TemplateName string         // else a built-in, by name ("chatml", "llama3", ...)
	Tools        any            // OpenAI function tools, marshalled to JSON; nil: None
	Extra        map[string]any // more template variables (enable_thinking, ...)
	Now          *int64         // strftime_now's time (seconds since 1970, UTC); nil: the clock
}

// ChatTurn is a message of a Conversation: "system", "user", "assistant" (with its ToolCalls,
// arguments as JSON text) or "tool" (a call's result, with ToolCallID and Name). Empty strings
// are absent: an assistant turn with calls and no Content has null content.
type ChatTurn struct {
	Role, Content, ReasoningContent string
	ToolCalls                       []ToolCall
	ToolCallID, Name                string
}

// ChatPieceKind says what a ChatPiece is (vkllm_chat_piece_kind).
type ChatPieceKind int32

const (
	PieceContent   ChatPieceKind = C.VKLLM_CHAT_PIECE_CONTENT   // answer text
	PieceReasoning ChatPieceKind = C.VKLLM_CHAT_PIECE_REASONING // reasoning text
	PieceToolCall  ChatPieceKind = C.VKLLM_CHAT_PIECE_TOOL_CALL // a complete tool call
)

// ChatPiece is a piece of a streamed reply: text (a tool call's arguments) and, for
// PieceToolCall, the call (its ID given by the conversation where the model gave none).
type ChatPiece struct {
	Kind     ChatPieceKind
	Text     string
	ToolCall *ToolCall
}

// ChatReply is what a reply did (vkllm_conversation_result): NPrompt tokens of the rendered
// conversation, of which NReused were in the cache and NPrefilled were prefilled.
type ChatReply struct {
	NPrompt, NReused, NPrefilled, NGenerated int
	StopReason                               StopReason // StopMaxTokens also at the context's end
	NToolCalls                               int
	PrefillMs, DecodeMs                      float64
	Seed                                     uint64
	// Whether the reply's raw text is a finished string of the sampling grammar:
	// GrammarIncomplete when MaxTokens, the context's end, a stop string or a cancel cut it
	// short, so it must not be parsed as the grammar's language. GrammarComplete without a
	// grammar.
	GrammarProgress GrammarProgress
}

// Conversation is a chat on one sequence of a Session (vkllm_conversation). Each Reply renders
// the messages through the chat template, prefills only the tokens after the prefix the cache
// already holds, streams the reply as content, reasoning and tool calls, and appends it as an
// assistant turn; add the tools' results as "tool" turns and reply again. The rendered text is
// tokenized with its special tokens parsed ("<|im_end|>" is the control token), as the model
// was trained on it. The session must stay open while the conversation is used; its methods
// wait for each other and for the session's.
type Conversation struct {
	mu      sync.Mutex
	h       *C.vkllm_conversation
	session *Session
}

// NewConversation creates an empty conversation on s. The template, tools and variables are
// checked now: an unknown template name, or a model without a template when none is named, is
// ErrNotFound.
func NewConversation(s *Session, opts ConversationOptions) (*Conversation, error) {
	var p C.vkllm_conversation_params
	C.vkllm_conversation_params_init(&p)
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
	p.seq = C.uint32_t(opts.Seq)
	if opts.Template != "" {
		p.template_source = cstr(opts.Template)
	}
	if opts.TemplateName != "" {
		p.template_name = cstr(opts.TemplateName)
	}
	if opts.Tools != nil {
		t, err := json.Marshal(opts.Tools)
		if err != nil {
			return nil, err
		}
		p.tools = cstr(string(t))
	}
	if len(opts.Extra) > 0 {
		e, err := json.Marshal(opts.Extra)
		if err != nil {
			return nil, err
		}
		p.extra = cstr(string(e))
	}
	if opts.Now != nil {
		p.now = C.int64_t(*opts.Now)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return nil, errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var out *C.vkllm_conversation
	if err := check(C.vkllm_conversation_create(s.h, &p, &out)); err != nil {
		return nil, err
	}
	c := &Conversation{h: out, session: s}
	runtime.SetFinalizer(c, (*Conversation).Close)
	return c, nil
}

// Close releases the conversation (the session and its cache stay). Idempotent.
func (c *Conversation) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h != nil {
		C.vkllm_conversation_destroy(c.h)
		c.h = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

// Add appends a message.
func (c *Conversation) Add(turn ChatTurn) error {
	var frees []unsafe.Pointer
	defer func() {
		for _, f := range frees {
			C.free(f)
		}
	}()
	cstr := func(s string) *C.char {
		p := C.CString(s)
		frees = append(frees, unsafe.Pointer(p))
		return p
	}
	opt := func(s string) *C.char {
		if s == "" {
			return nil
		}
		return cstr(s)
	}
	// The C arrays hold only C pointers; they live in C memory for the call.
	var calls *C.vkllm_tool_call
	if n := len(turn.ToolCalls); n > 0 {
		calls = (*C.vkllm_tool_call)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.vkllm_tool_call{}))))
		frees = append(frees, unsafe.Pointer(calls))
		for i, tc := range turn.ToolCalls {
			raw := &unsafe.Slice(calls, n)[i]
			raw.id, raw.name, raw.arguments = cstr(tc.ID), cstr(tc.Name), cstr(tc.Arguments)
		}
	}
	var t C.vkllm_chat_turn
	t.struct_size = C.size_t(unsafe.Sizeof(t))
	t.role = cstr(turn.Role)
	if turn.Content != "" || len(turn.ToolCalls) == 0 {
		t.content = cstr(turn.Content)
	}
	t.reasoning_content = opt(turn.ReasoningContent)
	t.tool_calls = calls
	t.n_tool_calls = C.size_t(len(turn.ToolCalls))
	t.tool_call_id = opt(turn.ToolCallID)
	t.name = opt(turn.Name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(C.vkllm_conversation_add(c.h, &t))
}

// AddMessages appends OpenAI-style messages (a slice of maps or structs that marshal to
// {"role", "content", "tool_calls", ...}; tool-call arguments as objects or JSON text), or one
// such message. Malformed input adds nothing.
func (c *Conversation) AddMessages(messages any) error {
	data, err := json.Marshal(messages)
	if err != nil {
		return err
	}
	text := C.CString(string(data))
	defer C.free(unsafe.Pointer(text))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(C.vkllm_conversation_add_json(c.h, text))
}

// Len is the number of messages (0 once closed).
func (c *Conversation) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return 0
	}
	var n C.size_t
	C.vkllm_conversation_get_count(c.h, &n)
	return int(n)
}

// Message returns message i (0 first); false past the end.
func (c *Conversation) Message(i int) (ChatTurn, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil || i < 0 {
		return ChatTurn{}, false
	}
	var t C.vkllm_chat_turn
	t.struct_size = C.size_t(unsafe.Sizeof(t))
	if C.vkllm_conversation_get_message(c.h, C.size_t(i), &t) != C.VKLLM_OK {
		return ChatTurn{}, false
	}
	out := ChatTurn{
		Role: C.GoString(t.role), Content: C.GoString(t.content),
		ReasoningContent: C.GoString(t.reasoning_content),
		ToolCallID:       C.GoString(t.tool_call_id), Name: C.GoString(t.name),
	}
	if t.n_tool_calls > 0 {
		for _, tc := range unsafe.Slice(t.tool_calls, int(t.n_tool_calls)) {
			out.ToolCalls = append(out.ToolCalls, ToolCall{
				ID: C.GoString(tc.id), Name: C.GoString(tc.name), Arguments: C.GoString(tc.arguments),
			})
		}
	}
	return out, true
}

// Messages returns every message, first to last.
func (c *Conversation) Messages() []ChatTurn {
	var out []ChatTurn
	for i := 0; ; i++ {
		t, ok := c.Message(i)
		if !ok {
			return out
		}
		out = append(out, t)
	}
}

// Truncate keeps the first n messages (0: start over; Len()-1 after a reply: retry it).
func (c *Conversation) Truncate(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return check(C.vkllm_conversation_truncate(c.h, C.size_t(n)))
}

// chatState is what the C callback reaches through a cgo.Handle.
type chatState struct {
	ctx     context.Context
	onPiece func(ChatPiece) bool
	stopped bool // onPiece returned false
	panic   any  // a panic of onPiece, re-raised after the C call returns
}

//export vkllmgoOnChatPiece
func vkllmgoOnChatPiece(handle C.uintptr_t, kind C.int32_t, text *C.char, length C.size_t,
	call *C.vkllm_tool_call) C.int32_t {
	st := cgo.Handle(handle).Value().(*chatState)
	if st.panic != nil || st.stopped || st.ctx.Err() != nil {
		return 1
	}
	p := ChatPiece{Kind: ChatPieceKind(kind), Text: C.GoStringN(text, C.int(length))}
	if call != nil {
		p.ToolCall = &ToolCall{
			ID: C.GoString(call.id), Name: C.GoString(call.name), Arguments: C.GoString(call.arguments),
		}
	}
	goOn := func() (ok bool) {
		// A Go panic must not unwind through the C frames: keep it and stop the reply.
		defer func() {
			if r := recover(); r != nil {
				st.panic = r
				ok = false
			}
		}()
		return st.onPiece(p)
	}()
	if !goOn {
		if st.panic == nil {
			st.stopped = true
		}
		return 1
	}
	return 0
}

// Reply generates the assistant's reply, calling onPiece (nil: none) with each piece, and
// appends it. maxTokens 0: until an end token or the context's end. onPiece returning false
// stops the reply cleanly (nil error, StopCancelled; the reply so far is kept). When ctx is
// done the library is told to stop, and the error is an *Error with StatusCancelled that also
// matches ctx.Err() with errors.Is. A grammar in sampling constrains the raw reply, markers
// included.
func (c *Conversation) Reply(ctx context.Context, sampling Sampling, maxTokens uint32,
	onPiece func(ChatPiece) bool) (ChatReply, error) {
	if onPiece == nil {
		onPiece = func(ChatPiece) bool { return true }
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return ChatReply{}, errClosed
	}
	s := c.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return ChatReply{}, errClosed
	}
	if err := ctx.Err(); err != nil {
		return ChatReply{}, &Error{Status: StatusCancelled, Message: err.Error(), cause: err}
	}
	raw, free, err := sampling.raw()
	if err != nil {
		return ChatReply{}, err
	}
	defer free()
	st := &chatState{ctx: ctx, onPiece: onPiece}
	h := cgo.NewHandle(st)
	defer h.Delete()
	stop := context.AfterFunc(ctx, s.Cancel) // a prefill stops at its next chunk too
	defer stop()
	var res C.vkllm_conversation_result
	res.struct_size = C.size_t(unsafe.Sizeof(res))
	runtime.LockOSThread()
	status := C.vkllmgo_conversation_reply(c.h, &raw, C.uint32_t(maxTokens), C.uintptr_t(h), &res)
	err = check(status)
	runtime.UnlockOSThread()
	if st.panic != nil {
		panic(st.panic)
	}
	reply := ChatReply{
		NPrompt: int(res.n_prompt), NReused: int(res.n_reused), NPrefilled: int(res.n_prefilled),
		NGenerated: int(res.n_generated), StopReason: StopReason(res.stop_reason),
		NToolCalls: int(res.n_tool_calls), PrefillMs: float64(res.prefill_ms),
		DecodeMs: float64(res.decode_ms), Seed: uint64(res.seed),
		GrammarProgress: GrammarProgress(res.grammar_progress),
	}
	if status == C.VKLLM_ERR_CANCELLED {
		if cerr := ctx.Err(); cerr != nil {
			e := err.(*Error)
			e.cause = cerr
			return reply, e
		}
		if st.stopped {
			return reply, nil
		}
	}
	return reply, err
}

// ReplyChan runs Reply in a goroutine and streams its pieces through the first channel, which
// is closed at the end; the second then receives the result (its error nil on success) and is
// closed. Cancel ctx to stop early; the consumer should drain the pieces channel or cancel.
func (c *Conversation) ReplyChan(ctx context.Context, sampling Sampling,
	maxTokens uint32) (<-chan ChatPiece, <-chan ReplyResult) {
	pieces := make(chan ChatPiece)
	done := make(chan ReplyResult, 1)
	go func() {
		defer close(done)
		r, err := c.Reply(ctx, sampling, maxTokens, func(p ChatPiece) bool {
			select {
			case pieces <- p:
				return true
			case <-ctx.Done():
				return false
			}
		})
		close(pieces)
		done <- ReplyResult{r, err}
	}()
	return pieces, done
}

// ReplyResult is what ReplyChan's Reply returned.
type ReplyResult struct {
	Reply ChatReply
	Err   error
}
