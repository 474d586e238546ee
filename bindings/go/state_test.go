package vkllm

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRestoredStateContinuesWithTheSameLogits(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Once upon a time there was")
	more, _ := m.Tokenize(" a cat")
	never, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer never.Close()
	if _, err := never.Eval(0, prompt); err != nil {
		t.Fatal(err)
	}
	want, _ := never.Eval(0, more)

	saver, _ := NewSession(m, 64)
	defer saver.Close()
	saver.Eval(0, prompt)
	state, err := saver.SaveState(0)
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := saver.Tokens(0); !reflect.DeepEqual(ids, prompt) {
		t.Fatalf("tokens %v, prompt %v", ids, prompt)
	}
	saver.Reset()
	saver.Eval(0, more)
	if err := saver.LoadState(0, state); err != nil {
		t.Fatal(err)
	}
	if got, _ := saver.Eval(0, more); !sameBits(got, want) {
		t.Fatal("logits after a restore differ from a session that never saved")
	}

	path := filepath.Join(t.TempDir(), "seq.state")
	source, _ := NewSession(m, 64)
	defer source.Close()
	source.Eval(0, prompt)
	if err := source.SaveStateFile(0, path); err != nil {
		t.Fatal(err)
	}
	other, _ := NewSessionSequences(m, 64, 2)
	defer other.Close()
	if err := other.LoadStateFile(1, path); err != nil {
		t.Fatal(err)
	}
	if got, _ := other.Eval(1, more); !sameBits(got, want) {
		t.Fatal("logits after a restore from a file into sequence 1 differ")
	}
	if err := other.LoadState(0, state[:len(state)-1]); !errors.Is(err, ErrFormat) {
		t.Fatalf("a truncated state: %v", err)
	}
	if n, _ := other.PositionOf(0); n != 0 {
		t.Fatalf("a refused state moved the sequence to %d", n)
	}
	os.Remove(path)
}

func TestForkedSequencesContinueAsIndependentPrefills(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Once upon a time")
	more, _ := m.Tokenize(" there")
	forked, _ := NewSessionSequences(m, 64, 3)
	defer forked.Close()
	prefilled, _ := NewSessionSequences(m, 64, 3)
	defer prefilled.Close()
	forked.Eval(0, prompt)
	if err := forked.Fork(0, 1, uint32(len(prompt))); err != nil {
		t.Fatal(err)
	}
	if err := forked.Fork(0, 2, 2); err != nil {
		t.Fatal(err)
	}
	prefilled.Eval(1, prompt)
	a, _ := forked.Eval(1, more)
	b, _ := prefilled.Eval(1, more)
	if !sameBits(a, b) {
		t.Fatal("a forked sequence's logits differ from a prefilled one's")
	}
	if n, _ := forked.PositionOf(2); n != 2 {
		t.Fatalf("a fork of 2 positions left %d", n)
	}
	if err := forked.Fork(0, 0, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a fork into itself: %v", err)
	}
}
