package vkllm

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestSamplerAppliesBiasPenaltiesSeedAndReset(t *testing.T) {
	logits := []float32{0, 1, 2, 3}
	sample := func(s Sampling, history ...int32) int32 {
		t.Helper()
		sp, err := NewSampler(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		for _, tok := range history {
			if err := sp.Accept(tok); err != nil {
				t.Fatal(err)
			}
		}
		tok, err := sp.Sample(logits)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	if got := sample(Greedy()); got != 3 {
		t.Errorf("greedy: %d", got)
	}
	banned := Greedy()
	banned.LogitBias = map[int32]float32{3: float32(math.Inf(-1))}
	if got := sample(banned); got != 2 {
		t.Errorf("token 3 banned: %d", got)
	}
	penalised := Greedy()
	penalised.FrequencyPenalty = 2
	if got := sample(penalised, 3); got != 2 {
		t.Errorf("3 - 2 < 2: %d", got)
	}

	seeded := DefaultSampling()
	seeded.TopK = 2
	seeded.Seed = 5
	draws := func() []int32 {
		sp, err := NewSampler(nil, seeded)
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		var out []int32
		for i := 0; i < 50; i++ {
			tok, _ := sp.Sample(logits)
			out = append(out, tok)
		}
		if err := sp.Reset(); err != nil {
			t.Fatal(err)
		}
		if again, _ := sp.Sample(logits); again != out[0] {
			t.Errorf("after Reset: %d, first draw was %d", again, out[0])
		}
		if seed, _ := sp.Seed(); seed != 5 {
			t.Errorf("seed %d", seed)
		}
		return out
	}
	a := draws()
	if !reflect.DeepEqual(a, draws()) {
		t.Error("the same seed gave other draws")
	}
	for _, tok := range a {
		if tok != 2 && tok != 3 {
			t.Fatalf("top-k 2 drew %d", tok)
		}
	}
	random := DefaultSampling()
	random.Seed = SeedRandom
	r1, _ := NewSampler(nil, random)
	r2, _ := NewSampler(nil, random)
	s1, _ := r1.Seed()
	s2, _ := r2.Seed()
	if s1 == s2 || s1 == SeedRandom {
		t.Errorf("random seeds %d and %d", s1, s2)
	}
	r1.Close()
	r2.Close()

	bad := DefaultSampling()
	bad.TopK = -2
	if _, err := NewSampler(nil, bad); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("top_k -2: %v", err)
	}
}

func TestGenerateBatchReproducesAndInfoAndMetadataDescribeSessionAndModel(t *testing.T) {
	_, m := load(t)
	p0, _ := m.Tokenize("Hello world")
	p1, _ := m.Tokenize("Once upon a time")
	s, err := NewSessionSequences(m, 64, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := s.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.NCtx != 64 || info.NSeq != 2 || info.KVType != KVF16 || info.DeviceBytes <= info.KVCacheBytes {
		t.Errorf("info %+v", info)
	}
	opts := GenerateOptions{MaxTokens: 6, IgnoreEOG: true}
	sampling := DefaultSampling()
	sampling.Temperature = 1
	sampling.Seed = 9
	run := func() [][]int32 {
		if err := s.Reset(); err != nil {
			t.Fatal(err)
		}
		sp, err := NewSampler(m, sampling)
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		out, err := s.GenerateBatch([][]int32{p0, p1}, []*Sampler{sp, nil}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := run()
	if !reflect.DeepEqual(first, run()) {
		t.Error("the same seed gave other tokens")
	}
	if len(first[0]) != 6 {
		t.Errorf("%d tokens", len(first[0]))
	}
	// The greedy sequence is what greedy generation gives alone.
	alone, _ := NewSession(m, 64)
	defer alone.Close()
	var ids []int32
	if _, err := alone.GenerateWith(context.Background(), p1, Greedy(), opts, func(tok Token) bool {
		if tok.ID >= 0 {
			ids = append(ids, tok.ID)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, first[1]) {
		t.Errorf("alone %v, in the batch %v", ids, first[1])
	}

	arch, err := m.MetaString("general.architecture")
	if err != nil || arch == "" {
		t.Fatalf("architecture %q: %v", arch, err)
	}
	keys, _ := m.MetaKeys()
	if len(keys) < 5 || keys[0] == "" {
		t.Errorf("keys %v", keys)
	}
	if n, err := m.MetaInt(arch + ".context_length"); err != nil || n <= 0 {
		t.Errorf("context_length %d: %v", n, err)
	}
	if f, err := m.MetaFloat(arch + ".context_length"); err != nil || f <= 0 {
		t.Errorf("context_length %g: %v", f, err)
	}
	if _, err := m.MetaInt("no.such.key"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
}

func TestCancelFromAnotherGoroutineStopsGenerationAndARandomSeedIsReported(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Hello world")
	s, err := NewSession(m, 128)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	gen, err := s.GenerateWith(context.Background(), prompt, Greedy(),
		GenerateOptions{MaxTokens: 60, IgnoreEOG: true}, func(tok Token) bool {
			if n++; n == 2 {
				done := make(chan struct{})
				go func() { s.Cancel(); close(done) }()
				<-done // cancelled by the other goroutine while this one waits
			}
			return true
		})
	if !errors.Is(err, ErrCancelled) || gen.StopReason != StopCancelled || gen.NGenerated != 2 {
		t.Errorf("err %v, %+v", err, gen)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	random := DefaultSampling()
	random.Seed = SeedRandom
	random.PresencePenalty = 0.5
	random.TypicalP = 0.9
	gen, err = s.Generate(context.Background(), prompt, random, 4, func(Token) bool { return true })
	if err != nil || gen.Seed == SeedRandom {
		t.Errorf("seed %d: %v", gen.Seed, err)
	}
	s.Close()
	s.Cancel() // harmless on a closed session
}
