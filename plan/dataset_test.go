package plan

import (
	"path/filepath"
	"testing"

	"github.com/planrun/planrun/load/dataset"
)

// The example's dataset block and length functions decode into what the executor reads.
func TestDatasetsAndLengths(t *testing.T) {
	p, diags := Load("../examples/datasets.hcl", LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	w := p.Workloads[0]
	if w.Dataset == nil || w.Dataset.Name != "questions" {
		t.Fatalf("workload dataset = %+v", w.Dataset)
	}
	abs, _ := filepath.Abs("../examples/data/prompts.jsonl")
	want := dataset.Spec{Path: abs, Format: "jsonl", PromptField: "prompt", OutputTokensField: "output_tokens", TextWords: 100, MinPromptWords: 4}
	if got := w.Dataset.Spec; got != want {
		t.Errorf("spec = %+v, want %+v", got, want)
	}
	if w.PromptLength.Kind != dataset.LengthDataset {
		t.Errorf("prompt length = %v, want dataset", w.PromptLength)
	}
	if o := w.OutputLength; o != (dataset.Length{Kind: "normal", Mean: 64, StdDev: 16, Min: 16, Max: 128}) || w.MaxTokens != 64 {
		t.Errorf("output length = %+v, max_tokens %d", o, w.MaxTokens)
	}
	if !w.Stream {
		t.Error("stream defaults to true")
	}
}

func TestLengthForms(t *testing.T) {
	for src, want := range map[string]dataset.Length{
		"prompt_tokens = 50":                        dataset.Fixed(50),
		"prompt_tokens = uniform(10, 30)":           {Kind: "uniform", Min: 10, Max: 30},
		"prompt_tokens = lognormal(4, 0.5, 1, 900)": {Kind: "lognormal", Mu: 4, Sigma: 0.5, Min: 1, Max: 900},
	} {
		p, diags := LoadFiles(t.TempDir(), map[string][]byte{"w.hcl": []byte("workload \"w\" {\n" + src + "\nstream = false\n}\n")}, LoadOptions{Getenv: noEnv})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", src, renderDiags(p, diags))
		}
		if w := p.Workloads[0]; w.PromptLength != want || w.PromptTokens != want.Typical() || w.Stream {
			t.Errorf("%s: length %+v (typical %d), stream %v; want %+v", src, w.PromptLength, w.PromptTokens, w.Stream, want)
		}
	}
}
