package runreport

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/decide"
	"github.com/planrun/planrun/ledger/ledgertest"
)

// htmlTestReport is reportRows with SLO attainment on every row but the vLLM one, a VRAM
// trace on one GPU, so every kind of chart has something to draw, and a capacity answer
// for the first cell.
func htmlTestReport(t *testing.T) Report {
	t.Helper()
	rows := reportRows()
	for i := range rows {
		if rows[i].CellID != "qwen-7b-fp8-vllm" {
			rows[i].SLOAttainmentPct = 70 + 10*float64(i)
		}
	}
	rows[0].GoodputReqS, rows[0].GoodputTokS = 0.1125, 31.5
	rows[0].Notes = "<b>not bold</b>"
	// One level with every figure table (Energy, Agent loops, Tool calls, Prefix cache), so
	// the page is checked with them too.
	rows[1].Energy, rows[1].AgentLoop, rows[1].Agentic = energyRow().Energy, agentRow().AgentLoop, agentRow().Agentic
	vram := []VRAMSeries{
		{Label: "qwen-7b-q4-ollama c1", GPU: "0 RTX 4060", Points: []VRAMPoint{{0, 0.6}, {1, 4.2}, {2, 4.5}}},
		{Label: "qwen-7b-q4-ollama c4", GPU: "0 RTX 4060", Points: []VRAMPoint{{0, 0.6}, {1, 4.4}, {2, 4.8}}},
	}
	charts, err := Charts(rows, vram)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 4 {
		t.Fatalf("charts = %d, want latency, throughput/latency, VRAM and SLO", len(charts))
	}
	// A decision over the rows, with its chart: the page opens with it.
	ds := []ledger.Decision{decide.Decide(ledger.DecisionSpec{Name: "pick", Objective: ledger.DecisionObjective{Field: "output_tok_s", Maximize: true},
		Constraints: []ledger.DecisionConstraint{{Field: "memory_gb", Op: "<=", Limit: 5}}}, rows)}
	dc, err := DecisionCharts(ds, rows)
	if err != nil || len(dc) != 1 {
		t.Fatalf("decision charts %d: %v", len(dc), err)
	}
	charts = append(charts, dc...)
	return Report{Title: "Qwen on one card", Rows: rows, Env: reportEnv(), Charts: charts, Summary: ledger.Summary{Decisions: ds},
		Capacities: []ledger.Capacity{{CellID: "qwen-7b-q4-ollama", Dimension: "concurrency", Value: 6, Bound: ledger.CapacityFound,
			TargetPct: 95, Resolution: 1, Levels: 5}}}
}

func TestWriteHTML(t *testing.T) {
	r := htmlTestReport(t)
	r.Run, r.Started = "2026-12-01T10-00-00-ab12", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<svg"); n != len(r.Charts) {
		t.Errorf("%d inline SVGs, want one per chart (%d)", n, len(r.Charts))
	}
	// Self-contained: nothing to fetch, nothing to run; the only links are to the page's
	// own notes, and each resolves.
	for _, banned := range []string{"<script", "src=", "url(", "@import", "<link"} {
		if strings.Contains(page, banned) {
			t.Errorf("report.html holds %q", banned)
		}
	}
	hrefs := regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(hrefs) == 0 {
		t.Error("the headline's [n] markers are not links")
	}
	for _, h := range hrefs {
		if !strings.HasPrefix(h[1], "#") || !strings.Contains(page, `id="`+h[1][1:]+`"`) {
			t.Errorf("link %q is not to an id of the page", h[1])
		}
	}
	for _, want := range []string{
		"<strong>TPOT</strong> = (E2E − TTFT) / (output tokens − 1)", // the Markdown's formula, converted
		"<td>0.820 / 0.950</td>", `<td>rtx4060-7b-q4: above <a href="#note-2">[2]</a> <a href="#note-3">[3]</a></td>`, // headline
		"<td>0.820 / 0.900 / 0.950</td>", // per-cell detail
		"&lt;b&gt;not bold&lt;/b&gt;",    // a note is text, not markup
		`<tr class="interrupted">`,       // a row that did not end ok stands out
		"Driver: 580.65",
		`<p class="plan" id="run">Run 2026-12-01T10-00-00-ab12, started 2026-12-01 10:00:00 UTC</p>`,
		// The decision first, in words and with its chart.
		`<section class="decision indeterminate" id="decision-pick">`, "<strong>Indeterminate</strong>: ",
		`<figure class="chart decision-chart" aria-label="pick: maximize output_tok_s against decode_tok_s`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if d, h := strings.Index(page, "<h2>Decision</h2>"), strings.Index(page, "<h2>Results</h2>"); d < 0 || d > h {
		t.Error("report.html does not open with the decision")
	}
	if n := strings.Count(page, "2/30 failed (5xx=1;timeout=1)"); n != 1 {
		t.Errorf("a note shared by three rows is shown %d times, want once", n)
	}
	if n := strings.Count(page, `<details class="cell"`); n != 2 {
		t.Errorf("%d cell sections, want 2", n)
	}
}

// report.html carries what the Markdown has beyond the headline: the capacity answer
// beside the headline table, and per cell the chosen percentiles with std, SLO
// attainment and goodput.
func TestWriteHTMLFigures(t *testing.T) {
	r := htmlTestReport(t)
	page := func(pcts []int) string {
		t.Helper()
		r.Percentiles = pcts
		var b bytes.Buffer
		if err := WriteHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	def := page(nil)
	capacity := strings.Index(def, `<li><code>qwen-7b-q4-ollama</code>: concurrency 6 at ≥ 95% SLO attainment (bisected to 1, 5 levels measured)</li>`)
	if capacity < 0 || capacity < strings.Index(def, `id="headline"`) || capacity > strings.Index(def, "<h2>Charts</h2>") {
		t.Errorf("no capacity answer between the headline table and the charts:\n%s", def)
	}
	q4, vllm := strings.Index(def, "<h3>qwen-7b-q4-ollama</h3>"), strings.Index(def, "<h3>qwen-7b-fp8-vllm</h3>")
	if q4 < 0 || vllm < q4 {
		t.Fatalf("cell sections missing or out of order: %d %d", q4, vllm)
	}
	q4Cell, vllmCell := def[q4:vllm], def[vllm:]
	for _, want := range []string{
		"<th>TTFT p50 (s)</th><th>TTFT p90 (s)</th><th>TTFT p95 (s)</th><th>TTFT p99 (s)</th><th>TTFT std (s)</th>",
		"<th>E2E p95 (s)</th><th>E2E p99 (s)</th><th>E2E std (s)</th>",
		"<td>0.820</td><td>0.900</td><td>0.920</td><td>0.950</td><td>0.050</td>",  // TTFT, default percentiles
		"<td>27.0</td><td>40.0</td><td>45.0</td><td>50.0</td><td>10.0</td>",       // ITL in ms
		"<th>Attainment (%)</th><th>Goodput (req/s)</th><th>Goodput (tok/s)</th>", // SLO
		"<td>70.0</td><td>0.113</td><td>31.5</td>",
		"<code>slo</code>", // its explanation, as in the Markdown
	} {
		if !strings.Contains(q4Cell, want) {
			t.Errorf("the q4 cell's detail lacks %q", want)
		}
	}
	if strings.Contains(vllmCell, "Attainment") {
		t.Errorf("a cell without slo shows an SLO table")
	}
	if !strings.Contains(vllmCell, "<th>TTFT p95 (s)</th>") {
		t.Errorf("the vLLM cell has no percentile table")
	}
	chosen := page([]int{50, 99})
	if !strings.Contains(chosen, "<th>TTFT p50 (s)</th><th>TTFT p99 (s)</th><th>TTFT std (s)</th>") ||
		!strings.Contains(chosen, "<td>0.820</td><td>0.950</td><td>0.050</td>") || strings.Contains(chosen, "p95") {
		t.Errorf("percentiles [50 99] not followed")
	}
}

// The Markdown for a PR, as a person reads it: the decision first, then the seed's table
// unfolded with Notes cells that keep to a verdict and [n] markers, each note once above
// the fold, and every chart as PNG linking its SVG; the compact table of p50 and p99 is
// folded with the details.
func TestWriteMarkdownForPR(t *testing.T) {
	r := htmlTestReport(t)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	fold := strings.Index(md, "<details>")
	if fold < 0 {
		t.Fatalf("nothing folded under <details>:\n%s", md)
	}
	top := md[:fold]
	seed := strings.Index(top, "| Model | Quant | Tool | Hardware | TTFT(s) | TPOT(ms) | Throughput(tok/s) | Memory(GB) | Concurrency | Notes |")
	if seed < 0 || strings.Index(top, "## Decision") > seed || strings.Index(top, "## Decision") < 0 {
		t.Errorf("no decision, then the seed's table, above the fold:\n%s", top)
	}
	if !strings.Contains(md[fold:], "| Cell | Workload | Load | TTFT p50/p99 (s) | TPOT p50/p99 (ms) | tok/s | Memory (GB) | Verdict |") {
		t.Errorf("the compact table is not among the details")
	}
	for _, line := range strings.Split(top, "\n") {
		if !strings.HasPrefix(line, "| qwen2.5-7b |") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if notes := cells[len(cells)-1]; len([]rune(notes)) > 60 {
			t.Errorf("a Notes cell of %d characters: %q", len([]rune(notes)), notes)
		}
	}
	// The full table by its head: the session and agent-loop tables above the fold have a
	// "Prompt tokens (mean)" column of their own.
	if strings.Contains(top, "| "+strings.Join(detailHead, " | ")+" |") || !strings.Contains(md[fold:], "| "+strings.Join(detailHead, " | ")+" |") {
		t.Errorf("the full table is above the fold:\n%s", top)
	}
	if n := strings.Count(top, "2/30 failed (5xx=1;timeout=1)"); n != 1 {
		t.Errorf("a note shared by three rows is shown %d times above the fold, want once", n)
	}
	for _, c := range r.Charts {
		if want := "![" + c.Title + "](" + c.PNG + ") ([SVG](" + c.File + "))"; !strings.Contains(top, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// htmlPageOf renders r as report.html.
func htmlPageOf(t *testing.T, r Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The page's title is the report's, or "planrun results" when it has none.
func TestHTMLTitle(t *testing.T) {
	for title, want := range map[string]string{"": "planrun results", "Qwen on one card": "Qwen on one card"} {
		page := htmlPageOf(t, Report{Title: title})
		if !strings.Contains(page, "<title>"+want+"</title>") || !strings.Contains(page, "<h1>"+want+"</h1>") {
			t.Errorf("title %q: page lacks <title>/<h1> %q", title, want)
		}
	}
}

// The run line appears when the run's name or its start is known, either alone; the
// plan line when the plan's path or hash is, either alone; neither line otherwise.
func TestHTMLRunAndPlanLines(t *testing.T) {
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		run        string
		started    time.Time
		path, hash string
		want       string // the lines between <h1> and Results
	}{
		{"r1", started, "plans/qwen.hcl", "sha256:abc123",
			`<p class="plan" id="run">Run r1, started 2026-12-01 10:00:00 UTC</p>` + "\n" + `<p class="plan">Plan plans/qwen.hcl (sha256:abc123), planrun v0.1.0</p>`},
		{"r1", time.Time{}, "plans/qwen.hcl", "", `<p class="plan" id="run">Run r1</p>` + "\n" + `<p class="plan">Plan plans/qwen.hcl (), planrun v0.1.0</p>`},
		{"", started, "", "sha256:abc123",
			`<p class="plan" id="run">Run, started 2026-12-01 10:00:00 UTC</p>` + "\n" + `<p class="plan">Plan (sha256:abc123), planrun v0.1.0</p>`},
		{"", time.Time{}, "", "", "\n"},
	} {
		env := ledger.Environment{PlanPath: c.path, PlanHash: c.hash, PlanrunVersion: "v0.1.0"}
		page := htmlPageOf(t, Report{Title: "t", Run: c.run, Started: c.started, Env: env})
		_, rest, _ := strings.Cut(page, "<h1>t</h1>\n")
		lines, _, _ := strings.Cut(rest, "\n<h2>Results</h2>")
		if lines != c.want {
			t.Errorf("run %q, started %v, path %q, hash %q: lines\n%q\nwant\n%q", c.run, c.started, c.path, c.hash, lines, c.want)
		}
	}
}

// A cell's section has a Reasoning table only when one of its rows reasoned.
func TestHTMLReasoningTableOnlyForReasoningRows(t *testing.T) {
	plain, reasoned := ledgertest.SampleRow("plain", 1), ledgertest.SampleRow("thinks", 1)
	reasoned.ReasoningTokens, reasoned.AnswerTokens = 900, 300
	page := htmlPageOf(t, Report{Rows: []ledger.Row{plain, reasoned}})
	if n := strings.Count(page, "<h4>Reasoning</h4>"); n != 1 {
		t.Errorf("%d Reasoning tables, want 1 (the reasoning cell's)", n)
	}
	_, thinks, _ := strings.Cut(page, "<h3>thinks</h3>")
	if !strings.Contains(thinks, "<h4>Reasoning</h4>") || !strings.Contains(thinks, "<td>900</td><td>300</td>") {
		t.Errorf("the reasoning cell's section lacks its Reasoning table:\n%s", thinks)
	}
}

// A cell's "about" line names only what the rows say, joined by " · ".
func TestCellAboutSkipsEmptyParts(t *testing.T) {
	r := ledger.NewRow()
	r.Model, r.Tool, r.Workload = "qwen2.5-7b", "ollama.local", "short"
	if got, want := cellAbout(r), "model qwen2.5-7b · tool ollama.local · workload short"; got != want {
		t.Errorf("cellAbout = %q, want %q", got, want)
	}
	if got := cellAbout(ledger.NewRow()); got != "" {
		t.Errorf("cellAbout of an empty row = %q, want nothing", got)
	}
}

// A chart is inlined from its <svg> element on: the XML prolog before it is dropped.
func TestInlineSVGDropsProlog(t *testing.T) {
	for in, want := range map[string]string{
		`<?xml version="1.0"?>` + "\n" + `<svg width="1"></svg>`: `<svg width="1"></svg>`,
		`<svg width="1"></svg>`:                                  `<svg width="1"></svg>`,
		`not a chart`:                                            `not a chart`,
	} {
		if got := string(inlineSVG([]byte(in))); got != want {
			t.Errorf("inlineSVG(%q) = %q, want %q", in, got, want)
		}
	}
}
