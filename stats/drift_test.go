package stats

import (
	"math"
	"testing"

	"github.com/planrun/planrun/backends"
)

func lp(tok string, p float64) backends.LogProb {
	return backends.LogProb{Token: tok, ID: -1, LogProb: math.Log(p)}
}

func TestTopKL(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ref, cell []backends.LogProb
		want      float64
	}{
		{"identical", []backends.LogProb{lp("a", 0.5), lp("b", 0.3)}, []backends.LogProb{lp("b", 0.3), lp("a", 0.5)}, 0},
		// p = (0.5, 0.3, other 0.2), q = (0.4, 0.4, other 0.2):
		// 0.5 ln(0.5/0.4) + 0.3 ln(0.3/0.4) + 0.2 ln 1.
		{"same tokens", []backends.LogProb{lp("a", 0.5), lp("b", 0.3)}, []backends.LogProb{lp("a", 0.4), lp("b", 0.4)}, 0.025267154},
		// Only a is in both lists: p = (0.6, other 0.4), q = (0.5, other 0.5).
		{"one shared token", []backends.LogProb{lp("a", 0.6), lp("b", 0.3)}, []backends.LogProb{lp("a", 0.5), lp("c", 0.4)}, 0.020135514},
		// No shared token: both sides are one "other" bucket; the estimate sees nothing
		// (a lower bound), which same-top-1 shows instead.
		{"nothing shared", []backends.LogProb{lp("a", 0.9)}, []backends.LogProb{lp("b", 0.9)}, 0},
		// The reference keeps all its mass in its list, the cell 0.5 of it on a:
		// 1·ln(1/0.5).
		{"whole mass on one side", []backends.LogProb{lp("a", 1)}, []backends.LogProb{lp("a", 0.5)}, math.Ln2},
		// Two entries with one text (Ollama's "\ufffd" for byte tokens) are one bucket:
		// p = (0.5+0.25, other 0.25), q = (0.25+0.25, other 0.5).
		{"one text twice", []backends.LogProb{lp("\ufffd", 0.5), lp("\ufffd", 0.25)}, []backends.LogProb{lp("\ufffd", 0.25), lp("x", 0.2), lp("\ufffd", 0.25)},
			0.75*math.Log(0.75/0.5) + 0.25*math.Log(0.25/0.5)},
		// The cell has nothing left for the reference's tail: the tail's log is kept finite.
		{"cell without tail", []backends.LogProb{lp("a", 0.5)}, []backends.LogProb{lp("a", 1)}, 0.5*math.Log(0.5) + 0.5*math.Log(0.5/minOther)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TopKL(tc.ref, tc.cell); math.Abs(got-tc.want) > 1e-8 {
				t.Errorf("TopKL = %.9f, want %.9f", got, tc.want)
			}
		})
	}
}

func TestTopKLMatchesByID(t *testing.T) {
	// vLLM names tokens by id: the same id with two spellings is one token.
	ref := []backends.LogProb{{Token: "token_id:7", ID: 7, LogProb: math.Log(0.5)}}
	cell := []backends.LogProb{{Token: "▁x", ID: 7, LogProb: math.Log(0.5)}}
	if got := TopKL(ref, cell); got != 0 {
		t.Errorf("TopKL = %g, want 0", got)
	}
}

func pos(tok string, p float64, top ...backends.LogProb) backends.TokenLogProbs {
	return backends.TokenLogProbs{LogProb: lp(tok, p), Top: top}
}

func TestComparePrompt(t *testing.T) {
	ref := []backends.TokenLogProbs{
		pos("x", 0.9, lp("x", 0.9), lp("y", 0.05)),
		pos("y", 0.6, lp("y", 0.6), lp("q", 0.3)),
		pos("z", 0.8, lp("z", 0.8)),
		pos("w", 0.7, lp("w", 0.7)),
	}
	// Teacher-forced: each position's own token is the reference's, with the cell's
	// log-probability of it; its top-1 differs at positions 2 and 4.
	cell := []backends.TokenLogProbs{
		pos("x", 0.9, lp("x", 0.9), lp("y", 0.05)),
		pos("y", 0.3, lp("q", 0.6), lp("y", 0.3)),
		pos("z", 0.8, lp("z", 0.8)),
		pos("w", 0.2, lp("v", 0.7), lp("w", 0.2)),
	}
	d := ComparePrompt(ref, cell, true)
	// log-probability differences: 0, ln(0.3/0.6), 0, ln(0.2/0.7).
	wantLP := (math.Log(0.5) + math.Log(0.2/0.7)) / 4
	// KL per position: 0; p=(0.6,0.3,.1) q=(0.3,0.6,.1); 0; p=(0.7,.3) q=(0.2,.8).
	wantKL := (0.6*math.Log(2) + 0.3*math.Log(0.5) + 0.7*math.Log(3.5) + 0.3*math.Log(0.3/0.8)) / 4
	if d.Positions != 4 || d.Same != 2 || d.FirstDivergence != 2 ||
		math.Abs(d.LogProbDelta-wantLP) > 1e-12 || math.Abs(d.KL-wantKL) > 1e-12 {
		t.Errorf("got %+v, want 4 positions, 2 same, first divergence 2, KL %g, Δlogp %g", d, wantKL, wantLP)
	}
	// Followed rather than forced: no exact log-likelihood difference.
	if d := ComparePrompt(ref, cell, false); !math.IsNaN(d.LogProbDelta) || d.Same != 2 {
		t.Errorf("unforced: %+v", d)
	}
	// The reference against itself: no drift, no divergence within the path.
	if d := ComparePrompt(ref, ref, true); d.Same != 4 || d.FirstDivergence != 5 || d.KL != 0 || d.LogProbDelta != 0 {
		t.Errorf("self: %+v", d)
	}
	// Where the reference's own top-k (teacher-forced) puts another token first than its
	// path's, the cell is held to that top token: read the same way, the reference
	// against itself agrees.
	tied := []backends.TokenLogProbs{pos("x", 0.40, lp("y", 0.41), lp("x", 0.40))}
	if d := ComparePrompt(tied, tied, true); d.Same != 1 {
		t.Errorf("a near-tie against itself: %+v", d)
	}
	if d := ComparePrompt(tied, []backends.TokenLogProbs{pos("x", 0.45, lp("x", 0.45), lp("y", 0.40))}, true); d.Same != 0 || d.FirstDivergence != 1 {
		t.Errorf("a cell whose top is the path's token but not the reference's top: %+v", d)
	}
	// A cell that stopped early is compared over what it returned.
	if d := ComparePrompt(ref, cell[:1], false); d.Positions != 1 || d.FirstDivergence != 2 {
		t.Errorf("short: %+v", d)
	}
}

func TestSummarizeDrift(t *testing.T) {
	prompts := []PromptDrift{
		{Positions: 4, Same: 4, FirstDivergence: 5, KL: 0, LogProbDelta: math.NaN()},
		{Positions: 4, Same: 2, FirstDivergence: 2, KL: 0.3, LogProbDelta: math.NaN()},
		{Positions: 4, Same: 3, FirstDivergence: 4, KL: 0.15, LogProbDelta: math.NaN()},
		{Positions: 0}, // nothing compared: left out
	}
	d := SummarizeDrift(prompts, 0.95)
	// Rates 100, 50, 75: mean 75, s 25, t(0.975, 2) = 4.302652729911275.
	h := 4.302652729911275 * 25 / math.Sqrt(3)
	if d.Prompts != 3 || d.SameTop1Pct != 75 || math.Abs(d.SameTop1CI.Lo-(75-h)) > 1e-6 || d.SameTop1CI.Hi != 100 {
		t.Errorf("same top-1 %g %+v, want 75 [%g, 100 (clamped)]", d.SameTop1Pct, d.SameTop1CI, 75-h)
	}
	// KL 0, 0.3, 0.15: mean 0.15, s 0.15; the lower end clamps at 0.
	if math.Abs(d.KL-0.15) > 1e-12 || d.KLCI.Lo != 0 || math.Abs(d.KLCI.Hi-(0.15+4.302652729911275*0.15/math.Sqrt(3))) > 1e-6 {
		t.Errorf("KL %g %+v", d.KL, d.KLCI)
	}
	// First divergences 2, 4, 5: median 4; three prompts bound no median at 95%.
	if d.FirstDivergence != 4 || d.FirstDivergenceCI.Bounded() || d.FirstDivergenceCI.Need != 6 {
		t.Errorf("first divergence %g %+v", d.FirstDivergence, d.FirstDivergenceCI)
	}
	if !math.IsNaN(d.LogProbDelta) || d.LogProbDeltaCI.Bounded() {
		t.Errorf("no prompt had a log-likelihood delta, got %g %+v", d.LogProbDelta, d.LogProbDeltaCI)
	}
	if d := SummarizeDrift(nil, 0.95); d.Prompts != 0 || !math.IsNaN(d.SameTop1Pct) || !math.IsNaN(d.FirstDivergence) {
		t.Errorf("no prompts: %+v", d)
	}
}
