package runreport

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// TestStatsToLedgerExact follows scripted samples through stats, a Row, the ledger file
// and back: the figures a user reads in the CSV are the truth of the script.
func TestStatsToLedgerExact(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	req := func(run, at, ttft, end, tokens, chunks int) backends.Sample {
		return backends.Sample{Start: t0.Add(ms(run*10_000 + at)), FirstToken: ms(ttft), End: ms(end),
			OutputTokens: tokens, Chunks: chunks, TokenSource: backends.TokensUsage, PromptTokens: 128}
	}
	// Two runs of two requests in flight. Run 0: window 0 → 1.0 s, 200 tokens → 200 tok/s.
	// Run 1: window 10 → 12 s, 200 tokens → 100 tok/s. Median run throughput: 150.
	runs := []stats.MeasuredRun{
		{Samples: []backends.Sample{req(0, 0, 100, 1000, 101, 101), req(0, 0, 120, 940, 99, 50)}},
		{Samples: []backends.Sample{req(1, 0, 110, 2000, 100, 100), req(1, 500, 130, 1330, 100, 100),
			{Start: t0.Add(ms(10_100)), End: ms(50), Err: &backends.Error{Class: backends.ErrServer, Status: 500}}}},
	}
	r := ledger.NewRow()
	r.CellID, r.Concurrency, r.Status = "c", 2, ledger.StatusOK
	r.SetStats(stats.SummarizeRuns(runs, stats.Target{PromptTokens: 128, MaxTokens: 100}))

	path := filepath.Join(t.TempDir(), "results.csv")
	l, err := ledger.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(r); err != nil {
		t.Fatal(err)
	}
	l.Close()
	rows, err := ledger.ReadLedger(path)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %d err %v", len(rows), err)
	}
	got := rows[0]
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ttft p50", got.TTFT.P50, 0.115}, {"ttft max", got.TTFT.Max, 0.13},
		// TPOTs: 0.9/100, 0.82/98, 1.89/99, 1.2/99 s → p50 = mean of the middle two.
		{"tpot p50", got.TPOT.P50, (0.009 + 1.2/99) / 2},
		{"output tok/s", got.OutputTokS, 150}, {"requests/s", got.RequestsPerSec, 1.5},
		{"tokens/chunk", got.TokensPerChunk, 400.0 / 351}, {"prompt actual", got.PromptTokensActual, 128},
		// Run median TTFTs 0.11 and 0.12 s: m = 0.115, spread 0.005/0.115.
		{"ttft spread", got.TTFTSpread, 0.005 / 0.115},
		// Run throughputs 200 and 100 tok/s: m = 150, spread 50/150, the worst figure.
		{"spread", got.StabilitySpread, 50.0 / 150}, {"output spread", got.OutputSpread, 50.0 / 150},
	} {
		if math.Abs(c.got-c.want) > 1e-6*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got.Requests != 5 || got.Failed != 1 || got.Failures["5xx"] != 1 || got.EarlyStops != 1 || got.Runs != 2 ||
		got.OutputTokens != 400 || got.TokenSource != "usage" || got.Stability != "unstable" ||
		got.StabilityFigure != "throughput" {
		t.Errorf("counts: %+v", got)
	}
}
