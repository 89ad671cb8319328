package runreport

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// Report is everything the reports show, the input of every Output's writer.
// WriteMarkdown and WriteHTML are pure functions of it, so apply can re-render every
// report from the rows so far after every cell (and every Slurm job's news).
type Report struct {
	Title string
	// Language "zh" uses the seed's Chinese table headers; anything else is English.
	Language string
	Rows     []ledger.Row
	Env      ledger.Environment
	// Charts are the figures written beside the report (WriteCharts): Markdown shows the
	// PNG and links the SVG; HTML inlines the SVG.
	Charts []Chart
	// Capacities are the answers of the cells' capacity searches.
	Capacities []ledger.Capacity
	// Percentiles are the percentiles the percentile table shows, out of
	// stats.Percentiles; nil shows them all.
	Percentiles []int
	// Run names the run (its directory's name) and Started is when it began: report.html's
	// header says which run a page shows, as a saved or mailed page no longer has its path.
	Run     string
	Started time.Time
	// Summary is summary.json's document (ledger.NewSummary, with the run's outcome).
	Summary ledger.Summary
}

// labels are the words of the report in one language.
type labels struct {
	seed                                  []string
	single, concurrent, details, formulas string
	env, charts, none                     string
	results, notes, cost, open, everyRow  string
	// interval and unbounded explain ± and unboundedMark under a table (%g: the
	// confidence in percent).
	interval, unbounded string
	// quality heads the seed table's Quality column, shown where a row has figures.
	quality string
}

var english = labels{
	seed: []string{"Model", "Quant", "Tool", "Hardware", "TTFT(s)", "TPOT(ms)", "Throughput(tok/s)",
		"Memory(GB)", "Concurrency", "Notes"},
	single:     "Single request (concurrency 1)",
	concurrent: "Concurrent",
	details:    "Details",
	formulas:   "How the figures are measured",
	env:        "Environment",
	charts:     "Charts",
	none:       "No results yet.",
	results:    "Results",
	notes:      "Notes",
	cost:       "Cost (%s/Mtok)",
	everyRow:   "Every row",
	open:       "show",
	interval:   "± is the half-width of the figure's %g%% confidence interval, relative to it",
	unbounded:  "; %s: too few requests (or, for tok/s, runs) to bound it at %g%%, and the row's notes say how many would",
	quality:    "Quality",
}

var chinese = labels{
	seed:       []string{"模型", "量化", "工具", "硬件", "TTFT(s)", "TPOT(ms)", "吞吐(tok/s)", "显存/内存(GB)", "并发", "备注"},
	single:     "单请求（并发 1）",
	concurrent: "并发",
	details:    "明细",
	formulas:   "指标定义",
	env:        "环境",
	charts:     "图表",
	none:       "暂无结果。",
	results:    "结果",
	notes:      "备注",
	cost:       "成本（%s/百万 token）",
	everyRow:   "所有行",
	open:       "展开",
	interval:   "± 为该指标 %g%% 置信区间的半宽（相对值）",
	unbounded:  "；%s：请求（吞吐量则为运行次数）太少，无法在 %g%% 置信度下界定，所需数量见该行备注",
	quality:    "质量",
}

// WriteMarkdown renders the report for a PR: the decision where the plan asks for one,
// then the seed's tables unfolded (single-request rows apart from concurrent ones, notes
// as numbered footnotes), the charts as PNG (linking the SVG), and, folded under
// <details>, the metric formulas, the table of every figure and the environment.
func WriteMarkdown(w io.Writer, r Report) error {
	lb := english
	if r.Language == "zh" {
		lb = chinese
	}
	var b strings.Builder
	var emb []ledger.Row
	r.Rows, emb = splitEmbeddings(r.Rows)
	writeHeadline(&b, lb, r, emb)
	fmt.Fprintf(&b, "## %s\n\n", lb.formulas)
	folded(&b, lb.open, func() {
		for _, l := range formulaLines(r.Rows) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		b.WriteString("\n")
	})
	if len(r.Rows) > 0 {
		fmt.Fprintf(&b, "## %s\n\n", lb.details)
		folded(&b, lb.open, func() { detailTables(&b, lb, r) })
	}
	fmt.Fprintf(&b, "## %s\n\n", lb.env)
	folded(&b, lb.open, func() {
		for _, it := range envItems(r.Env) {
			fmt.Fprintf(&b, "- %s: %s\n", it[0], it[1])
		}
		b.WriteString("\n")
	})
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// writeHeadline writes what a reader sees first: the title and plan, the decision, the
// results (the seed's tables; session, agent-loop, tool-call, prefix-cache, energy and
// mix tables; embedding rows, emb, apart), the
// capacities found, and the charts (the decision's chart is drawn in its section).
func writeHeadline(b *strings.Builder, lb labels, r Report, emb []ledger.Row) {
	title := r.Title
	if title == "" {
		title = "planrun results"
	}
	fmt.Fprintf(b, "# %s\n\n", title)
	if r.Env.PlanPath != "" || r.Env.PlanHash != "" {
		fmt.Fprintf(b, "Plan `%s` (%s), planrun %s.\n\n", r.Env.PlanPath, r.Env.PlanHash, r.Env.PlanrunVersion)
	}
	decisionSection(b, r.Language, r.Summary.Decisions, r.Charts)
	switch {
	case len(r.Rows) == 0 && len(emb) == 0:
		fmt.Fprintf(b, "%s\n\n", lb.none)
	case len(r.Rows) == 0:
		fmt.Fprintf(b, "## %s\n\n", lb.results)
	default:
		fmt.Fprintf(b, "## %s\n\n", lb.results)
		seedTables(b, lb, r.Rows)
		sessionTables(b, r.Rows)
		writeFigureTables(b, r.Rows)
		mixTable(b, r.Rows)
	}
	embeddingsTable(b, emb)
	capacityList(b, r.Capacities)
	if charts := slices.DeleteFunc(slices.Clone(r.Charts), isDecisionChart); len(charts) > 0 {
		fmt.Fprintf(b, "## %s\n\n", lb.charts)
		for _, c := range charts {
			fmt.Fprintf(b, "![%s](%s) ([SVG](%s))\n\n", c.Title, c.PNG, c.File)
		}
	}
}

// detailTables are the compact headline table, every figure of every row, then the
// percentiles, SLOs and reasoning tables where rows have them.
func detailTables(b *strings.Builder, lb labels, r Report) {
	headlineTable(b, lb, r.Rows)
	mdtable.Table(b, detailHead, func(add func(...string)) {
		for _, row := range r.Rows {
			add(detailCells(row)...)
		}
	})
	percentileTable(b, r.Rows, r.Percentiles)
	sloTable(b, r.Rows)
	reasoningTable(b, r.Rows)
}

// folded writes body inside <details>, with the blank lines GitHub needs to render the
// Markdown within.
func folded(b *strings.Builder, summary string, body func()) {
	fmt.Fprintf(b, "<details><summary>%s</summary>\n\n", summary)
	body()
	b.WriteString("</details>\n\n")
}

// headlineTable writes the compact table and, under it, each note once with the rows
// it applies to.
func headlineTable(b *strings.Builder, lb labels, rows []ledger.Row) {
	body, notes := headline(rows)
	mdtable.TableOf(b, headlineHead, body)
	b.WriteString(intervalLegend(lb, body, []int{3, 4, 5}, rowsConfidence(rows)))
	if len(notes) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n", lb.notes)
	for i, n := range notes {
		fmt.Fprintf(b, "%d. %s (%s)\n", i+1, mdtable.OneLine(n.Text), strings.Join(n.Rows, ", "))
	}
	b.WriteString("\n")
}

// isSingle: single-request rows (one request in flight, closed loop) are kept apart
// from concurrent and open-loop rows, as the seed demands.
func isSingle(r ledger.Row) bool { return r.Concurrency == 1 && !(r.RequestRate > 0) }

// seedTables writes the seed's table, unfolded: single-request rows apart from concurrent
// ones, each under its heading, with the memory the row measured and, where the plan gives
// prices, the cost. The Notes column keeps to the row's verdict and [n] markers; the
// notes themselves are listed once under the tables, each with the rows it applies to by
// the names a person reads (ledger.CellNames).
func seedTables(b *strings.Builder, lb labels, rows []ledger.Row) {
	var single, concurrent []ledger.Row
	for _, row := range rows {
		if isSingle(row) {
			single = append(single, row)
		} else {
			concurrent = append(concurrent, row)
		}
	}
	names := ledger.CellNames(rows)
	head := slices.Clone(lb.seed)
	// Before the Notes column: the drift against the cell's reference, then the cost
	// of a million output tokens.
	quality := slices.ContainsFunc(rows, func(r ledger.Row) bool { return r.Quality.Measured() })
	if quality {
		head = slices.Insert(head, len(head)-1, lb.quality)
	}
	currency, priced := costCurrency(rows)
	if priced {
		head = slices.Insert(head, len(head)-1, fmt.Sprintf(lb.cost, currency))
	}
	notes := map[string][]string{} // level key → the row's notes, its memory's reason among them
	for _, r := range rows {
		_, why := memoryNote(r)
		n := caveats(r)
		if why != "" {
			n = append(n, why)
		}
		notes[rowKey(r)] = n
	}
	common := commonNotes(rows, notes)
	fn := footnotes{skip: common}
	for _, part := range []struct {
		heading string
		rows    []ledger.Row
	}{{lb.single, single}, {lb.concurrent, concurrent}} {
		if len(part.rows) == 0 {
			continue
		}
		fmt.Fprintf(b, "### %s\n\n", part.heading)
		var body [][]string
		for _, r := range part.rows {
			mem, _ := memoryNote(r)
			cells := []string{r.Model, r.QuantShown(), r.Tool, hardwareCell(r),
				withInterval(r, "ttft_p50_s", r.TTFT.P50, 1, 3), withInterval(r, "tpot_p50_ms", r.TPOT.P50, 1000, 1),
				withInterval(r, "output_tok_s", r.OutputTokS, 1, 1), mem, concurrency(r)}
			if quality {
				cells = append(cells, ledger.QualityText(r))
			}
			if priced {
				cells = append(cells, withInterval(r, "cost_per_mtok", r.CostPerMTok, 1, 3))
			}
			cells = append(cells, fn.cite(seedVerdict(r), notes[rowKey(r)], names[r.CellID]+" "+loadLabel(r)))
			body = append(body, cells)
		}
		mdtable.TableOf(b, head, body)
		cols := []int{4, 5, 6}
		if priced {
			cols = append(cols, len(head)-2)
		}
		b.WriteString(intervalLegend(lb, body, cols, rowsConfidence(part.rows)))
	}
	if len(common) > 0 {
		fmt.Fprintf(b, "%s:\n\n", lb.everyRow)
		for _, n := range common {
			fmt.Fprintf(b, "- %s\n", mdtable.OneLine(n))
		}
		b.WriteString("\n")
	}
	fn.write(b, lb.notes)
}

// rowKey names a row's level within a report: its cell and load.
func rowKey(r ledger.Row) string { return r.CellID + "\x00" + loadLabel(r) }

// commonNotes are the notes every one of several rows has (the same model source, too
// few runs for an interval): said once for all, not cited on each row.
func commonNotes(rows []ledger.Row, notes map[string][]string) []string {
	if len(rows) < 2 {
		return nil
	}
	var out []string
	for _, n := range notes[rowKey(rows[0])] {
		every := true
		for _, r := range rows[1:] {
			every = every && slices.Contains(notes[rowKey(r)], n)
		}
		if every && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// seedVerdict is the seed table's verdict: the row's when it says more than "ok".
func seedVerdict(r ledger.Row) string {
	if v := rowVerdict(r); v != ledger.StatusOK {
		return v
	}
	return ""
}

// footnotes number notes in the order first cited: a note several rows share is one
// footnote, listed with the rows it applies to.
type footnotes struct {
	notes []note
	index map[string]int
	skip  []string // said for every row apart
}

// cite adds the row's notes and returns its Notes cell: the verdict, then [n] for each.
func (f *footnotes) cite(verdict string, notes []string, row string) string {
	if f.index == nil {
		f.index = map[string]int{}
	}
	cell := verdict
	for _, text := range notes {
		if slices.Contains(f.skip, text) {
			continue
		}
		i, ok := f.index[text]
		if !ok {
			i = len(f.notes)
			f.index[text] = i
			f.notes = append(f.notes, note{Text: text})
		}
		if !slices.Contains(f.notes[i].Rows, row) {
			f.notes[i].Rows = append(f.notes[i].Rows, row)
		}
		cell += fmt.Sprintf(" [%d]", i+1)
	}
	return strings.TrimSpace(cell)
}

// write lists the footnotes under a heading word ("Notes").
func (f *footnotes) write(b *strings.Builder, heading string) {
	if len(f.notes) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n", heading)
	for i, n := range f.notes {
		fmt.Fprintf(b, "%d. %s (%s)\n", i+1, mdtable.OneLine(n.Text), strings.Join(n.Rows, ", "))
	}
	b.WriteString("\n")
}

// costCurrency is the currency of the rows' costs, and whether any row has one.
func costCurrency(rows []ledger.Row) (string, bool) {
	for _, r := range rows {
		if r.Priced() {
			return r.Currency, true
		}
	}
	return "", false
}
