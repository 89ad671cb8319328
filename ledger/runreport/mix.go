package runreport

import (
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// mixNote says what the per-model table's figures are (a Markdown line).
const mixNote = "A workload's model mix sends each request to one of its names, drawn by weight from its seed (the same sequence every run). Each name's line is over the measured requests sent to that name, every run pooled, with the same definitions as the row's; the **all (pooled)** line is the row itself, pooled over every name. Share = the name's requests / the row's."

// mixCells is the per-model table of the rows of model mixes: a line per name, then the
// row's pooled line; no body when no row is of a mix.
func mixCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Model", "Weight", "Requests", "Share", "Failed", "Errors", "TTFT p50 (s)", "TTFT p99 (s)",
		"TPOT p50 (ms)", "TPOT p99 (ms)", "E2E p50 (s)", "E2E p99 (s)", "Output tokens"}
	for _, r := range rows {
		if len(r.Models) == 0 {
			continue
		}
		line := func(name, weight string, f ledger.ModelFigures) []string {
			share := "—"
			if r.Requests > 0 {
				share = mdtable.Num(float64(f.Requests)/float64(r.Requests), 100, 1) + "%"
			}
			return []string{r.CellID, concurrency(r), name, weight, strconv.Itoa(f.Requests), share, strconv.Itoa(f.Failed),
				mdtable.Dash(ledger.FormatFailures(f.Failures)), mdtable.Num(f.TTFT.P50, 1, 3), mdtable.Num(f.TTFT.P99, 1, 3),
				mdtable.Num(f.TPOT.P50, 1000, 1), mdtable.Num(f.TPOT.P99, 1000, 1), mdtable.Num(f.E2E.P50, 1, 3), mdtable.Num(f.E2E.P99, 1, 3),
				strconv.Itoa(f.OutputTokens)}
		}
		total := 0.0
		for _, m := range r.Models {
			body = append(body, line(m.Name, ledger.FormatFloat(m.Weight), m))
			total += m.Weight
		}
		pooled := ledger.ModelFigures{Requests: r.Requests, Failed: r.Failed, Failures: r.Failures,
			TTFT: r.TTFT, TPOT: r.TPOT, E2E: r.E2E, OutputTokens: r.OutputTokens}
		body = append(body, line("all (pooled)", ledger.FormatFloat(total), pooled))
	}
	return head, body
}

// mixTable writes the per-model table under its explanation; nothing when no row is
// of a model mix.
func mixTable(b *strings.Builder, rows []ledger.Row) {
	head, body := mixCells(rows)
	noteTable(b, "Models", mixNote, head, body)
}

// mixHTMLTable is the per-model table of one cell's rows; ok is false when they are not
// of a model mix.
func mixHTMLTable(rows []ledger.Row) (t htmlTable, ok bool) {
	t = htmlTable{Title: "Models", Note: inlineMarkdown(mixNote)}
	t.Head, t.Rows = mixCells(rows)
	if len(t.Rows) == 0 {
		return t, false
	}
	// The cell's own section names it: its table starts at the concurrency.
	t.Head = t.Head[1:]
	for i := range t.Rows {
		t.Rows[i] = t.Rows[i][1:]
	}
	return t, true
}
