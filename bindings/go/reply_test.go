package vkllm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func parseReply(t *testing.T, p *ReplyParser, reply []byte, piece int) ReplyPart {
	t.Helper()
	var all ReplyPart
	add := func(r ReplyPart, err error) {
		if err != nil {
			t.Fatal(err)
		}
		all.Reasoning += r.Reasoning
		all.Content += r.Content
		all.ToolCalls = append(all.ToolCalls, r.ToolCalls...)
	}
	for i := 0; i < len(reply); i += piece {
		end := i + piece
		if end > len(reply) {
			end = len(reply)
		}
		add(p.Push(reply[i:end]))
	}
	add(p.Finish())
	return all
}

func TestReplyParserSplitsReasoningAnswerAndToolCallsAsTheyStream(t *testing.T) {
	reply := []byte("<think>\nWeather for Zürich.\n</think>\n\nOne moment. <tool_call>\n" +
		`{"name": "get_weather", "arguments": {"city": "Zürich"}}` + "\n</tool_call>")
	if f := ReplyFormatOfTemplate("{{ '<tool_call>' }}"); f != ReplyHermes {
		t.Fatalf("format %d, want Hermes", f)
	}
	if !PromptOpensReasoning("<|im_start|>assistant\n<think>\n") {
		t.Fatal("an open <think> not seen")
	}
	p, err := NewReplyParser(ReplyHermes, false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want := ReplyPart{
		Reasoning: "Weather for Zürich.",
		Content:   "One moment.",
		ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city": "Zürich"}`}},
	}
	for _, piece := range []int{len(reply), 1, 3} {
		if got := parseReply(t, p, reply, piece); !reflect.DeepEqual(got, want) {
			t.Errorf("pieces of %d: got %+v, want %+v", piece, got, want)
		}
	}
	if _, err := NewReplyParser(ReplyFormat(42), false); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown format: %v", err)
	}
}

const callTemplate = "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.tool_calls %}" +
	"{% for c in m.tool_calls %}<tool_call>\n{{ {'name': c.function.name, " +
	"'arguments': c.function.arguments} | tojson }}\n</tool_call>{% endfor %}" +
	"{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}" +
	"{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"

func TestChatRenderErrorsCarryTheTemplatesMessage(t *testing.T) {
	_, err := ChatRender(ChatOptions{Template: "{{ raise_exception('roles must alternate') }}"},
		[]map[string]any{{"role": "user", "content": "x"}})
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArgument ||
		!strings.Contains(e.Message, "roles must alternate") {
		t.Fatalf("got %v", err)
	}
	out, err := ChatRender(ChatOptions{TemplateName: "chatml"},
		[]map[string]any{{"role": "user", "content": "Hi"}})
	if err != nil || out != "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n" {
		t.Fatalf("chatml: %q, %v", out, err)
	}
}

func TestAToolCallRoundTripsThroughTemplateModelAndParser(t *testing.T) {
	_, m := load(t)
	call := map[string]any{"id": "abc123XYZ", "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Zürich"}}}
	messages := []map[string]any{
		{"role": "user", "content": "Weather in Zürich?"},
		{"role": "assistant", "content": nil, "tool_calls": []any{call}},
	}
	prompt, err := ChatRender(ChatOptions{Model: m, Template: callTemplate, NoGenerationPrompt: true}, messages)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := m.TokenizeFlags(prompt, TokenizeParseSpecial)
	if err != nil || len(ids) == 0 {
		t.Fatalf("tokenize: %v", err)
	}
	reply := strings.Split(strings.Split(prompt, "<|im_start|>assistant\n")[1], "<|im_end|>")[0]
	p, err := NewReplyParser(ReplyFormatOfTemplate(callTemplate), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := parseReply(t, p, []byte(reply), 5)
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "get_weather" ||
		got.ToolCalls[0].Arguments != `{"city": "Zürich"}` {
		t.Fatalf("calls %+v", got.ToolCalls)
	}
}
