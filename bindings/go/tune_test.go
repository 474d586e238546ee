package vkllm

import (
	"context"
	"os"
	"path/filepath"
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

// cachedRuntime is a runtime under the validation layer keeping its pipelines in cache.
func cachedRuntime(t *testing.T, cache string) *Runtime {
	t.Helper()
	opts := DefaultRuntimeOptions()
	opts.Validation = true
	opts.PipelineCachePath = cache
	rt, err := NewRuntimeWith(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func TestTuneKeepsTheWinnersBesideThePipelineCacheAndSessionsGenerateTheSameTokens(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "pipelines.bin")
	rt := cachedRuntime(t, cache)
	m, err := LoadModel(rt, testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
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
		r.ShapesChanged > r.Shapes || r.DefaultUs <= 0 || r.TunedUs <= 0 || !r.FileWritten {
		t.Errorf("%+v", r)
	}
	if fi, err := os.Stat(cache + ".tune"); err != nil || fi.Size() == 0 {
		t.Errorf("tune file: %v", err)
	}
	// Every shape runs its winner, the default variant or not.
	if st, err := rt.Stats(); err != nil || st.TunedShapes != uint64(r.Shapes) || st.ValidationErrors != 0 {
		t.Errorf("after tuning %+v: %v", st, err)
	}
	if after := greedyIDs(t, m); !reflect.DeepEqual(after, before) {
		t.Errorf("greedy tokens after tuning %v, before %v", after, before)
	}

	// A runtime created later with the same cache reads the tune file.
	again := cachedRuntime(t, cache)
	m2, err := LoadModel(again, testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if st, err := again.Stats(); err != nil || st.TunedShapes != uint64(r.Shapes) {
		t.Errorf("a later runtime's tuned shapes %d: %v", st.TunedShapes, err)
	}
	if got := greedyIDs(t, m2); !reflect.DeepEqual(got, before) {
		t.Errorf("greedy tokens on a later runtime %v, before tuning %v", got, before)
	}
	if st, err := again.Stats(); err != nil || st.ValidationErrors != 0 {
		t.Errorf("validation errors %d: %v", st.ValidationErrors, err)
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
