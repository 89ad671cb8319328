package ledger

import (
	"bytes"
	"maps"
	"math"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger/summarytest"
	"github.com/planrun/planrun/stats"
)

// mixRow is sampleRow as a model mix's row: a name with figures, and a name no request
// went to (no figures: null, never 0).
func mixRow() Row {
	r := sampleRow("gw/mix", 8)
	none := stats.NewDist(nil)
	r.Models = []ModelFigures{
		{Name: "tiny", Weight: 2, Requests: 30, Succeeded: 28, Failed: 2, Failures: map[string]int{"5xx": 1, "timeout": 1},
			TTFT: stats.Dist{P50: 0.111, P99: 0.222, Mean: 0.125}, TPOT: stats.Dist{P50: 0.0033, P99: 0.0044, Mean: 0.0035},
			E2E: stats.Dist{P50: 1.5, P99: 1.75, Mean: 1.6}, OutputTokens: 7168},
		{Name: "tiny-lora-a", Weight: 0.5, TTFT: none, TPOT: none, E2E: none},
	}
	return r
}

// The model_mix column writes Row.Models and reads it back (each figure the JSON keeps,
// null as NaN); the first format's text and an empty cell read as no per-model figures.
func TestModelMixColumnRoundTrips(t *testing.T) {
	in := mixRow()
	back, err := ParseRecord(in.Record())
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Models) != 2 {
		t.Fatalf("read back %d models: %+v", len(back.Models), back.Models)
	}
	a, b := back.Models[0], back.Models[1]
	want := in.Models[0]
	if a.Name != want.Name || a.Weight != 2 || a.Requests != 30 || a.Succeeded != 28 || a.Failed != 2 ||
		FormatFailures(a.Failures) != "5xx=1;timeout=1" || a.OutputTokens != 7168 ||
		a.TTFT.P50 != 0.111 || a.TTFT.P99 != 0.222 || a.TTFT.Mean != 0.125 || a.TPOT.P50 != 0.0033 ||
		a.TPOT.P99 != 0.0044 || a.E2E.P50 != 1.5 || a.E2E.P99 != 1.75 || !math.IsNaN(a.TTFT.P90) {
		t.Errorf("read back %+v, wrote %+v", a, want)
	}
	if b.Name != "tiny-lora-a" || b.Weight != 0.5 || b.Requests != 0 || !math.IsNaN(b.TTFT.P50) || !math.IsNaN(b.E2E.Mean) {
		t.Errorf("a name without requests read back as %+v", b)
	}
	for _, cell := range []string{"", "tiny-a: 404 requests (50.5%), 0 failed, ttft p50 0.0012s"} {
		rec := in.Record()
		rec[columnIndex(t, "model_mix")] = cell
		r, err := ParseRecord(rec)
		if err != nil || r.Models != nil {
			t.Errorf("model_mix %q: models %+v, error %v", cell, r.Models, err)
		}
	}
	rec := in.Record()
	rec[columnIndex(t, "model_mix")] = `[{"model": 3}]`
	if _, err := ParseRecord(rec); err == nil {
		t.Errorf("a model_mix that is a JSON array of the wrong shape was read without error")
	}
}

func columnIndex(t *testing.T, name string) int {
	t.Helper()
	for i, h := range Header() {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %s", name)
	return -1
}

// summary.json gives a mix row's per-model figures in its models section, valid by the
// schema; a row without a mix adds none.
func TestSummaryModels(t *testing.T) {
	s := NewSummary("gw", Manifest{RunID: "r"}, []Row{mixRow(), sampleRow("plain", 1)})
	var buf bytes.Buffer
	if err := WriteSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	summarytest.Validate(t, SummarySchema, buf.Bytes())
	back, err := ReadSummary(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Models) != 1 || back.Models[0].CellID != "gw/mix" || back.Models[0].Concurrency != 8 || len(back.Models[0].Models) != 2 {
		t.Fatalf("models section %+v", back.Models)
	}
	m, n := back.Models[0].Models[0], back.Models[0].Models[1]
	if m.Model != "tiny" || *m.TTFTP50 != "0.111" || *m.TPOTP99 != "4.4" || m.Failures["timeout"] != 1 || n.TTFTP50 != nil {
		t.Errorf("models %+v %+v", m, n)
	}
}

// NewModelFigures copies a name's figures and its failures by class (nil without any).
func TestNewModelFigures(t *testing.T) {
	s := stats.Summary{Requests: 5, Succeeded: 4, Failed: 1, OutputTokens: 96,
		Failures: map[backends.ErrorClass]int{backends.ErrTimeout: 1},
		TTFT:     stats.Dist{P50: 0.2}, TPOT: stats.Dist{P50: 0.01}, E2E: stats.Dist{P50: 1.1}}
	f := NewModelFigures("tiny", 2, s)
	if f.Name != "tiny" || f.Weight != 2 || f.Requests != 5 || f.Succeeded != 4 || f.Failed != 1 || f.OutputTokens != 96 ||
		f.TTFT.P50 != 0.2 || f.TPOT.P50 != 0.01 || f.E2E.P50 != 1.1 {
		t.Errorf("NewModelFigures = %+v", f)
	}
	if want := map[string]int{string(backends.ErrTimeout): 1}; !maps.Equal(f.Failures, want) {
		t.Errorf("Failures = %v, want %v", f.Failures, want)
	}
	if f := NewModelFigures("idle", 1, stats.Summary{}); f.Failures != nil {
		t.Errorf("Failures of a name without failures = %v, want nil", f.Failures)
	}
}
