package vkllm

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// testModel returns $VKLLM_TEST_MODEL; the tests fail (not skip) when it is unset or missing.
func testModel(t *testing.T) string {
	t.Helper()
	path := os.Getenv("VKLLM_TEST_MODEL")
	if path == "" {
		t.Fatal("VKLLM_TEST_MODEL must name a model file (e.g. tiny-qwen2-f32.gguf)")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("VKLLM_TEST_MODEL: %v", err)
	}
	return path
}

func load(t *testing.T) (*Runtime, *Model) {
	t.Helper()
	path := testModel(t)
	rt, err := NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	m, err := LoadModel(rt, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return rt, m
}

func TestVersion(t *testing.T) {
	if Version()/10000 != VersionNumber/10000 {
		t.Fatalf("library version %d, bindings written for %d", Version(), VersionNumber)
	}
}

func TestGenerateCallbackAndChannelAgree(t *testing.T) {
	_, m := load(t)
	prompt, err := m.Tokenize("Once upon a time")
	if err != nil || len(prompt) == 0 {
		t.Fatalf("tokenize: %v %v", prompt, err)
	}
	s, err := NewSession(m, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	var ids []int32
	var text strings.Builder
	gen, err := s.Generate(context.Background(), prompt, Greedy(), 8, func(tok Token) bool {
		if tok.ID >= 0 {
			ids = append(ids, tok.ID)
		}
		text.WriteString(tok.Text)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if gen.NPrompt != len(prompt) || gen.NGenerated == 0 || len(ids) == 0 {
		t.Fatalf("generation %+v, %d ids", gen, len(ids))
	}
	detok, err := m.Detokenize(ids)
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != detok || text.Len() == 0 {
		t.Fatalf("streamed %q, detokenized %q", text.String(), detok)
	}
	t.Logf("generated %d tokens: %q", len(ids), text.String())

	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	tokens, errc := s.GenerateChan(context.Background(), prompt, Greedy(), 8)
	var chanIDs []int32
	for tok := range tokens {
		if tok.ID >= 0 {
			chanIDs = append(chanIDs, tok.ID)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(chanIDs) != len(ids) {
		t.Fatalf("channel gave %v, callback %v", chanIDs, ids)
	}
	for i := range ids {
		if ids[i] != chanIDs[i] {
			t.Fatalf("channel gave %v, callback %v", chanIDs, ids)
		}
	}
}

func TestZeroMaxTokensOnlyPrefills(t *testing.T) {
	_, m := load(t)
	prompt, err := m.Tokenize("Hello world")
	if err != nil || len(prompt) == 0 {
		t.Fatalf("tokenize: %v %v", prompt, err)
	}
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	collect := func(prompt []int32, maxTokens uint32) (Generation, []Token) {
		t.Helper()
		var toks []Token
		gen, err := s.Generate(context.Background(), prompt, Greedy(), maxTokens,
			func(tok Token) bool {
				toks = append(toks, tok)
				return true
			})
		if err != nil {
			t.Fatal(err)
		}
		return gen, toks
	}
	thrice := append(append(append([]int32{}, prompt...), prompt...), prompt...)
	_, want := collect(thrice, 4)

	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	// The prompt twice, prefilled only: nothing generated, the position moved on by it.
	for times := 1; times <= 2; times++ {
		gen, toks := collect(prompt, 0)
		if len(toks) != 0 || gen.NPrompt != len(prompt) || gen.NGenerated != 0 ||
			gen.StopReason != StopMaxTokens {
			t.Fatalf("prefill only: generation %+v, tokens %v", gen, toks)
		}
		pos, err := s.Position()
		if err != nil || int(pos) != times*len(prompt) {
			t.Fatalf("position %d (%v) after %d prompts of %d", pos, err, times, len(prompt))
		}
	}
	// The third time answered: as if the three had come in one Generate.
	_, got := collect(prompt, 4)
	if len(got) != len(want) {
		t.Fatalf("after the prefills %v, in one generate %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("after the prefills %v, in one generate %v", got, want)
		}
	}
}

func TestContextCancellationStopsEarly(t *testing.T) {
	_, m := load(t)
	prompt, err := m.Tokenize("Hello")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(m, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	gen, err := s.Generate(ctx, prompt, Greedy(), 8, func(Token) bool {
		n++
		cancel() // cancelled after the first token
		return true
	})
	if n != 1 || gen.NGenerated >= 8 {
		t.Fatalf("%d callbacks, generation %+v", n, gen)
	}
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v is not ErrCancelled and context.Canceled", err)
	}
	if gen.StopReason != StopCancelled {
		t.Fatalf("stop reason %d", gen.StopReason)
	}

	// The session stays usable; the channel variant stops the same way.
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	tokens, errc := s.GenerateChan(ctx2, prompt, Greedy(), 8)
	<-tokens
	cancel2()
	got := 1
	for range tokens {
		got++
	}
	if err := <-errc; !errors.Is(err, ErrCancelled) {
		t.Fatalf("channel error %v", err)
	}
	if got >= 8 {
		t.Fatalf("channel gave %d tokens after cancellation", got)
	}
}

func TestIgnoreEOGGeneratesThroughTheEndToken(t *testing.T) {
	_, m := load(t)
	// The tiny model's greedy continuation of token 89 reaches its end token <|im_end|> (318)
	// after a few tokens.
	prompt := []int32{89}
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ended []int32
	gen, err := s.Generate(context.Background(), prompt, Greedy(), 32, func(tok Token) bool {
		if tok.ID >= 0 {
			ended = append(ended, tok.ID)
		}
		return true
	})
	if err != nil || gen.StopReason != StopEndOfGeneration || gen.NGenerated >= 28 {
		t.Fatalf("err %v, generation %+v", err, gen)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	n := gen.NGenerated
	var through []int32
	opts := GenerateOptions{MaxTokens: uint32(n + 4), IgnoreEOG: true}
	gen, err = s.GenerateWith(context.Background(), prompt, Greedy(), opts, func(tok Token) bool {
		if tok.ID >= 0 {
			through = append(through, tok.ID)
		}
		return true
	})
	if err != nil || gen.StopReason != StopMaxTokens || gen.NGenerated != n+4 || len(through) != n+4 {
		t.Fatalf("err %v, generation %+v, %d tokens", err, gen, len(through))
	}
	for i := range ended {
		if through[i] != ended[i] {
			t.Fatalf("past the end token %v, stopped at it %v", through, ended)
		}
	}
}

func TestCallbackReturningFalseIsACleanStop(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Hello")
	s, err := NewSession(m, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	gen, err := s.Generate(context.Background(), prompt, Greedy(), 8, func(Token) bool {
		n++
		return false
	})
	if err != nil || n != 1 || gen.StopReason != StopCancelled {
		t.Fatalf("err %v, %d calls, %+v", err, n, gen)
	}
}

func TestPanicInCallbackIsReraised(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Hello")
	s, err := NewSession(m, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	func() {
		defer func() {
			if recover() != "boom" {
				t.Fatal("panic not re-raised")
			}
		}()
		s.Generate(context.Background(), prompt, Greedy(), 8, func(Token) bool { panic("boom") })
	}()
	if _, err := s.Generate(context.Background(), prompt, Greedy(), 2, func(Token) bool { return true }); err != nil {
		t.Fatalf("session unusable after a panic: %v", err)
	}
}

func TestMissingFileIsErrIO(t *testing.T) {
	testModel(t)
	rt, err := NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, err = LoadModel(rt, "/nonexistent/vkllm-missing.gguf")
	if !errors.Is(err, ErrIO) || errors.Is(err, ErrFormat) {
		t.Fatalf("error %v is not ErrIO", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusIO || e.Message == "" {
		t.Fatalf("errors.As gave %#v", e)
	}
}

func TestClosedObjectsFailCleanly(t *testing.T) {
	_, m := load(t)
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	m.Close() // the session keeps the model alive in the library
	if _, err := s.Position(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if _, err := s.Position(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("closed session: %v", err)
	}
	if _, err := m.Tokenize("x"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("closed model: %v", err)
	}
}
