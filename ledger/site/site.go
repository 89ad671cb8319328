// Package site writes a results directory as a static site a team can browse: an index
// of runs, a page per cell with each figure over time (a p50–p99 band, the environment
// changes marked on the time axis) and a page per run (its report.html). Nothing is
// fetched and nothing runs: it opens from a file or any static host.
package site

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/ledger/history"
)

// GateRuns is the rolling baseline each run's gate verdict on the index is judged with.
const GateRuns = 5

// Write writes the site for the set's runs into dir (created): index.html, cells/*.html,
// runs/*.html.
func Write(dir string, set *history.Set) error {
	for _, d := range []string{dir, filepath.Join(dir, "cells"), filepath.Join(dir, "runs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	series := history.Build(set, history.Options{})
	cells := make([]cellPage, len(series))
	for i, s := range series {
		cells[i] = newCellPage(i, s)
		if err := writePage(filepath.Join(dir, "cells", cells[i].File), cellTmpl, cells[i]); err != nil {
			return err
		}
	}
	idx := indexPage{Dir: set.Dir, Notes: append(set.Notes, history.Renamed(series)...), Cells: cells,
		GateRuns: GateRuns, GateFigures: strings.Join(history.BaselineFigures, ", ")}
	for i := len(set.Runs) - 1; i >= 0; i-- {
		r := set.Runs[i]
		row, err := runRow(set, r)
		if err != nil {
			return err
		}
		if err := writeRunPage(dir, r, row.File); err != nil {
			return err
		}
		idx.Runs = append(idx.Runs, row)
	}
	return writePage(filepath.Join(dir, "index.html"), indexTmpl, idx)
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func slug(s string) string { return strings.Trim(unsafe.ReplaceAllString(s, "_"), "_") }

type runRowData struct {
	Date, ID, Plan, File string
	OK, Failed           int
	Gate                 string
	Changes              string
}

// runRow is a run's line on the index: its cells' outcomes and its gate verdict against
// its cells' last GateRuns runs.
func runRow(set *history.Set, r *history.Run) (runRowData, error) {
	row := runRowData{Date: r.Started.UTC().Format("2006-01-02 15:04:05"), ID: r.ID, Plan: r.Plan(), File: slug(r.ID) + ".html"}
	row.OK, row.Failed = cellOutcomes(r)
	js, err := history.Judge(set, r.ID, history.Baseline{N: GateRuns})
	if err != nil {
		return row, err
	}
	regressed, insufficient := history.Failing(js)
	row.Gate = gateVerdict(len(js), regressed, len(insufficient))
	for _, j := range regressed {
		if j.Explain != "" {
			row.Changes = j.Explain
		}
	}
	return row, nil
}

// cellOutcomes counts a run's cells that ended ok and failed, by its manifest, or by
// its rows when it has no manifest of cells.
func cellOutcomes(r *history.Run) (ok, failed int) {
	count := func(status string) {
		switch status {
		case ledger.StatusOK:
			ok++
		case ledger.StatusFailed:
			failed++
		}
	}
	if r.Manifest != nil && len(r.Manifest.Cells) > 0 {
		for _, c := range r.Manifest.Cells {
			count(c.Status)
		}
		return ok, failed
	}
	for _, x := range r.Rows {
		count(x.Status)
	}
	return ok, failed
}

// gateVerdict is a run's gate column: the figures that regressed, or that it is within
// noise or has too few runs before it to tell, of judged figures.
func gateVerdict(judged int, regressed []history.Judgement, insufficient int) string {
	switch {
	case judged == 0:
		return "—"
	case len(regressed) > 0:
		var figs []string
		for _, j := range regressed {
			figs = append(figs, j.Field)
		}
		slices.Sort(figs)
		return fmt.Sprintf("%d regressed (%s)", len(regressed), strings.Join(slices.Compact(figs), ", "))
	case insufficient == judged:
		return "insufficient data"
	case insufficient > 0:
		return fmt.Sprintf("within noise; %d insufficient data", insufficient)
	}
	return "within noise"
}

// writeRunPage copies the run's report.html; a run without one (its directory gone, or
// from before report.html) gets a page that says so and lists its rows.
func writeRunPage(dir string, r *history.Run, file string) error {
	dst := filepath.Join(dir, "runs", file)
	if r.Dir != "" {
		b, err := os.ReadFile(filepath.Join(r.Dir, ledger.HTMLFile))
		if err == nil {
			b = withBackLink(b)
			return ledger.WriteFileAtomic(dst, func(w io.Writer) error { _, err := w.Write(b); return err })
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return writePage(dst, runTmpl, r)
}

// backLink is the site's way back to its index, as every page of it starts.
const backLink = `<nav><a href="../index.html">← all runs and cells</a></nav>`

// withBackLink puts the link back to the index at the top of a run's report.html, which
// is a page of its own and knows nothing of the site around it.
func withBackLink(page []byte) []byte {
	i := bytes.Index(page, []byte("<body"))
	if i < 0 {
		return append([]byte(backLink+"\n"), page...)
	}
	end := bytes.IndexByte(page[i:], '>')
	if end < 0 {
		return page
	}
	at := i + end + 1
	return slices.Concat(page[:at:at], []byte("\n"+backLink), page[at:])
}

type cellPage struct {
	Key    history.Key
	File   string
	Runs   int
	Last   string
	Trend  string
	Charts []template.HTML
	Points []pointRow
	Marks  []change
}

type pointRow struct {
	N                                int
	Date, ID, RunFile                string
	Planrun, PlanHash, Server, Model string
	GPU, Host, Changes               string
	Figures                          []string
}

// chartFigures are a cell page's charts: a figure's line and the p99 its band reaches.
var chartFigures = []struct{ title, line, band string }{
	{"TTFT", "ttft_p50_s", "ttft_p99_s"},
	{"TPOT", "tpot_p50_ms", "tpot_p99_ms"},
	{"E2E", "e2e_p50_s", "e2e_p99_s"},
	{"Output throughput", "output_tok_s", ""},
}

func newCellPage(i int, s history.Series) cellPage {
	p := cellPage{Key: s.Key, File: fmt.Sprintf("%03d-%s.html", i+1, slug(s.Key.Plan+"-"+s.Key.String())), Runs: len(s.Points)}
	for j, pt := range s.Points {
		if len(pt.Changes) > 0 {
			p.Marks = append(p.Marks, change{j, fmt.Sprintf("run %d (%s): %s", j+1, pt.RunID, strings.Join(history.Phrases(pt.Changes, ""), "; "))})
		}
	}
	var dates []string
	for _, pt := range s.Points {
		dates = append(dates, pt.Started.UTC().Format("01-02 15:04"))
	}
	for _, f := range chartFigures {
		_, unit, _ := compare.FigureValue(f.line, &ledger.Row{})
		c := chart{Title: f.title, Unit: unit, Line: s.Values(f.line), Dates: dates, Changes: p.Marks}
		if f.band != "" {
			c.Title = f.title + " p50, band to p99"
			c.Band = s.Values(f.band)
		}
		p.Charts = append(p.Charts, template.HTML(c.svg()))
	}
	ttft := s.Values("ttft_p50_s")
	p.Last = history.FormatValue(ttft[len(ttft)-1])
	p.Trend = s.Trends([]string{"ttft_p50_s"})[0].Verdict
	cols := s.Columns(history.DefaultFields)
	for j, pt := range s.Points {
		e := pt.Env
		r := pointRow{N: j + 1, Date: pt.Started.UTC().Format("2006-01-02 15:04"), ID: pt.RunID, RunFile: slug(pt.RunID) + ".html",
			Planrun: e.PlanrunVersion, PlanHash: shortHash(e.PlanHash), Server: e.ServerVersion, Model: shortHash(e.ModelDigest),
			GPU: strings.TrimSpace(e.GPU + " " + e.Driver), Host: e.Host}
		r.Changes = strings.Join(history.Phrases(pt.Changes, ""), "; ")
		for _, col := range cols {
			r.Figures = append(r.Figures, history.FormatValue(col[j]))
		}
		p.Points = append(p.Points, r)
	}
	return p
}

func shortHash(h string) string {
	if _, hex, ok := strings.Cut(h, ":"); ok {
		h = hex
	}
	return h[:min(len(h), 12)]
}

type indexPage struct {
	Dir string
	// GateRuns and GateFigures say how the runs' gate column was judged.
	GateRuns    int
	GateFigures string
	Notes       []string
	Runs        []runRowData
	Cells       []cellPage
}

func writePage(path string, t *template.Template, data any) error {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return err
	}
	return ledger.WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err })
}
