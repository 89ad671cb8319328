package apply

import (
	"math"
	"strings"
	"testing"

	"github.com/planrun/planrun/gpu/serverstats"
	"github.com/planrun/planrun/ledger"
)

// What vLLM's /metrics counted over the window lands in the row, and a note sets its
// own means beside planrun's.
func TestVLLMFiguresIntoRow(t *testing.T) {
	row := ledger.NewRow()
	row.TTFT.Mean, row.TPOT.Mean, row.E2E.Mean = 0.013, 0.0032, 0.11
	s := serverstats.Report{PrefixCacheHits: 384, PrefixCacheQueries: 512, ServerLatency: serverstats.VLLMLatency{
		TTFT: serverstats.Histogram{Sum: 0.12, Count: 10},
		TPOT: serverstats.Histogram{Sum: 0.03, Count: 10},
		E2E:  serverstats.Histogram{Sum: 1.0, Count: 10},
	}}
	notes := vllmFigures(&row, s)
	if row.PrefixCacheHitPct != 75 || math.Abs(row.ServerTTFTMeanS-0.012) > 1e-12 ||
		math.Abs(row.ServerTPOTMeanMs-3) > 1e-9 || math.Abs(row.ServerE2EMeanS-0.1) > 1e-12 {
		t.Errorf("row: prefix hit %v%%, server TTFT %v s, TPOT %v ms, E2E %v s", row.PrefixCacheHitPct, row.ServerTTFTMeanS, row.ServerTPOTMeanMs, row.ServerE2EMeanS)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "TTFT mean 0.0120 s (planrun 0.0130)") || !strings.Contains(notes[0], "TPOT mean 3.00 ms (planrun 3.20)") {
		t.Errorf("notes %q", notes)
	}

	// Not vLLM (or no request finished in the window): the columns stay empty, no note.
	other := ledger.NewRow()
	if notes := vllmFigures(&other, serverstats.Report{}); len(notes) != 0 || !math.IsNaN(other.ServerTTFTMeanS) || !math.IsNaN(other.PrefixCacheHitPct) {
		t.Errorf("no vLLM figures: notes %q, row %v %v", notes, other.ServerTTFTMeanS, other.PrefixCacheHitPct)
	}
}
