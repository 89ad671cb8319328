package runreport

import (
	"fmt"
	"strings"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// percentileTable writes the percentile table (percentileCells).
func percentileTable(b *strings.Builder, rows []ledger.Row, pcts []int) {
	head, body := percentileCells(rows, pcts)
	mdtable.TableOf(b, head, body)
}

// sloTable writes the SLO attainment and goodput table (sloCells) under its
// explanation; nothing when no row has an slo.
func sloTable(b *strings.Builder, rows []ledger.Row) {
	head, body := sloCells(rows)
	noteTable(b, "SLO", sloNote, head, body)
}

// noteTable writes a table under its heading and explanation; nothing without a body.
func noteTable(b *strings.Builder, title, note string, head []string, body [][]string) {
	if len(body) == 0 {
		return
	}
	b.WriteString("### " + title + "\n\n" + note + "\n\n")
	mdtable.TableOf(b, head, body)
}

// capacityList shows each cell's capacity search answer; nothing when there was none.
func capacityList(b *strings.Builder, caps []ledger.Capacity) {
	if len(caps) == 0 {
		return
	}
	b.WriteString("### Capacity\n\n")
	for _, c := range caps {
		fmt.Fprintf(b, "- `%s`: %s\n", c.CellID, c)
	}
	b.WriteString("\n")
}
