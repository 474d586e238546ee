package vkllm

import (
	"context"
	"errors"
	"math"
	"testing"
)

func TestEvalLogitsOfEveryPositionSumToOneAndEqualALastPositionEval(t *testing.T) {
	_, m := load(t)
	tokens, _ := m.Tokenize("Once upon a time there was")
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.EvalLogits(tokens, nil, true)
	if err != nil || len(rows) != len(tokens) {
		t.Fatalf("err %v, %d rows for %d tokens", err, len(rows), len(tokens))
	}
	for i, row := range rows {
		mass := 0.0
		for _, v := range row {
			mass += math.Exp(float64(v))
		}
		if math.Abs(mass-1) > 1e-4 {
			t.Fatalf("row %d: probabilities sum to %v", i, mass)
		}
	}
	// The last position alone on a fresh sequence, and the raw logits normalised here.
	last := uint32(len(tokens) - 1)
	for _, logSoftmax := range []bool{true, false} {
		if err := s.Reset(); err != nil {
			t.Fatal(err)
		}
		only, err := s.EvalLogits(tokens, []uint32{last}, logSoftmax)
		if err != nil || len(only) != 1 {
			t.Fatalf("err %v, %d rows", err, len(only))
		}
		lse := 0.0
		if !logSoftmax {
			sum := 0.0
			for _, v := range only[0] {
				sum += math.Exp(float64(v))
			}
			lse = math.Log(sum)
		}
		for j, v := range only[0] {
			if d := math.Abs(float64(v) - lse - float64(rows[last][j])); d > 1e-4 {
				t.Fatalf("log-softmax %v, id %d: %v vs %v", logSoftmax, j, v, rows[last][j])
			}
		}
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	_, err = s.EvalLogits(tokens, []uint32{uint32(len(tokens))}, false)
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArgument {
		t.Fatalf("a position past the tokens: %v", err)
	}
}

func TestGenerationReportsEachTokensLogprobAndItsAlternatives(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Once upon a time")
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var reports []TokenLogprobs
	var ids []int32
	opts := GenerateOptions{MaxTokens: 6, IgnoreEOG: true, TopLogprobs: 3,
		OnLogprobs: func(r TokenLogprobs) bool { reports = append(reports, r); return true }}
	_, err = s.GenerateWith(context.Background(), prompt, Greedy(), opts, func(tok Token) bool {
		if tok.ID >= 0 {
			ids = append(ids, tok.ID)
		}
		return true
	})
	if err != nil || len(reports) != 6 || len(ids) != 6 {
		t.Fatalf("err %v, %d reports, %d tokens", err, len(reports), len(ids))
	}
	// Teacher forcing the same tokens gives the same log-probabilities.
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	rows, err := s.EvalLogits(append(append([]int32{}, prompt...), ids...), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range reports {
		row := rows[len(prompt)-1+k]
		if r.ID != ids[k] || len(r.Top) != 3 || r.Top[0].ID != r.ID {
			t.Fatalf("token %d: %+v (greedy: the most likely first)", k, r)
		}
		if math.Abs(float64(r.Logprob-row[r.ID])) > 1e-4 {
			t.Fatalf("token %d: logprob %v, teacher-forced %v", k, r.Logprob, row[r.ID])
		}
		for j := 1; j < len(r.Top); j++ {
			if r.Top[j].Logprob > r.Top[j-1].Logprob {
				t.Fatalf("token %d: alternatives not sorted: %+v", k, r.Top)
			}
		}
	}
	// Returning false stops the generation cleanly.
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	opts.OnLogprobs = func(TokenLogprobs) bool { return false }
	gen, err := s.GenerateWith(context.Background(), prompt, Greedy(), opts, func(Token) bool { return true })
	if err != nil || gen.StopReason != StopCancelled {
		t.Fatalf("err %v, generation %+v", err, gen)
	}
	opts.TopLogprobs = MaxTopLogprobs + 1
	_, err = s.GenerateWith(context.Background(), prompt, Greedy(), opts, func(Token) bool { return true })
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalidArgument {
		t.Fatalf("too many alternatives: %v", err)
	}
}
