package vkllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const personSchema = `{"type": "object",
  "properties": {"name": {"type": "string", "maxLength": 20},
                 "age": {"type": "integer", "minimum": 0, "maximum": 150}},
  "required": ["name", "age"]}`

// Nine places for whitespace of at most 21 characters each (the converter's space) and every
// value bounded: at most 214 characters, so that even the tiny model's random continuation ends
// within its 256 positions (a prompt and 240 tokens of at least one character).
const boundedSchema = `{"type": "object",
  "properties": {"ok": {"type": "boolean"}, "tag": {"enum": ["red", "green"]}},
  "required": ["ok", "tag"]}`

const unsupportedSchema = `{"type": "array", "items": {"type": "integer"}, "uniqueItems": true}`

// cachedModel returns a real model of scripts/fetch-models' cache (tests/model_cache.h's rule:
// $VKLLM_MODEL_CACHE, else $XDG_CACHE_HOME/vkllm/models, else ~/.cache/vkllm/models), or "".
func cachedModel(name string) string {
	dir := os.Getenv("VKLLM_MODEL_CACHE")
	if dir == "" {
		if xdg := os.Getenv("XDG_CACHE_HOME"); xdg != "" {
			dir = filepath.Join(xdg, "vkllm", "models")
		} else {
			dir = filepath.Join(os.Getenv("HOME"), ".cache", "vkllm", "models")
		}
	}
	path := filepath.Join(dir, name)
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return path
}

// mustGrammar returns a test's grammar, closed when the test ends, or fails the test.
func mustGrammar(t *testing.T) func(*Grammar, error) *Grammar {
	return func(g *Grammar, err error) *Grammar {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
}

func generateText(t *testing.T, s *Session, prompt []int32, sampling Sampling,
	maxTokens uint32) (string, Generation) {
	t.Helper()
	var text strings.Builder
	gen, err := s.Generate(context.Background(), prompt, sampling, maxTokens, func(tok Token) bool {
		text.WriteString(tok.Text)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return text.String(), gen
}

func TestJSONSchemaToGBNFWritesARootRuleThatCompiles(t *testing.T) {
	_, m := load(t)
	gbnf, err := JSONSchemaToGBNF(personSchema)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(gbnf, "root ::=") {
		t.Fatalf("no root rule in %q", gbnf)
	}
	mustGrammar(t)(NewGrammar(m.Tokenizer(), gbnf, ""))
}

func TestBadGrammarsAndUnsupportedSchemaKeywordsSayWhereAndWhat(t *testing.T) {
	_, m := load(t)
	_, err := NewGrammar(m.Tokenizer(), `root = "yes"`, "")
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArgument ||
		!strings.Contains(e.Message, "line 1, column") {
		t.Errorf("bad grammar: %v", err)
	}
	_, err = NewGrammarFromJSONSchema(m.Tokenizer(), unsupportedSchema)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "uniqueItems") {
		t.Errorf("uniqueItems: %v", err)
	}
	if _, err := JSONSchemaToGBNF(unsupportedSchema); err == nil ||
		!strings.Contains(err.Error(), "uniqueItems") {
		t.Errorf("uniqueItems to GBNF: %v", err)
	}
	// A closed grammar is refused, not read.
	g, err := NewGrammar(m.Tokenizer(), `root ::= "a"`, "")
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	s := Greedy()
	s.Grammar = g
	if _, err := NewSampler(m, s); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("closed grammar: %v", err)
	}
}

func TestApplyGrammarLeavesFiniteOnlyTokensSpellingAPrefixOfTheText(t *testing.T) {
	_, m := load(t)
	nVocab, err := m.NVocab()
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGrammar(m.Tokenizer(), `root ::= "a"`, "")
	if err != nil {
		t.Fatal(err)
	}
	s := Greedy()
	s.Grammar = g
	sp, err := NewSampler(m, s)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	g.Close() // the sampler holds its own reference
	row := make([]float32, nVocab)
	for i := range row {
		row[i] = 0.5
	}
	if err := sp.ApplyGrammar(row); err != nil {
		t.Fatal(err)
	}
	var finite []int32
	for i, x := range row {
		if !math.IsInf(float64(x), -1) {
			if x != 0.5 {
				t.Fatalf("token %d: %v", i, x)
			}
			finite = append(finite, int32(i))
		}
	}
	tok := m.Tokenizer()
	info, err := tok.Info()
	if err != nil {
		t.Fatal(err)
	}
	var want []int32
	for i := int32(0); i < int32(info.NVocab); i++ {
		piece, err := tok.TokenToPiece(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(piece) == "a" {
			want = append(want, i)
		}
	}
	if len(want) == 0 || !reflect.DeepEqual(finite, want) {
		t.Errorf("finite %v, tokens spelling \"a\" %v", finite, want)
	}

	plain, err := NewSampler(m, Greedy())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for i := range row {
		row[i] = 1
	}
	if err := plain.ApplyGrammar(row); err != nil {
		t.Fatal(err)
	}
	for i, x := range row {
		if x != 1 {
			t.Fatalf("without a grammar, token %d: %v", i, x)
		}
	}
	if p, err := plain.GrammarProgress(); err != nil || p != GrammarComplete {
		t.Errorf("without a grammar: %v %v", p, err)
	}
}

func TestProgressGoesFromIncompleteToFinishedOverTheTokensOfTheText(t *testing.T) {
	_, m := load(t)
	ids, err := m.TokenizeFlags("yes", 0)
	if err != nil {
		t.Fatal(err)
	}
	g := mustGrammar(t)(NewGrammar(m.Tokenizer(), `root ::= "yes"`, ""))
	s := Greedy()
	s.Grammar = g
	sp, err := NewSampler(m, s)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	progress := func() GrammarProgress {
		t.Helper()
		p, err := sp.GrammarProgress()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	prompt, _ := m.Tokenize("Hello world")
	if err := sp.AcceptPrompt(prompt); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if p := progress(); p != GrammarIncomplete {
			t.Fatalf("before token %d: %v", i, p)
		}
		if err := sp.Accept(id); err != nil {
			t.Fatal(err)
		}
	}
	if p := progress(); p != GrammarFinished {
		t.Fatalf("after %q: %v", "yes", p)
	}
	if err := sp.Reset(); err != nil || progress() != GrammarIncomplete {
		t.Fatalf("reset: %v %v", err, progress())
	}
	no, _ := m.TokenizeFlags("no", 0)
	err = sp.Accept(no[0])
	if !errors.Is(err, ErrInvalidArgument) || progress() != GrammarIncomplete {
		t.Errorf("a token the grammar does not allow: %v %v", err, progress())
	}
}

func TestAChoiceGrammarGeneratesOneOfItsLabels(t *testing.T) {
	_, m := load(t)
	labels := []string{"positive", "negative", "neutral"}
	gbnf := `root ::= "positive" | "negative" | "neutral"`
	g := mustGrammar(t)(NewGrammar(m.Tokenizer(), gbnf, ""))
	prompt, _ := m.Tokenize("Hello world")
	s, err := NewSession(m, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seed := uint64(1); seed <= 3; seed++ {
		if err := s.Reset(); err != nil {
			t.Fatal(err)
		}
		sampling := DefaultSampling()
		sampling.Temperature = 1
		sampling.Seed = seed
		sampling.Grammar = g
		text, gen := generateText(t, s, prompt, sampling, 16)
		found := false
		for _, l := range labels {
			found = found || text == l
		}
		if !found || gen.StopReason != StopEndOfGeneration {
			t.Errorf("seed %d: %q %v", seed, text, gen.StopReason)
		}
	}
}

func TestABoundedJSONSchemaGivesJSONWithTheRequiredKeys(t *testing.T) {
	_, m := load(t)
	g := mustGrammar(t)(NewGrammarFromJSONSchema(m.Tokenizer(), boundedSchema))
	prompt, _ := m.Tokenize("Hello world")
	s, err := NewSession(m, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sampling := DefaultSampling()
	sampling.Seed = 7
	sampling.Grammar = g
	text, gen := generateText(t, s, prompt, sampling, 240)
	var v struct {
		OK  *bool   `json:"ok"`
		Tag *string `json:"tag"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil || gen.StopReason != StopEndOfGeneration {
		t.Fatalf("%q: %v %v", text, err, gen.StopReason)
	}
	if v.OK == nil || v.Tag == nil || (*v.Tag != "red" && *v.Tag != "green") {
		t.Errorf("%q", text)
	}
}

func TestAGenerationSaysWhetherItsTextFinishedTheGrammar(t *testing.T) {
	rt, m := load(t)
	g := mustGrammar(t)(NewGrammarFromJSONSchema(m.Tokenizer(), boundedSchema))
	prompt, _ := m.Tokenize("Hello world")
	s, err := NewSession(m, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sampling := DefaultSampling()
	sampling.Seed = 7
	sampling.Grammar = g
	cut, gen := generateText(t, s, prompt, sampling, 3)
	if gen.StopReason != StopMaxTokens || gen.GrammarProgress != GrammarIncomplete {
		t.Errorf("%q: %v %v", cut, gen.StopReason, gen.GrammarProgress)
	}
	if got := fmt.Sprint(gen.StopReason, " ", gen.GrammarProgress); got != "MAX_TOKENS INCOMPLETE" {
		t.Errorf("the names print as %q", got)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	whole, gen := generateText(t, s, prompt, sampling, 240)
	if gen.StopReason != StopEndOfGeneration || gen.GrammarProgress != GrammarFinished ||
		!strings.HasPrefix(whole, cut) {
		t.Errorf("%q after %q: %v %v", whole, cut, gen.StopReason, gen.GrammarProgress)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, gen = generateText(t, s, prompt, Greedy(), 3); gen.GrammarProgress != GrammarComplete {
		t.Errorf("without a grammar: %v", gen.GrammarProgress)
	}
	if stats, err := rt.Stats(); err != nil || stats.PipelineCompileMs <= 0 {
		t.Errorf("pipeline compile time %v, %v", stats.PipelineCompileMs, err)
	}
}

func TestSmolLM2UnderAJSONSchemaWritesTheObjectItsOwnSamplingLoopDoes(t *testing.T) {
	path := cachedModel("SmolLM2-135M-Instruct.Q4_1.gguf")
	if path == "" {
		t.Skip("SmolLM2-135M-Instruct is not cached: run scripts/fetch-models")
	}
	rt, err := NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	m, err := LoadModel(rt, path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompt, err := m.TokenizeFlags("<|im_start|>user\nDescribe a person as JSON: name and age."+
		"<|im_end|>\n<|im_start|>assistant\n", TokenizeParseSpecial)
	if err != nil {
		t.Fatal(err)
	}
	g := mustGrammar(t)(NewGrammarFromJSONSchema(m.Tokenizer(), personSchema))
	sampling := Greedy()
	sampling.Grammar = g
	s, err := NewSession(m, 512)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	text, gen := generateText(t, s, prompt, sampling, 96)
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil || gen.StopReason != StopEndOfGeneration {
		t.Fatalf("%q: %v %v", text, err, gen.StopReason)
	}
	if _, ok := v["name"].(string); !ok || len(v) != 2 {
		t.Errorf("%q", text)
	}
	if _, ok := v["age"].(float64); !ok {
		t.Errorf("%q", text)
	}

	// The app's own loop with a Sampler: the same tokens.
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	sp, err := NewSampler(m, sampling)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.AcceptPrompt(prompt); err != nil {
		t.Fatal(err)
	}
	logits, err := s.Eval(0, prompt)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	for len(out) < 96 {
		if p, _ := sp.GrammarProgress(); p == GrammarFinished {
			break
		}
		tok, err := sp.Sample(logits)
		if err != nil {
			t.Fatal(err)
		}
		if eog, _ := m.Tokenizer().IsEndOfGeneration(tok); eog {
			break
		}
		if err := sp.Accept(tok); err != nil {
			t.Fatal(err)
		}
		out = append(out, tok)
		if logits, err = s.Eval(0, []int32{tok}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := m.Detokenize(out); got != text {
		t.Errorf("own loop %q, Generate %q", got, text)
	}
}
