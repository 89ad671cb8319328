package quality

// float16 against bfloat16 on a real vLLM (the CPU build, the tiny Hugging Face
// checkpoint, whose weights are bfloat16): the teacher method, and a teacher-forced
// log-likelihood difference that is not zero and equals one recomputed here from the
// servers' raw prompt log-probabilities, read with plain HTTP and encoding/json.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/openai"
	"github.com/planrun/planrun/internal/testkit/vllmtest"
	"github.com/planrun/planrun/stats"
)

// rawLogProbs is each continuation token's log-probability after its prefix, from a
// plain /v1/completions request with prompt_logprobs 0 (the sent token's own only).
func rawLogProbs(t *testing.T, url, model string, prompt, cont []int) []float64 {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": model, "prompt": append(append([]int{}, prompt...), cont...),
		"max_tokens": 1, "temperature": 0, "prompt_logprobs": 0})
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Choices []struct {
			PromptLogProbs []map[string]struct {
				LogProb float64 `json:"logprob"`
			} `json:"prompt_logprobs"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || len(v.Choices) != 1 {
		t.Fatalf("%d: %v %+v", resp.StatusCode, err, v)
	}
	pl := v.Choices[0].PromptLogProbs
	out := make([]float64, len(cont))
	for i, id := range cont {
		e, ok := pl[len(prompt)+i][fmt.Sprint(id)]
		if !ok {
			t.Fatalf("position %d: no log-probability for the token sent (%d) in %v", len(prompt)+i, id, pl[len(prompt)+i])
		}
		out[i] = e.LogProb
	}
	return out
}

func TestRealVLLMFloat16AgainstBFloat16(t *testing.T) {
	vllmtest.Require(t)
	ctx := context.Background()
	cfg := Config{Prompts: Prompts(8, 12, 1), MaxTokens: 16, TopK: 5, Seed: 1, Method: Auto}
	start := func(dtype string) (*vllmtest.Server, backends.Backend) {
		s, err := vllmtest.StartServerWith(t.TempDir(), vllmtest.Options{Dtype: dtype, Eager: true, ReadyTimeout: 15 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		b, err := openai.New(backends.Config{Name: "openai.vllm", URL: s.URL + "/v1", EngineExtensions: true})
		if err != nil {
			t.Fatal(err)
		}
		return s, b
	}

	// The reference: bfloat16, the checkpoint's own dtype.
	s, b := start("")
	ref, err := Gather(ctx, b, s.Model, cfg)
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	if ref.Method != Teacher {
		s.Stop()
		t.Fatalf("method %s (%s), want teacher", ref.Method, ref.Why)
	}
	self, err := Measure(ctx, b, s.Model, ref, cfg)
	var refLP [][]float64
	for _, p := range ref.Paths {
		refLP = append(refLP, rawLogProbs(t, s.URL, s.Model, p.PromptIDs, ids(p.Tokens)))
	}
	s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	floor := stats.SummarizeDrift(self.Prompts, 0.95)
	t.Logf("bfloat16 against a rerun of itself: %.1f%% same top-1, KL %g, Δlogp %g", floor.SameTop1Pct, floor.KL, floor.LogProbDelta)

	s, b = start("float16")
	res, err := Measure(ctx, b, s.Model, ref, cfg)
	var cellLP [][]float64
	for _, p := range ref.Paths {
		cellLP = append(cellLP, rawLogProbs(t, s.URL, s.Model, p.PromptIDs, ids(p.Tokens)))
	}
	s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != len(ref.Paths) {
		t.Errorf("%d requests for %d prompts: teacher forcing is one a prompt", res.Requests, len(ref.Paths))
	}
	d := stats.SummarizeDrift(res.Prompts, 0.95)
	t.Logf("float16 against bfloat16: %.2f%% same top-1 %v, KL %g %v, Δlogp %g %v", d.SameTop1Pct, d.SameTop1CI, d.KL, d.KLCI, d.LogProbDelta, d.LogProbDeltaCI)

	var sum float64
	for i := range ref.Paths {
		var diff float64
		for j := range refLP[i] {
			diff += cellLP[i][j] - refLP[i][j]
		}
		want := diff / float64(len(refLP[i]))
		if got := res.Prompts[i].LogProbDelta; math.Abs(got-want) > 1e-9 {
			t.Errorf("prompt %d: Δlogp %g, recomputed from the raw log-probabilities %g", i, got, want)
		}
		sum += want
	}
	if mean := sum / float64(len(ref.Paths)); mean == 0 || math.Abs(d.LogProbDelta-mean) > 1e-9 {
		t.Errorf("mean Δlogp %g, recomputed %g: want the same, and not zero", d.LogProbDelta, mean)
	}
}

func ids(toks []backends.TokenLogProbs) []int {
	out := make([]int, len(toks))
	for i, t := range toks {
		out[i] = t.ID
	}
	return out
}
