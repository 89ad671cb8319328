package runreport

import (
	"strings"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// figureTable is a table both reports show under its title and note (a Markdown line)
// where some row has its figures: cells returns no body when none has.
type figureTable struct {
	title, note string
	cells       func([]ledger.Row) (head []string, body [][]string)
}

// figureTables are the tables of the agent loops' tasks and steps, the tool calls, the
// prefix cache and the energy, in the order both reports show them.
var figureTables = []figureTable{
	{"Agent loops", agentLoopNote, agentTaskCells},
	{"Agent loop steps", agentStepNote, agentStepCells},
	{"Tool calls", toolCallNote, toolCallCells},
	{"Prefix cache", prefixCacheNote, prefixCacheCells},
	{"Energy", energyNote, energyCells},
}

// writeFigureTables writes each of figureTables that has a row, under its heading and
// note.
func writeFigureTables(b *strings.Builder, rows []ledger.Row) {
	for _, t := range figureTables {
		head, body := t.cells(rows)
		noteTable(b, t.title, t.note, head, body)
	}
}

// figureHTMLTables are the figureTables of one cell's rows that have a row.
func figureHTMLTables(rows []ledger.Row) []htmlTable {
	var out []htmlTable
	for _, t := range figureTables {
		ht := htmlTable{Title: t.title, Note: inlineMarkdown(t.note)}
		if ht.Head, ht.Rows = t.cells(rows); len(ht.Rows) > 0 {
			out = append(out, ht)
		}
	}
	return out
}

// withEnds writes a figure and, where it has one, its interval's ends in parentheses as
// the decision section does ("0.412 (0.398–0.430)", "?" for an end too few runs or
// requests could bound); "—" when the figure was not measured.
func withEnds(v float64, iv stats.Interval) string {
	s := fig(v, "")
	if s == "—" || (!iv.Bounded() && iv.Need == 0) {
		return s
	}
	return s + " (" + intervalText(iv.Lo, iv.Hi, v) + ")"
}
