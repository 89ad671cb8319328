package qualityphase

import (
	"math"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/quality"
)

// A reference kept in the run directory reads back whole, with its floor, for a run
// resumed after its reference cell was complete; an unmeasured floor stays unmeasured.
func TestReferenceKeptForResume(t *testing.T) {
	dir := t.TempDir()
	a := New(nil, dir, t.Logf, t.Logf)
	ref := &quality.Reference{Method: quality.Follow, Requests: 3, Paths: []quality.Path{{Prompt: "the cat", PromptTokens: 3,
		Tokens: []backends.TokenLogProbs{{LogProb: backends.LogProb{Token: " sat", ID: -1, LogProb: -0.5},
			Top: []backends.LogProb{{Token: " sat", ID: -1, LogProb: -0.5}, {Token: " ran", ID: -1, LogProb: -1.25}}}}}}}
	lq := ledger.NewQuality()
	lq.FloorSameTop1Pct = 93.75
	a.saveReference("m/f16", ref, lq)

	b := New(nil, dir, t.Logf, t.Logf)
	got := b.loadReference("m/f16")
	if got == nil || got.Method != quality.Follow || len(got.Paths) != 1 || got.Paths[0].Tokens[0].Top[1].LogProb != -1.25 ||
		got.Paths[0].PromptTokens != 3 {
		t.Fatalf("read back %+v", got)
	}
	f := b.Of("m/f16")
	if f == nil || f.FloorSameTop1Pct != 93.75 || !math.IsNaN(f.FloorKLMean) {
		t.Errorf("floor read back %+v", f)
	}
	if b.loadReference("m/q8") != nil {
		t.Error("a reference never kept read back")
	}
}
