package vkllm

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// loadBert loads $VKLLM_TEST_BERT (tests/data/models/tiny-bert-mean-f32.gguf); the tests fail
// (not skip) when it is unset or missing.
func loadBert(t *testing.T) *Model {
	t.Helper()
	path := os.Getenv("VKLLM_TEST_BERT")
	if path == "" {
		t.Fatal("VKLLM_TEST_BERT must name a bert model file (tiny-bert-mean-f32.gguf)")
	}
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
	return m
}

func norm(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cosine(a, b []float32) float64 {
	dot := 0.0
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot / (norm(a) * norm(b))
}

func assertClose(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d floats against %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-4 {
			t.Fatalf("%s: [%d] %v != %v", what, i, a[i], b[i])
		}
	}
}

var embedTexts = []string{"hello world", "a b c d e f", "", "the quick brown fox"}

func TestEmbedHasTheShapeNormAndBatchingItPromises(t *testing.T) {
	m := loadBert(t)
	if p, err := m.Pooling(); err != nil || p != PoolingMean {
		t.Fatalf("model pooling %v, %v; want mean", p, err)
	}
	s, err := NewSessionSequences(m, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw, err := s.Embed(embedTexts, EmbedOptions{})
	if err != nil || len(raw) != len(embedTexts) {
		t.Fatalf("err %v, %d vectors", err, len(raw))
	}
	unit, err := s.Embed(embedTexts, EmbedOptions{Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		if len(raw[i]) != s.NEmbd() || math.Abs(norm(unit[i])-1) > 1e-5 || cosine(raw[i], unit[i]) < 0.99999 {
			t.Fatalf("text %d: %d floats, normalized norm %v", i, len(raw[i]), norm(unit[i]))
		}
		alone, err := s.Embed(embedTexts[i:i+1], EmbedOptions{})
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "one at a time", alone[0], raw[i])
	}
	if _, err := s.Embed([]string{"hello"}, EmbedOptions{Pooling: PoolingNone}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("pooling none for texts: %v", err)
	}
	long := strings.Repeat("hello ", 40)
	if _, err := s.Embed([]string{long}, EmbedOptions{MaxTokens: 8}); !errors.Is(err, ErrContextFull) {
		t.Fatalf("too long: %v", err)
	}
	cut, err := s.Embed([]string{long}, EmbedOptions{MaxTokens: 8, Truncate: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := m.Tokenize(long)
	kept := append(append([]int32{}, ids[:7]...), ids[len(ids)-1])
	want, err := s.EmbedTokens([][]int32{kept}, EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "truncated", cut[0], want[0])
}

func TestEmbedTokensPoolsTheRowsOfEachToken(t *testing.T) {
	m := loadBert(t)
	s, err := NewSessionSequences(m, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var inputs [][]int32
	total := 0
	for _, text := range embedTexts {
		ids, err := m.Tokenize(text)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, ids)
		total += len(ids)
	}
	rows, err := s.EmbedTokens(inputs, EmbedOptions{Pooling: PoolingNone})
	if err != nil || len(rows) != total {
		t.Fatalf("err %v, %d rows for %d tokens", err, len(rows), total)
	}
	mean, err1 := s.EmbedTokens(inputs, EmbedOptions{Pooling: PoolingMean})
	cls, err2 := s.EmbedTokens(inputs, EmbedOptions{Pooling: PoolingCLS})
	last, err3 := s.EmbedTokens(inputs, EmbedOptions{Pooling: PoolingLast})
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	at := 0
	for i, in := range inputs {
		own := rows[at : at+len(in)]
		at += len(in)
		avg := make([]float32, s.NEmbd())
		for _, r := range own {
			for d := range avg {
				avg[d] += r[d] / float32(len(own))
			}
		}
		assertClose(t, "mean", avg, mean[i])
		assertClose(t, "cls", own[0], cls[i])
		assertClose(t, "last", own[len(own)-1], last[i])
	}
}

func TestDecoderLastTokenPoolingIsItsLastRow(t *testing.T) {
	_, m := load(t)
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids, _ := m.Tokenize("Hello world")
	last, err := s.EmbedTokens([][]int32{ids}, EmbedOptions{Pooling: PoolingLast, Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.EmbedTokens([][]int32{ids}, EmbedOptions{Pooling: PoolingNone})
	if err != nil || len(rows) != len(ids) {
		t.Fatalf("err %v, %d rows for %d tokens", err, len(rows), len(ids))
	}
	if math.Abs(norm(last[0])-1) > 1e-5 || cosine(last[0], rows[len(ids)-1]) < 0.99999 {
		t.Fatalf("last-token vector: norm %v, cosine %v", norm(last[0]), cosine(last[0], rows[len(ids)-1]))
	}
}
