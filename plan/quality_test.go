package plan

import (
	"os"
	"path/filepath"
	"testing"
)

// Each cell of a matrix with a quality block gets the block and its reference: the
// same model, tool, hardware and workload at the reference quantization, or the named
// cell; the reference is its own reference. Defaults fill what the block leaves out.
func TestQualityResolves(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(`{"prompt":"2+2=","answer":"4"}`+"\n"), 0o644)
	src := `
backend "ollama" "a" {}
backend "ollama" "b" {}
workload "w" {}
dataset "d" {
  format = "jsonl"
  path   = "qa.jsonl"
}
matrix "q" {
  model        = ["m1", "m2"]
  quantization = ["f16", "q8_0", "q4_K_M"]
  tool         = [backend.ollama.a, backend.ollama.b]
  workload     = [workload.w]
  quality {
    reference    = "f16"
    max_tokens   = 8
    top_logprobs = 3
    dataset      = dataset.d
    accuracy {
      path   = "qa.jsonl"
      scorer = "exact"
    }
  }
}
matrix "other" {
  model    = ["m1"]
  tool     = [backend.ollama.b]
  workload = [workload.w]
  quality {
    reference = "q/m1/q8_0/ollama.b/-/w"
    method    = "follow"
  }
}
`
	p, diags := LoadFiles(dir, map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	cells, diags := p.Cells()
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	want := map[string]string{
		"q/m1/f16/ollama.a/-/w":    "q/m1/f16/ollama.a/-/w",
		"q/m1/q8_0/ollama.a/-/w":   "q/m1/f16/ollama.a/-/w",
		"q/m2/q4_K_M/ollama.b/-/w": "q/m2/f16/ollama.b/-/w",
		"other/m1/-/ollama.b/-/w":  "q/m1/q8_0/ollama.b/-/w",
	}
	seen := 0
	for _, c := range cells {
		if c.Quality == nil {
			t.Errorf("%s: no quality block", c.ID)
			continue
		}
		if ref, ok := want[c.ID]; ok {
			seen++
			if c.QualityReference != ref {
				t.Errorf("%s: reference %s, want %s", c.ID, c.QualityReference, ref)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d cells seen", seen, len(want))
	}
	q := cells[0].Quality
	if q.Prompts != 16 || q.PromptWords != 12 || q.MaxTokens != 8 || q.TopLogProbs != 3 || q.Seed != 1 || q.Method != QualityAuto ||
		q.Dataset == nil || q.Dataset.Name != "d" || q.Accuracy == nil || q.Accuracy.Scorer != "exact" || q.Accuracy.MaxTokens != 32 ||
		q.Accuracy.Path != filepath.Join(dir, "qa.jsonl") {
		t.Errorf("block %+v, accuracy %+v", q, q.Accuracy)
	}
	if m := cells[len(cells)-1].Quality.Method; m != QualityFollow {
		t.Errorf("method %q", m)
	}
}
