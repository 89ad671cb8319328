package executor

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/planrun/planrun/backends"
)

// A model mix gives each name its share of the requests, none to a weight of 0, and
// the same sequence for the same seed (every run of a level), another for another seed.
func TestPickModelSharesBySeed(t *testing.T) {
	mix := []WeightedModel{{"a", 1}, {"never", 0}, {"b", 1}, {"c", 2}}
	seq := func(seed uint64) []string {
		out := make([]string, 8000)
		for n := range out {
			out[n] = pickModel(mix, seed, n)
		}
		return out
	}
	one := seq(7)
	counts := map[string]int{}
	for _, m := range one {
		counts[m]++
	}
	for name, want := range map[string]float64{"a": 0.25, "never": 0, "b": 0.25, "c": 0.5} {
		if share := float64(counts[name]) / float64(len(one)); math.Abs(share-want) > 0.02 {
			t.Fatalf("picks %v of %d: want a and b about 25%% each, c 50%%, never none", counts, len(one))
		}
	}
	if !slices.Equal(seq(7), one) {
		t.Fatal("the same seed drew another sequence")
	}
	if slices.Equal(seq(8), one) {
		t.Fatal("another seed drew the same sequence")
	}
}

// reqBackend keeps every request it is sent, by ID.
type reqBackend struct {
	fakeBackend
	mu   sync.Mutex
	reqs map[string]backends.Request
}

func (r *reqBackend) Do(ctx context.Context, req backends.Request) backends.Sample {
	r.mu.Lock()
	r.reqs[req.ID] = req
	r.mu.Unlock()
	return r.fakeBackend.Do(ctx, req)
}

// Each request goes to its model of the mix, and its sample says which; each run sends
// the same sequence. OnRun sees every run, warm-up first, in order.
func TestRunLevelSendsTheMix(t *testing.T) {
	b := &reqBackend{reqs: map[string]backends.Request{}}
	lv := LevelSpec{Concurrency: 4, Requests: 40, WarmupRuns: 1, RepeatRuns: 2, Seed: 11, Prompts: &Prompts{Words: 2},
		Request: backends.Request{Model: "template"}, Models: []WeightedModel{{"a", 1}, {"b", 1}}}
	var runs []RunResult
	res := RunLevel(context.Background(), b, lv, Options{OnRun: func(r RunResult) { runs = append(runs, r) }})
	if len(runs) != 3 || !runs[0].Warmup || runs[1].Warmup || runs[1].Index != 0 || runs[2].Index != 1 {
		t.Fatalf("OnRun saw %d runs: %+v", len(runs), runs)
	}
	var perRun [][]string
	for _, run := range res.Runs {
		models := make([]string, lv.Requests)
		for _, s := range run.Samples {
			req, ok := b.reqs[s.ID]
			if !ok || s.Model != req.Model || (req.Model != "a" && req.Model != "b") {
				t.Fatalf("sample %s records model %q, request sent to %q", s.ID, s.Model, req.Model)
			}
			models[requestIndex(t, s.ID)] = s.Model
		}
		perRun = append(perRun, models)
	}
	if len(perRun) != 2 || !slices.Equal(perRun[0], perRun[1]) || !slices.Contains(perRun[0], "a") || !slices.Contains(perRun[0], "b") {
		t.Fatalf("models per run %v: want both models, the same sequence each run", perRun)
	}
	// Without a mix every request goes to the template's model, and no sample names one.
	lv.Models = nil
	for _, s := range RunLevel(context.Background(), b, lv, Options{}).Runs[0].Samples {
		if s.Model != "" || b.reqs[s.ID].Model != "template" {
			t.Fatalf("without a mix: sample model %q, request sent to %q", s.Model, b.reqs[s.ID].Model)
		}
	}
}

// requestIndex is n of an ID ending in "reqN".
func requestIndex(t *testing.T, id string) int {
	t.Helper()
	var n int
	for _, c := range id[strings.LastIndex(id, "req")+3:] {
		n = n*10 + int(c-'0')
	}
	return n
}

// An embeddings level sends Inputs texts a request, each its own, of the input length.
func TestRunLevelEmbeddingsInputs(t *testing.T) {
	b := &reqBackend{reqs: map[string]backends.Request{}}
	lv := LevelSpec{Concurrency: 2, Requests: 4, RepeatRuns: 1, Inputs: 3, InputTokens: 6,
		Prompts: &Prompts{Words: 50, Fit: Fit{TokensPerWord: 2}}}
	RunLevel(context.Background(), b, lv, Options{})
	seen := map[string]bool{}
	for id, req := range b.reqs {
		if len(req.Inputs) != 3 || req.Prompt != "" {
			t.Fatalf("%s: %d inputs, prompt %q; want 3 inputs, no prompt", id, len(req.Inputs), req.Prompt)
		}
		for _, in := range req.Inputs {
			// 6 tokens at 2 a word: 3 words, after the input's own marker.
			if words := strings.Fields(in); len(words) != 4 || seen[in] {
				t.Fatalf("%s: input %q: want a marker and 3 words, unlike any other input", id, in)
			}
			seen[in] = true
		}
	}
	if len(seen) != 12 {
		t.Fatalf("%d distinct inputs, want 12", len(seen))
	}
}
