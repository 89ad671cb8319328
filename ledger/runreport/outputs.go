// Package runreport renders a run's rows: the one table of output kinds (Outputs) with
// their writers, the Markdown and HTML reports with their charts (PNG and SVG), and
// compare, which sets two sets of rows side by side, with its gate over thresholds. The
// rows, their columns and the files that keep them are package ledger's.
package runreport

import (
	"io"

	"github.com/planrun/planrun/ledger"
)

// Output is one kind of output: its declaration, which the plan decoder checks output
// blocks against, and its writer, which renders the whole file from the run so far
// (vegeta's reporters are the model). Write is nil for the kinds apply appends to as
// the run goes: the ledger and the raw per-request log.
type Output struct {
	ledger.OutputKind
	Write func(io.Writer, Report) error
}

// Outputs are the kinds of output a plan may declare, in the order apply renders them.
// The ones with a RunFile are written into every run directory, declared or not; a
// block adds a path. A new format is its writer's file and a line here.
var Outputs = []Output{
	{OutputKind: ledger.OutputKind{Name: ledger.LedgerOutput, DefaultPath: "results/results.csv"}},
	{OutputKind: ledger.OutputKind{Name: ledger.RequestsOutput, DefaultPath: "results/raw.jsonl"}},
	{OutputKind: ledger.OutputKind{Name: "summary", DefaultPath: "results/summary.json", RunFile: ledger.SummaryFile}, Write: writeSummary},
	{OutputKind: ledger.OutputKind{Name: "markdown", DefaultPath: "results/results.md", RunFile: ledger.MarkdownFile, Options: reportOptions}, Write: WriteMarkdown},
	{OutputKind: ledger.OutputKind{Name: "html", DefaultPath: "results/report.html", RunFile: ledger.HTMLFile, Options: reportOptions}, Write: WriteHTML},
}

// reportOptions are the Markdown's and HTML's options. One run renders both reports
// with the choice of the last block that makes it.
var reportOptions = []string{ledger.OptionLanguage, ledger.OptionPercentiles}

func init() {
	for _, o := range Outputs {
		ledger.RegisterOutput(o.OutputKind)
	}
}

func writeSummary(w io.Writer, r Report) error { return ledger.WriteSummary(w, r.Summary) }
