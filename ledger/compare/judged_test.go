package compare

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
)

// Two rows with a run id are one measurement only when run, cell, level and start all
// agree; rows without one only when their records are identical.
func TestSameMeasurementNeedsEveryPartOfTheLevel(t *testing.T) {
	base := ledgertest.SampleRow("c1", 4)
	base.RunID = "run-1"
	same := base
	same.Notes = "a later note does not make it another measurement"
	if !SameMeasurement(&base, &same) {
		t.Error("the same run, cell, level and start: not one measurement")
	}
	for name, change := range map[string]func(r *ledger.Row){
		"run":          func(r *ledger.Row) { r.RunID = "run-2" },
		"no run id":    func(r *ledger.Row) { r.RunID = "" },
		"cell":         func(r *ledger.Row) { r.CellID = "c2" },
		"concurrency":  func(r *ledger.Row) { r.Concurrency = 8 },
		"request rate": func(r *ledger.Row) { r.RequestRate = 2 },
		"start":        func(r *ledger.Row) { r.Started = r.Started.Add(time.Second) },
	} {
		other := base
		change(&other)
		if SameMeasurement(&base, &other) || SameMeasurement(&other, &base) {
			t.Errorf("rows differing in %s: one measurement", name)
		}
	}
	a, b := ledgertest.SampleRow("c1", 4), ledgertest.SampleRow("c1", 4)
	if !SameMeasurement(&a, &b) {
		t.Error("identical rows without a run id: not one measurement")
	}
	b.TTFT.P50 = 0.9
	if SameMeasurement(&a, &b) {
		t.Error("rows without a run id whose TTFT differs: one measurement")
	}
}

// judgeDeltas are the rows TestJudgeCountsRowsFiguresAndNotes judges: A and B pairs with
// 40, 60, 19 and 20 successful requests a side (the smaller side counts), a row on each
// side only, and a pair that is one measurement.
func judgeDeltas() []Delta {
	var a, b []ledger.Row
	for _, c := range []struct{ conc, na, nb int }{{1, 40, 40}, {2, 60, 200}, {3, 30, 19}, {4, 20, 20}} {
		ra, rb := toolRow("ollama.local", c.conc, 1, 0.03, 30, 4), toolRow("openai.vllm", c.conc, 1, 0.03, 30, 4)
		ra.Succeeded, rb.Succeeded = c.na, c.nb
		if c.conc == 2 {
			ra.TTFT.P90 = math.NaN() // A did not measure the figure the p99 is judged on
		}
		a, b = append(a, ra), append(b, rb)
	}
	a = append(a, toolRow("ollama.local", 5, 1, 0.03, 30, 4))
	b = append(b, toolRow("openai.vllm", 6, 1, 0.03, 30, 4))
	self := toolRow("ollama.local", 7, 1, 0.03, 30, 4)
	self.RunID = "run-7"
	return Compare(append(a, self), append(b, self))
}

// Judge counts the pairs that are two measurements, the one-measurement pairs (and their
// run), the row × threshold figures A measured, and notes each lower percentile a
// threshold was judged on (with the fewest requests among its rows) and the rows too
// small to conclude.
func TestJudgeCountsRowsFiguresAndNotes(t *testing.T) {
	ts := thresholds(t, "ttft_p99_s>+10%", "output_tok_s<-5%")
	j := Judge(judgeDeltas(), ts)
	// Rows: c1–c4. Figures: c1 p90 and throughput, c2 throughput only (A's p90 is NaN),
	// c3 p99 (19 requests resolve no lower percentile) and throughput, c4 p50 and
	// throughput: 7. The p99 is judged on the p90 in c1 (40) and c2 (60), on the p50 in c4
	// (20: the p90 needs 36); c3 (19) is too few.
	want := Judged{Rows: 4, Same: 1, SameRun: "run-7", Figures: 7, Notes: []string{
		"ttft_p99_s judged on ttft_p50_s in 1 row: 20 requests cannot resolve p99 (it needs 368)",
		"ttft_p99_s judged on ttft_p90_s in 2 rows: 40 requests cannot resolve p99 (it needs 368)",
		"1 row with fewer than 20 successful requests a side: too few to conclude (-strict fails their crossings)",
	}}
	if j.Rows != want.Rows || j.Same != want.Same || j.SameRun != want.SameRun || j.Figures != want.Figures ||
		!slices.Equal(j.Notes, want.Notes) {
		t.Errorf("judged\n%#v\nwant\n%#v", j, want)
	}
	// Without thresholds nothing is judged and nothing is too few to conclude on.
	if j := Judge(judgeDeltas(), nil); j.Rows != 4 || j.Figures != 0 || j.Notes != nil {
		t.Errorf("judged without thresholds %#v", j)
	}
	// Rows that resolve what they are judged on need no note.
	if j := Judge(judgeDeltas()[:1], ts[1:]); j.Rows != 1 || j.Figures != 1 || j.Notes != nil {
		t.Errorf("judged on c1's throughput %#v", j)
	}
}

// percentileOf names a percentile figure's percentile, and leaves any other name as is.
func TestPercentileOf(t *testing.T) {
	for in, want := range map[string]string{"ttft_p99_s": "p99", "itl_p50_ms": "p50", "output_tok_s": "output_tok_s"} {
		if got := percentileOf(in); got != want {
			t.Errorf("percentileOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// plural counts a noun, in the singular for exactly one.
func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 rows", 1: "1 row", 2: "2 rows", 12: "12 rows"} {
		if got := plural(n, "row"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// Mismatch names each part of the key the two sides differ on, with each side's values
// (sorted, once each); the tool only when rows pair within their tool.
func TestMismatchNamesDifferingKeyParts(t *testing.T) {
	row := func(tool, model string, conc int) ledger.Row {
		r := toolRow(tool, conc, 1, 0.03, 30, 4)
		r.Model = model
		return r
	}
	a := []ledger.Row{row("ollama.local", "x", 4), row("ollama.local", "x", 1), row("ollama.local", "x", 4)}
	b := []ledger.Row{row("openai.vllm", "y", 1), row("openai.vllm", "y", 4)}
	if got, want := Mismatch(a, b, false), "A has model=x, B has model=y"; got != want {
		t.Errorf("Mismatch = %q, want %q", got, want)
	}
	b = []ledger.Row{row("openai.vllm", "x", 2)}
	if got, want := Mismatch(a, b, true), "A has concurrency=1,4, B has concurrency=2; A has tool=ollama.local, B has tool=openai.vllm"; got != want {
		t.Errorf("Mismatch by tool = %q, want %q", got, want)
	}
	// Each part takes the same values on both sides; only their combinations differ.
	a = []ledger.Row{row("ollama.local", "x", 1), row("ollama.local", "y", 4)}
	b = []ledger.Row{row("ollama.local", "x", 4), row("ollama.local", "y", 1)}
	if got, want := Mismatch(a, b, true), "the two sides' rows differ in how their keys combine"; got != want {
		t.Errorf("Mismatch = %q, want %q", got, want)
	}
}
