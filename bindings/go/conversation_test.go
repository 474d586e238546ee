package vkllm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The tiny test model has ChatML's control tokens and no template of its own.
var chatml = ConversationOptions{TemplateName: "chatml"}

// A Hermes-style ChatML template (Qwen 2.5's shape), short enough for the tiny model's 256
// positions.
const hermes = "{%- for m in messages %}" +
	"{%- if m.role == 'assistant' and m.tool_calls %}{{ '<|im_start|>assistant\\n' }}" +
	"{%- for c in m.tool_calls %}{{ '<tool_call>\\n' + ({'name': c.function.name, 'arguments': " +
	"c.function.arguments} | tojson) + '\\n</tool_call>' }}{% endfor %}{{ '<|im_end|>\\n' }}" +
	"{%- elif m.role == 'tool' %}{{ '<|im_start|>user\\n<tool_response>\\n' + m.content + " +
	"'\\n</tool_response><|im_end|>\\n' }}" +
	"{%- else %}{{ '<|im_start|>' + m.role + '\\n' + (m.content or '') + '<|im_end|>\\n' }}" +
	"{%- endif %}{%- endfor %}" +
	"{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

func newChat(t *testing.T, m *Model, opts ConversationOptions) *Conversation {
	t.Helper()
	s, err := NewSession(m, 256)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := NewConversation(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConversationSecondReplyPrefillsOnlyTheNewTokens(t *testing.T) {
	_, m := load(t)
	c := newChat(t, m, chatml)
	if err := c.Add(ChatTurn{Role: "user", Content: "Hello there"}); err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	first, err := c.Reply(context.Background(), Greedy(), 8, func(p ChatPiece) bool {
		if p.Kind == PieceContent {
			streamed.WriteString(p.Text)
		}
		return true
	})
	if err != nil || first.NReused != 0 || first.NPrefilled != first.NPrompt {
		t.Fatalf("first reply %+v, %v", first, err)
	}
	if answer, _ := c.Message(1); answer.Role != "assistant" || answer.Content != streamed.String() {
		t.Fatalf("the reply is %+v; streamed %q", answer, streamed.String())
	}
	c.Add(ChatTurn{Role: "user", Content: "And again"})
	second, err := c.Reply(context.Background(), Greedy(), 8, nil)
	if err != nil || second.NReused < first.NPrompt || second.NReused+second.NPrefilled != second.NPrompt ||
		second.NPrefilled >= second.NPrompt-first.NPrompt {
		t.Fatalf("second reply %+v (first %+v), %v", second, first, err)
	}
	if c.Len() != 4 {
		t.Fatalf("%d messages", c.Len())
	}
}

func TestConversationMultiTurnGreedyReplyIsTheReplyFromScratch(t *testing.T) {
	_, m := load(t)
	// Replies are kept to letters, as in the Python and Rust tests (whose strings cannot carry
	// back the invalid UTF-8 the tiny model writes otherwise).
	g, err := NewGrammar(m.Tokenizer(), "root ::= [a-z ]+", "")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	letters := Greedy()
	letters.Grammar = g
	turns := newChat(t, m, chatml)
	for _, q := range []string{"Tell me a story", "Go on", "And then?"} {
		turns.Add(ChatTurn{Role: "user", Content: q})
		if _, err := turns.Reply(context.Background(), letters, 12, nil); err != nil {
			t.Fatal(err)
		}
	}
	history := turns.Messages()
	last := history[len(history)-1]
	whole := newChat(t, m, chatml)
	for _, turn := range history[:len(history)-1] {
		if err := whole.Add(turn); err != nil {
			t.Fatal(err)
		}
	}
	r, err := whole.Reply(context.Background(), letters, 12, nil)
	if err != nil || r.NReused != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	got, _ := whole.Message(len(history) - 1)
	if last.Content == "" || got.Content != last.Content {
		t.Fatalf("from scratch %q, multi-turn %q", got.Content, last.Content)
	}
}

func TestConversationReplyCutBeforeItsJSONIsDoneIsIncomplete(t *testing.T) {
	_, m := load(t)
	g, err := NewGrammarFromJSONSchema(m.Tokenizer(), `{"type": "object",
		"properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false}`)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	jsonOnly := Greedy()
	jsonOnly.Grammar = g
	c := newChat(t, m, chatml)
	c.Add(ChatTurn{Role: "user", Content: "Is it ok?"})
	cut, err := c.Reply(context.Background(), jsonOnly, 3, nil)
	if err != nil || cut.StopReason != StopMaxTokens || cut.GrammarProgress != GrammarIncomplete {
		t.Fatalf("cut reply %+v (%v), %v", cut, cut.GrammarProgress, err)
	}
	c.Truncate(1)
	whole, err := c.Reply(context.Background(), jsonOnly, 0, nil)
	answer, _ := c.Message(1)
	var parsed struct{ Ok *bool }
	if err != nil || whole.GrammarProgress == GrammarIncomplete ||
		json.Unmarshal([]byte(answer.Content), &parsed) != nil || parsed.Ok == nil {
		t.Fatalf("whole reply %+v (%v) %q, %v", whole, whole.GrammarProgress, answer.Content, err)
	}
	c.Truncate(1)
	free, err := c.Reply(context.Background(), Greedy(), 3, nil)
	if err != nil || free.GrammarProgress != GrammarComplete {
		t.Fatalf("reply without a grammar %+v (%v), %v", free, free.GrammarProgress, err)
	}
}

func TestConversationToolCallsComeOutParsed(t *testing.T) {
	_, m := load(t)
	c := newChat(t, m, ConversationOptions{Template: hermes})
	if err := c.AddMessages([]map[string]any{{"role": "user", "content": "Paris?"}}); err != nil {
		t.Fatal(err)
	}
	g, err := NewGrammar(m.Tokenizer(), `root ::= "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"`, "")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sampling := Greedy()
	sampling.Grammar = g
	var calls []ToolCall
	r, err := c.Reply(context.Background(), sampling, 0, func(p ChatPiece) bool {
		if p.Kind == PieceToolCall {
			calls = append(calls, *p.ToolCall)
		}
		return true
	})
	want := ToolCall{ID: "call00001", Name: "get_weather", Arguments: `{"city": "Paris"}`}
	if err != nil || r.NToolCalls != 1 || len(calls) != 1 || calls[0] != want {
		t.Fatalf("%+v %v %v", r, calls, err)
	}
	if turn, _ := c.Message(1); turn.Content != "" || len(turn.ToolCalls) != 1 || turn.ToolCalls[0] != want {
		t.Fatalf("the reply is %+v", turn)
	}
	c.Add(ChatTurn{Role: "tool", Content: "18 C", ToolCallID: "call00001", Name: "get_weather"})
	// Streamed through a channel; the reply stops at its second piece when ctx is cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pieces, done := c.ReplyChan(ctx, Greedy(), 16)
	n := 0
	for range pieces {
		if n++; n == 1 {
			cancel()
		}
	}
	res := <-done
	if !errors.Is(res.Err, context.Canceled) || res.Reply.StopReason != StopCancelled ||
		res.Reply.NReused < r.NPrompt || c.Len() != 4 {
		t.Fatalf("%+v, %d messages", res, c.Len())
	}
}

func TestConversationBadInputChangesNothing(t *testing.T) {
	_, m := load(t)
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := NewConversation(s, ConversationOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a model without a template: %v", err)
	}
	c, err := NewConversation(s, chatml)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.AddMessages([]map[string]any{{"role": "user"}, {"content": "x"}})
	if !errors.Is(err, ErrInvalidArgument) || c.Len() != 0 {
		t.Fatalf("%v, %d messages", err, c.Len())
	}
	c.Add(ChatTurn{Role: "user", Content: strings.Repeat("a", 200)})
	if _, err := c.Reply(context.Background(), Greedy(), 4, nil); !errors.Is(err, ErrContextFull) || c.Len() != 1 {
		t.Fatalf("%v, %d messages", err, c.Len())
	}
	if err := c.Truncate(0); err != nil || c.Len() != 0 {
		t.Fatalf("%v", err)
	}
	if _, ok := c.Message(0); ok {
		t.Fatal("a message past the end")
	}
}

// The README's chat example, on SmolLM2-135M-Instruct when it is cached.
func TestConversationReadmeExampleRuns(t *testing.T) {
	cache := os.Getenv("VKLLM_MODEL_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "vkllm", "models")
	}
	model := filepath.Join(cache, "SmolLM2-135M-Instruct.Q4_1.gguf")
	if _, err := os.Stat(model); err != nil {
		t.Skip("SmolLM2-135M-Instruct is not cached: run scripts/fetch-models")
	}
	out, err := exec.Command("go", "run", "./examples/chat", model).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Paris") ||
		!regexp.MustCompile(`\[\d+ new tokens, [1-9]\d* reused\]`).Match(out) {
		t.Fatalf("%s", out)
	}
}
