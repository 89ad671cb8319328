// Package mdtable formats the cells and tables of planrun's Markdown and text outputs:
// the report, compare's verdicts and history's trends all write figures the same way.
package mdtable

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Num formats v·scale with the given decimals; "—" when not measured.
func Num(v, scale float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.*f", decimals, v*scale)
}

// OneLine folds s's line breaks into "; ", so that a table's row, or a CSV ledger's
// record (whose torn final line must stay detectable and repairable), is one line.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), "; ")
}

// Dash is s, or "—" when s is empty.
func Dash(s string) string { return cmp.Or(s, "—") }

// JoinInts writes the numbers comma-separated, without spaces: "1,4,16".
func JoinInts(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// TableOf writes a Markdown table of rows already built.
func TableOf(b *strings.Builder, head []string, body [][]string) {
	Table(b, head, func(add func(...string)) {
		for _, cells := range body {
			add(cells...)
		}
	})
}

// Table writes a Markdown table; cells are made one line and have their pipes escaped.
func Table(b *strings.Builder, head []string, body func(add func(...string))) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.ReplaceAll(OneLine(c), "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	row(head)
	b.WriteString("|" + strings.Repeat("---|", len(head)) + "\n")
	body(func(cells ...string) { row(cells) })
	b.WriteString("\n")
}
