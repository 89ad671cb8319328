package site

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/history"
)

var (
	yTick       = regexp.MustCompile(`<text class="ytick"[^>]*>([^<]*)</text>`)
	xTick       = regexp.MustCompile(`<text class="xtick" x="([0-9.]+)"[^>]*text-anchor="(\w+)"[^>]*>run (\d+)</text>`)
	xDate       = regexp.MustCompile(`<text class="xdate"[^>]*>([^<]*)</text>`)
	changeLabel = regexp.MustCompile(`<text class="change-label" x="([0-9.]+)"[^>]*text-anchor="(\w+)">change at run (\d+)`)
)

// A cell's chart reads as a person expects: y ticks at round numbers from 0, the x axis
// labelled with run numbers and dates (at most xLabels of them, so they do not overlap,
// the first and last kept inside the chart), and a change's label inside the plot.
func TestChartAxes(t *testing.T) {
	for _, tc := range []struct {
		line  []float64
		ticks []string
	}{
		{[]float64{0.2113, 0.2187, 0.2342}, []string{"0.00", "0.05", "0.10", "0.15", "0.20", "0.25"}},
		{[]float64{19.8, 20.1, 30.4}, []string{"0", "10", "20", "30", "40"}},
		{[]float64{1234, 1500}, []string{"0", "500", "1000", "1500"}},
		{[]float64{0.5}, []string{"0.0", "0.1", "0.2", "0.3", "0.4", "0.5"}},
	} {
		c := chart{Title: "TTFT", Unit: "s", Line: tc.line}
		var got []string
		for _, m := range yTick.FindAllStringSubmatch(c.svg(), -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != strings.Join(tc.ticks, " ") {
			t.Errorf("%v: y ticks %q, want %q", tc.line, got, tc.ticks)
		}
	}

	const n = 30
	c := chart{Title: "TTFT", Unit: "s", Changes: []change{{At: n - 1, Text: "server 0.9.1 → 0.9.2"}, {At: 2, Text: "settings"}}}
	for i := range n {
		c.Line = append(c.Line, 0.2+float64(i%3)/100)
		c.Dates = append(c.Dates, time.Date(2026, 11, 1+i, 0, 0, 0, 0, time.UTC).Format("01-02 15:04"))
	}
	svg := c.svg()
	xs := xTick.FindAllStringSubmatch(svg, -1)
	if len(xs) != xLabels || xs[0][3] != "1" || xs[len(xs)-1][3] != strconv.Itoa(n) {
		t.Fatalf("x ticks %q: want %d labels, from run 1 to run %d", xs, xLabels, n)
	}
	if xs[0][2] != "start" || xs[len(xs)-1][2] != "end" || xs[1][2] != "middle" {
		t.Errorf("x tick anchors %q %q %q: the edge labels must stay inside", xs[0][2], xs[1][2], xs[len(xs)-1][2])
	}
	for i := 1; i < len(xs); i++ {
		a, _ := strconv.ParseFloat(xs[i-1][1], 64)
		b, _ := strconv.ParseFloat(xs[i][1], 64)
		if b-a < 60 { // "11-02 00:00" at 10 px is about 60 px wide
			t.Errorf("x labels %s and %s are %.0f px apart: they overlap", xs[i-1][3], xs[i][3], b-a)
		}
	}
	if ds := xDate.FindAllStringSubmatch(svg, -1); len(ds) != xLabels || ds[0][1] != "11-01 00:00" {
		t.Errorf("x dates %q", ds)
	}
	labels := changeLabel.FindAllStringSubmatch(svg, -1)
	if len(labels) != 2 || labels[0][2] != "end" || labels[1][2] != "start" {
		t.Fatalf("change labels %q: want the last run's to end at its line, the third run's to start at it", labels)
	}
	for _, l := range labels {
		if x, _ := strconv.ParseFloat(l[1], 64); x < padL || x > chartW-padR {
			t.Errorf("change label at x %v lies outside the plot", x)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1, "[0 0.2 0.4 0.6 0.8 1]"},
		{0, 0.9, "[0 0.2 0.4 0.6 0.8 1]"},
		{0, 37, "[0 10 20 30 40]"},
		{0, 0, "[0 0.2 0.4 0.6 0.8 1]"},
		{-3, 7, "[-4 -2 0 2 4 6 8]"},
	} {
		if got := fmt.Sprint(niceTicks(tc.lo, tc.hi, 5)); got != tc.want {
			t.Errorf("niceTicks(%v, %v) = %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// A run's page, its report.html copied, leads back to the index like every other page;
// the index says which gate its gate column is.
func TestRunPageLinksBack(t *testing.T) {
	results, out := t.TempDir(), t.TempDir()
	rd := filepath.Join(results, "p-1")
	os.MkdirAll(rd, 0o755)
	os.WriteFile(filepath.Join(rd, ledger.HTMLFile), []byte("<!DOCTYPE html>\n<html><head></head><body class=\"r\">\n<h1>report</h1></body></html>"), 0o644)
	row := ledger.NewRow()
	row.Plan, row.RunID, row.CellID, row.Status = "p", "p-1", "m/x", ledger.StatusOK
	row.Started = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	set := &history.Set{Dir: results, Runs: []*history.Run{{ID: "p-1", Dir: rd, Started: row.Started, Rows: []ledger.Row{row}}}}
	if err := Write(out, set); err != nil {
		t.Fatal(err)
	}
	// The index says its gate is its own, and how it judged.
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !strings.Contains(string(index), "Gate: the site's own, each run against its cells' last 5 runs on ttft_p50_s, tpot_p50_ms, e2e_p50_s, output_tok_s") ||
		!strings.Contains(string(index), "judges differently") {
		t.Errorf("index.html does not say how its gate judged:\n%s", index)
	}
	page, err := os.ReadFile(filepath.Join(out, "runs", "p-1.html"))
	if err != nil {
		t.Fatal(err)
	}
	want := "<body class=\"r\">\n" + backLink + "\n<h1>report</h1>"
	if !strings.Contains(string(page), want) {
		t.Errorf("run page:\n%s\nwant the link back to the index at the top of its body", page)
	}
}
