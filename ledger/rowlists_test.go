package ledger

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/stats"
)

// listRow is sampleRow as a session workload's agent-loop row: per-turn, per-session and
// per-step figures, some of them not measured (NaN), one distribution with intervals.
func listRow() Row {
	r := sampleRow("m/agent", 2)
	nan := math.NaN()
	ttft := stats.Dist{N: 6, P50: 0.0100807651, P90: 0.02, P95: 0.021, P99: 0.0225, Mean: 0.0123, Min: 0.004, Max: 0.023, Std: 0.0061,
		CI: &stats.DistCI{Confidence: 0.95, P50: stats.Interval{Lo: 0.009, Hi: 0.012}, P90: stats.Unbounded(12), P95: stats.Unbounded(20),
			P99: stats.Unbounded(100), Mean: stats.Interval{Lo: 0.01, Hi: 0.015}}}
	r.Turns = []stats.TurnSummary{
		{Turn: 1, Requests: 6, Succeeded: 6, TTFT: ttft, E2E: stats.Dist{N: 6, P50: 0.5, P90: 0.7, P95: 0.75, P99: 0.79, Mean: 0.55, Min: 0.3, Max: 0.8, Std: 0.1}, PromptTokensMean: 16},
		{Turn: 2, Requests: 6, Succeeded: 0, TTFT: stats.NewDist(nil), E2E: stats.NewDist(nil), PromptTokensMean: nan},
	}
	r.Sessions = &stats.SessionSummary{Turns: 2, Sessions: 3, Completed: 0, TurnsNotSent: 3,
		TurnsCompleted: stats.NewDist([]float64{1, 1, 1}), Duration: stats.NewDist(nil)}
	r.AgentPerStep = []stats.StepSummary{
		{Step: 1, Requests: 12, Succeeded: 12, TTFT: stats.NewDist([]float64{0.001, 0.003}), PromptTokensMean: 29.5, CachedTokensMean: nan},
		{Step: 2, Requests: 4, Succeeded: 3, TTFT: stats.NewDist(nil), PromptTokensMean: 36.5, CachedTokensMean: 36.5},
	}
	return r
}

// lists is the row's list figures as text, NaN as "NaN" and each pointer's value.
func lists(r Row) string {
	var cis []stats.DistCI
	turns := slices.Clone(r.Turns)
	for i := range turns {
		for _, d := range []*stats.Dist{&turns[i].TTFT, &turns[i].E2E} {
			if d.CI != nil {
				cis, d.CI = append(cis, *d.CI), nil
			}
		}
	}
	s := fmt.Sprintf("%+v %+v %+v", turns, r.AgentPerStep, cis)
	if r.Sessions != nil {
		s += fmt.Sprintf(" %+v", *r.Sessions)
	}
	return s
}

// The list columns write Row.Turns, Row.Sessions and Row.AgentPerStep and read them
// back figure for figure, NaN as NaN and intervals included; empty cells (a row without
// them) read as none, and a cell that is not their JSON is refused with its column.
func TestListColumnsRoundTrip(t *testing.T) {
	for _, in := range []Row{listRow(), sampleRow("plain", 1)} {
		back, err := ParseRecord(in.Record())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := lists(back), lists(in); got != want {
			t.Errorf("%s: read back\n%s\nwrote\n%s", in.CellID, got, want)
		}
	}
	if rec := sampleRow("plain", 1).Record(); rec[columnIndex(t, "session_turns")] != "" || rec[columnIndex(t, "session_sessions")] != "" ||
		rec[columnIndex(t, "agent_per_step")] != "" {
		t.Errorf("a row without list figures wrote %q", rec[len(rec)-3:])
	}
	for _, col := range []string{"session_turns", "session_sessions", "agent_per_step"} {
		for _, cell := range []string{`[{"turn": "one", "step": "one"}]`, `{"turns": 2`, "1.5"} {
			rec := listRow().Record()
			rec[columnIndex(t, col)] = cell
			if _, err := ParseRecord(rec); err == nil || !strings.Contains(err.Error(), col) {
				t.Errorf("%s %q: error %v, want one naming the column", col, cell, err)
			}
		}
	}
}

// A results.csv written before the list columns (a run directory of an earlier planrun)
// still reads: its rows' figures as written, their list figures none.
func TestListColumnsAbsentInEarlierLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResultsFile)
	in := listRow()
	h, rec := Header(), in.Record()
	var oldHeader, oldRec []string
	for i := range h {
		if !slices.Contains([]string{"session_turns", "session_sessions", "agent_per_step"}, h[i]) {
			oldHeader, oldRec = append(oldHeader, h[i]), append(oldRec, rec[i])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write(oldHeader)
	w.Write(oldRec)
	w.Flush()
	f.Close()
	rows, err := ReadLedgerAll(path)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	r := rows[0]
	if r.CellID != in.CellID || r.TTFT.P99 != in.TTFT.P99 || r.Turns != nil || r.Sessions != nil || r.AgentPerStep != nil {
		t.Errorf("read back %s, TTFT p99 %v, lists %s", r.CellID, r.TTFT.P99, lists(r))
	}
}
