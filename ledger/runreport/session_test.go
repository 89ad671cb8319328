package runreport

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
	"github.com/planrun/planrun/ledger/summarytest"
	"github.com/planrun/planrun/stats"
)

// sessionRow is a row of a 2-turn session workload; turn 2 measured no TTFT.
func sessionRow() ledger.Row {
	r := ledgertest.SampleRow("m/chat", 2)
	r.Turns = []stats.TurnSummary{
		{Turn: 1, Requests: 4, Succeeded: 4, TTFT: stats.NewDist([]float64{0.1, 0.3}), E2E: stats.NewDist([]float64{1, 2}), PromptTokensMean: 130},
		{Turn: 2, Requests: 4, Succeeded: 3, TTFT: stats.NewDist(nil), E2E: stats.NewDist([]float64{2}), PromptTokensMean: math.NaN()},
	}
	r.Sessions = &stats.SessionSummary{Turns: 2, Sessions: 4, Completed: 3, TurnsNotSent: 0,
		TurnsCompleted: stats.NewDist([]float64{2, 2, 2, 1}), Duration: stats.NewDist([]float64{4, 5, 6})}
	return r
}

// summary.json carries a session row's per-turn and per-session figures, valid against
// the schema, with null for what was not measured.
func TestSummarySessions(t *testing.T) {
	s := ledger.NewSummary("chat", ledger.Manifest{RunID: "r", Environment: ledger.Environment{Host: "h"}}, []ledger.Row{sessionRow(), ledgertest.SampleRow("m/plain", 1)})
	s.Outcome = ledger.OutcomeComplete
	var buf bytes.Buffer
	if err := ledger.WriteSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	summarytest.Validate(t, ledger.SummarySchema, buf.Bytes())
	for _, want := range []string{`"turns_completed_mean": 1.75`, `"duration_p50_s": 5`, `"prompt_tokens_mean": 130`,
		`"ttft_p50_s": 0.2`, `"prompt_tokens_mean": null`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary.json lacks %s:\n%s", want, buf.String())
		}
	}
	if len(s.Sessions) != 1 || s.Sessions[0].CellID != "m/chat" || len(s.Sessions[0].PerTurn) != 2 {
		t.Errorf("sessions %+v, want the one session row with 2 turns", s.Sessions)
	}
}

// The Markdown and HTML reports show the per-turn and per-session tables of a session
// row, and no such section without one.
func TestSessionTables(t *testing.T) {
	for _, tt := range []struct {
		rows []ledger.Row
		want bool
	}{{[]ledger.Row{sessionRow()}, true}, {[]ledger.Row{ledgertest.SampleRow("m/plain", 1)}, false}} {
		var md, html bytes.Buffer
		if err := WriteMarkdown(&md, Report{Rows: tt.rows}); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&html, Report{Rows: tt.rows}); err != nil {
			t.Fatal(err)
		}
		turn2 := "| m/chat | 2 | 2 | 4 | 3 | — | — | 2.000 | — |"
		for _, got := range []bool{strings.Contains(md.String(), "### Turns"), strings.Contains(md.String(), turn2),
			strings.Contains(md.String(), "| m/chat | 2 | 2 | 4 | 3 | 0 | 1.75 | 5.000 | 5.800 |"),
			strings.Contains(html.String(), "<h4>Turns</h4>") || strings.Contains(html.String(), ">Turns<")} {
			if got != tt.want {
				t.Errorf("rows with sessions %v: tables shown %v\n%s", tt.want, got, md.String())
			}
		}
	}
}
