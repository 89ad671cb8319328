package mdtable

import (
	"math"
	"strings"
	"testing"
)

func TestCells(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Num(0.0412, 1000, 1), "41.2"},
		{Num(math.NaN(), 1, 2), "—"},
		{Num(math.Inf(1), 1, 2), "—"},
		{Dash(""), "—"},
		{Dash("q4"), "q4"},
		{JoinInts([]int{1, 4, 16}), "1,4,16"},
		{JoinInts(nil), ""},
		{OneLine("one"), "one"},
		{OneLine("two\r\nlines\n\nand\rmore\n"), "two; lines; and; more"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// A cell's pipes are escaped and its line breaks folded, so the row stays one row.
func TestTableOf(t *testing.T) {
	var b strings.Builder
	TableOf(&b, []string{"cell", "note"}, [][]string{{"a|b", "two\nlines"}})
	want := "| cell | note |\n|---|---|\n| a\\|b | two; lines |\n\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
