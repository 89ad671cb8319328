package compare

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/stats"
)

func TestChangeInterval(t *testing.T) {
	// B − A: 20 ± the two half-widths in quadrature, √(10² + 10²).
	lo, hi := ChangeInterval(100, 120, stats.Interval{Lo: 90, Hi: 110}, stats.Interval{Lo: 110, Hi: 130}, false)
	if math.Abs(lo-(20-math.Sqrt2*10)) > 1e-9 || math.Abs(hi-(20+math.Sqrt2*10)) > 1e-9 {
		t.Errorf("B − A interval [%v, %v], want 20 ∓ 14.14", lo, hi)
	}
	// Δ% on the log scale: B exact at twice A, A known to ±0 gives exactly +100%.
	lo, hi = ChangeInterval(1, 2, stats.Interval{Lo: 1, Hi: 1}, stats.Interval{Lo: 2, Hi: 2}, true)
	if math.Abs(lo-100) > 1e-9 || math.Abs(hi-100) > 1e-9 {
		t.Errorf("Δ%% of exact values [%v, %v], want [100, 100]", lo, hi)
	}
	// A ratio's interval never goes below −100%, however wide.
	lo, _ = ChangeInterval(1, 0.5, stats.Interval{Lo: 0.5, Hi: 3}, stats.Interval{Lo: 0.01, Hi: 1}, true)
	if lo <= -100 {
		t.Errorf("Δ%% low end %v at or below −100%%", lo)
	}
	// An end a side cannot bound leaves the change's far end unbounded, the near one not:
	// a ratio's floor is −100%.
	lo, hi = ChangeInterval(1, 1.5, stats.Interval{Lo: 0.9, Hi: 1.1}, stats.Unbounded(368), true)
	if lo != -100 || !math.IsInf(hi, 1) {
		t.Errorf("B unbounded both ways: [%v, %v], want [−100%%, +∞)", lo, hi)
	}
	lo, hi = ChangeInterval(1, 1.5, stats.Interval{Lo: 0.9, Hi: 1.1}, stats.Interval{Lo: 1.4, Hi: math.NaN()}, true)
	if math.IsInf(lo, 0) || !math.IsInf(hi, 1) || lo < 20 {
		t.Errorf("B bounded below only: [%v, %v], want a finite low end above +20%% and no high end", lo, hi)
	}
}

// intervalRow is a row whose TTFT p50 is v with the interval [v·(1−hw), v·(1+hw)] at 95%.
func intervalRow(v, hw float64, succeeded int) ledger.Row {
	r := ledgertest.SampleRow("c", 1)
	r.Succeeded = succeeded
	r.TTFT.P50 = v
	u := stats.Unbounded(368)
	r.TTFT.CI = &stats.DistCI{Confidence: 0.95, P50: stats.Interval{Lo: v * (1 - hw), Hi: v * (1 + hw)}, P90: u, P95: u, P99: u, Mean: u}
	r.CI.Confidence = 0.95
	return r
}

// The three answers: a change whose interval lies within the limit passes, one beyond
// it fails, one across it is indeterminate and says how many requests would resolve it,
// whether or not its point crosses.
func TestGateThreeAnswers(t *testing.T) {
	ts := thresholds(t, "ttft_p50_s>+5%")
	gate := func(b float64, hw float64) []Breach {
		return Gate(Compare([]ledger.Row{intervalRow(1, 0.01, 500)}, []ledger.Row{intervalRow(b, hw, 500)}), ts)
	}
	if got := gate(1.01, 0.01); len(got) != 0 {
		t.Errorf("+1%% ±1.4%% against >+5%%: %v, want a pass", got)
	}
	got := gate(1.10, 0.01)
	if len(got) != 1 || got[0].Verdict != Fail || got[0].Inconclusive || len(Failing(got, false)) != 1 ||
		!strings.Contains(got[0].String(), "95% interval +8.") || !strings.Contains(got[0].String(), "crossed ttft_p50_s>+5%") {
		t.Errorf("+10%% against >+5%%: %v, want a fail", got)
	}
	for _, b := range []float64{1.06, 1.04} { // the point crosses; the point does not cross
		got := gate(b, 0.03)
		if len(got) != 1 || got[0].Verdict != Indeterminate || !got[0].Inconclusive || len(Failing(got, false)) != 0 ||
			len(Failing(got, true)) != 1 || got[0].Need <= 500 || got[0].NeedUnit != "requests" {
			t.Fatalf("B at %v ±3%% against >+5%%: %+v, want indeterminate, needing more than 500 requests", b, got)
		}
		if s := got[0].String(); !strings.Contains(s, "straddles ttft_p50_s>+5%: indeterminate; about ") ||
			!strings.Contains(s, fmt.Sprintf("about %d requests a side would resolve it (the rows have 500)", got[0].Need)) {
			t.Errorf("message %q", s)
		}
	}
	// A p99 no side bounds is judged on the highest percentile both do.
	a, b := intervalRow(1, 0.01, 100), intervalRow(1.2, 0.01, 100)
	b.TTFT.P99, a.TTFT.P99 = 2, 1
	got = Gate(Compare([]ledger.Row{a}, []ledger.Row{b}), thresholds(t, "ttft_p99_s>+10%"))
	if len(got) != 1 || got[0].JudgedOn != "ttft_p50_s" || got[0].Verdict != Fail {
		t.Errorf("p99 from 100 requests: %+v, want a fail judged on the p50", got)
	}
	// A rate from one run a side: no interval, indeterminate, and it takes runs.
	ra, rb := intervalRow(1, 0.01, 500), intervalRow(1, 0.01, 500)
	ra.OutputTokS, rb.OutputTokS, ra.Runs, rb.Runs = 100, 80, 1, 1
	ra.CI.OutputTokS, rb.CI.OutputTokS = stats.Unbounded(6), stats.Unbounded(6)
	got = Gate(Compare([]ledger.Row{ra}, []ledger.Row{rb}), thresholds(t, "output_tok_s<-5%"))
	if len(got) != 1 || got[0].Verdict != Indeterminate || got[0].NeedUnit != "runs" || got[0].Need != 6 {
		t.Errorf("tok/s from one run a side: %+v, want indeterminate, needing 6 runs", got)
	}
}

// The known server's seeded runs, measured as apply measures them: TTFT uniform on
// [ttft − 50 ms, ttft + 50 ms], 16 tokens 60 ms ± 50 ms apart.
func measuredRow(t testing.TB, ttft time.Duration, requests int, seed uint64) ledger.Row {
	t.Helper()
	const tokens = 16
	cfg := mockserver.Config{TTFT: ttft, TPOT: 60 * time.Millisecond, Jitter: 50 * time.Millisecond, Seed: seed}
	samples := make([]backends.Sample, requests)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := range samples {
		at := cfg.Schedule(uint64(n), tokens)
		samples[n] = backends.Sample{Start: t0.Add(time.Duration(n) * time.Millisecond), FirstToken: at[0], End: at[tokens-1],
			ChunkArrivals: at, Chunks: tokens, OutputTokens: tokens, TokenSource: backends.TokensUsage}
	}
	r := ledgertest.SampleRow("c", 1)
	r.RunID = fmt.Sprintf("run-%d", seed)
	r.SetStats(stats.SummarizeRuns([]stats.MeasuredRun{{Samples: samples}}, stats.Target{MaxTokens: tokens}))
	return r
}

// abGate is the gate of the A/A and A/B proofs: a team's thresholds on the median TTFT
// and TPOT (2%) and the tail (10%, the documented example).
var abGate = []string{"ttft_p50_s>+2%", "tpot_p50_ms>+2%", "ttft_p99_s>+10%"}

// A/A: 50 unchanged reruns, each against the same baseline run, never fail the gate.
func TestGateUnchangedRerunsNeverFail(t *testing.T) {
	ts := thresholds(t, abGate...)
	base := []ledger.Row{measuredRow(t, 200*time.Millisecond, 400, 1)}
	fails, indeterminate := 0, 0
	for i := range 50 {
		bs := Gate(Compare(base, []ledger.Row{measuredRow(t, 200*time.Millisecond, 400, uint64(100+i))}), ts)
		fails += len(Failing(bs, false))
		indeterminate += len(bs) - len(Failing(bs, false))
		for _, b := range Failing(bs, false) {
			t.Errorf("rerun %d failed: %s", i, b)
		}
	}
	t.Logf("A/A: 50 reruns of 400 requests × %d thresholds: %d fail, %d indeterminate, the rest pass", len(ts), fails, indeterminate)
}

// A/B: a 5% TTFT slowdown planted in the server fails the gate in at least 95% of 50
// trials, each with as many requests as a first pair of runs made the gate say it needs.
func TestGateCatchesAPlantedSlowdown(t *testing.T) {
	ts := thresholds(t, "ttft_p50_s>+2%")
	const pilot = 200
	bs := Gate(Compare([]ledger.Row{measuredRow(t, 200*time.Millisecond, pilot, 1)},
		[]ledger.Row{measuredRow(t, 210*time.Millisecond, pilot, 2)}), ts)
	need := pilot
	if len(bs) == 1 && bs[0].Verdict == Indeterminate {
		need = bs[0].Need
		t.Logf("pilot of %d requests a side: %s", pilot, bs[0])
	} else if len(bs) != 1 || bs[0].Verdict != Fail {
		t.Fatalf("pilot: %v, want fail or indeterminate", bs)
	}
	fails := 0
	for i := range 50 {
		a := measuredRow(t, 200*time.Millisecond, need, uint64(1000+2*i))
		b := measuredRow(t, 210*time.Millisecond, need, uint64(1001+2*i))
		if len(Failing(Gate(Compare([]ledger.Row{a}, []ledger.Row{b}), ts), false)) == 1 {
			fails++
		}
	}
	t.Logf("A/B: +5%% TTFT against ttft_p50_s>+2%% with %d requests a side: %d of 50 trials fail", need, fails)
	if fails < 48 {
		t.Errorf("a planted 5%% slowdown failed %d of 50 trials at the %d requests the gate asked for, want at least 48 (95%%)", fails, need)
	}
}
