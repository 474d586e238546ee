package vkllm

import (
	"context"
	"reflect"
	"testing"
)

// greedyIDs generates 16 greedy tokens after "Hello world" in a new session.
func greedyIDs(t *testing.T, m *Model) []int32 {
	t.Helper()
	prompt, err := m.Tokenize("Hello world")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []int32
	if _, err := s.GenerateWith(context.Background(), prompt, Greedy(),
		GenerateOptions{MaxTokens: 16, IgnoreEOG: true}, func(tok Token) bool {
			ids = append(ids, tok.ID)
			return true
		}); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestTuneTimesEveryShapeAndSessionsAfterItGenerateTheSameTokens(t *testing.T) {
	rt, m := load(t)
	if st, err := rt.Stats(); err != nil || st.TunedShapes != 0 {
		t.Fatalf("tuned shapes before tuning %d: %v", st.TunedShapes, err)
	}
	before := greedyIDs(t, m)
	r, err := rt.Tune(m)
	if err != nil {
		t.Fatal(err)
	}
	// Times are noisy: only that both were measured.
	if r.Shapes == 0 || r.CandidatesTimed < r.Shapes || r.CandidatesRejected != 0 ||
		r.ShapesChanged > r.Shapes || r.DefaultUs <= 0 || r.TunedUs <= 0 {
		t.Errorf("%+v", r)
	}
	// No pipeline cache, no tune file; the winners are in use all the same.
	if r.FileWritten {
		t.Errorf("a tune file without a pipeline cache: %+v", r)
	}
	if st, err := rt.Stats(); err != nil || st.TunedShapes == 0 {
		t.Errorf("tuned shapes after tuning %d: %v", st.TunedShapes, err)
	}
	if after := greedyIDs(t, m); !reflect.DeepEqual(after, before) {
		t.Errorf("greedy tokens after tuning %v, before %v", after, before)
	}
}

func TestTuneRefusesNoModelAClosedOneAndAnotherRuntimes(t *testing.T) {
	rt, _ := load(t)
	_, foreign := load(t)
	closed, err := LoadModel(rt, testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	for _, bad := range []*Model{nil, closed, foreign} {
		_, err := rt.Tune(bad)
		mustStatus(t, err, ErrInvalidArgument)
	}
	if st, err := rt.Stats(); err != nil || st.TunedShapes != 0 {
		t.Errorf("tuned shapes after refusals %d: %v", st.TunedShapes, err)
	}
}
