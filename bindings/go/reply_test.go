package vkllm

import (
	"errors"
	"reflect"
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
