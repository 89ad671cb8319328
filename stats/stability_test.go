package stats

import (
	"math"
	"testing"

	"github.com/planrun/planrun/backends"
)

func TestWorst(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name       string
		figs       []FigureSpread
		want       Stability
		wantSpread float64
		wantFigure string
	}{
		{"none judged", []FigureSpread{{FigureTTFT, nan, SingleRun}, {FigureTPOT, nan, SingleRun}}, SingleRun, nan, ""},
		{"all stable: the largest spread", []FigureSpread{{FigureTTFT, 0.02, Stable}, {FigureTPOT, 0.05, Stable},
			{FigureThroughput, 0.01, Stable}}, Stable, 0.05, FigureTPOT},
		{"TTFT stable, TPOT unstable", []FigureSpread{{FigureTTFT, 0.014, Stable}, {FigureTPOT, 0.6, Unstable},
			{FigureThroughput, 0.2, Noisy}}, Unstable, 0.6, FigureTPOT},
		{"noisy throughput over a single-run TPOT", []FigureSpread{{FigureTTFT, 0.03, Stable}, {FigureTPOT, nan, SingleRun},
			{FigureThroughput, 0.15, Noisy}}, Noisy, 0.15, FigureThroughput},
		{"the first figure on a tie", []FigureSpread{{FigureTTFT, 0.4, Unstable}, {FigureTPOT, 0.4, Unstable}}, Unstable, 0.4, FigureTTFT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, sp, fig := Worst(tt.figs)
			if st != tt.want || fig != tt.wantFigure || !(near(sp, tt.wantSpread) || math.IsNaN(sp) && math.IsNaN(tt.wantSpread)) {
				t.Errorf("Worst = %q %v %q, want %q %v %q", st, sp, fig, tt.want, tt.wantSpread, tt.wantFigure)
			}
		})
	}
}

// The case: two runs with the same TTFT whose TPOT differs 4x are not stable,
// and the verdict names TPOT; each figure keeps its own spread.
func TestSummarizeRunsJudgesEveryHeadlineFigure(t *testing.T) {
	// One request per run: first content at 100 ms, then 9 more tokens at tpot ms each.
	run := func(tpot int) MeasuredRun {
		arr := []int{100}
		for i := 1; i < 10; i++ {
			arr = append(arr, 100+i*tpot)
		}
		s := ok(0, 10, backends.TokensUsage, arr...)
		return MeasuredRun{Samples: []backends.Sample{s}, Window: Window{Start: t0, End: t0.Add(ms(arr[len(arr)-1]))}}
	}
	tests := []struct {
		name       string
		tpots      []int
		want       Stability
		wantFigure string
	}{
		{"same TPOT", []int{50, 50}, Stable, FigureThroughput},
		{"TPOT 4x", []int{50, 200}, Unstable, FigureTPOT},
		{"TPOT +20%", []int{50, 50, 60}, Noisy, FigureTPOT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs []MeasuredRun
			for _, p := range tt.tpots {
				runs = append(runs, run(p))
			}
			r := SummarizeRuns(runs, Target{MaxTokens: 10})
			if r.Stability != tt.want {
				t.Fatalf("stability %q (%q ±%v), want %q; spreads %+v", r.Stability, r.StabilityFigure, r.Spread, tt.want, r.Spreads)
			}
			if tt.want != Stable && r.StabilityFigure != tt.wantFigure {
				t.Errorf("figure %q, want %q", r.StabilityFigure, tt.wantFigure)
			}
			if len(r.Spreads) != 3 || r.Spreads[0].Figure != FigureTTFT || r.Spreads[0].Stability != Stable || r.Spreads[0].Spread != 0 {
				t.Errorf("TTFT spread %+v, want stable 0: every run's TTFT is 100 ms", r.Spreads)
			}
			// TPOT's spread by hand: max |tpotᵢ − m| / m over the runs' TPOTs.
			m := median(floats(tt.tpots))
			var want float64
			for _, p := range tt.tpots {
				want = math.Max(want, math.Abs(float64(p)-m)/m)
			}
			if !near(r.Spreads[1].Spread, want) {
				t.Errorf("TPOT spread %v, want %v", r.Spreads[1].Spread, want)
			}
		})
	}
}

func floats(vs []int) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = float64(v)
	}
	return out
}
