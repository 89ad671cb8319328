package runreport

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/decide"
	"github.com/planrun/planrun/ledger/ledgertest"
	"github.com/planrun/planrun/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./report -update, then review the diff):\n%s", name, got)
	}
}

// reportRows covers the cases a reader must see told apart: single vs concurrent,
// failures, noisy runs, missing GPU telemetry, chunk-counted tokens, open loop.
func reportRows() []ledger.Row {
	a1 := ledgertest.SampleRow("qwen-7b-q4-ollama", 1)
	a4 := ledgertest.SampleRow("qwen-7b-q4-ollama", 4)
	a4.OutputTokS, a4.TTFT.P50, a4.TPOT.P50 = 98.5, 1.31, 0.0412
	a4.Stability, a4.StabilitySpread, a4.Verdict = "noisy", 0.17, "above"
	a4.Notes = ""
	b1 := ledger.NewRow()
	b1.CellID, b1.Model, b1.Quantization, b1.Tool, b1.Hardware = "qwen-7b-fp8-vllm", "qwen2.5-7b", "fp8", "openai.vllm", "rtx5090"
	b1.Concurrency, b1.Runs, b1.Requests, b1.Succeeded = 1, 1, 5, 5
	b1.TTFT.P50, b1.TTFT.P90, b1.TTFT.P99, b1.TPOT.P50, b1.OutputTokS = 0.28, 0.3, 0.31, 0.012, 80.2
	b1.TokenSource, b1.TokensPerChunk, b1.Stability = "chunks", 1, "single-run"
	b1.VRAMSource, b1.Status = "no GPU telemetry: NVML library not found", ledger.StatusOK
	b1.Notes = "a | pipe"
	open := ledgertest.SampleRow("qwen-7b-q4-ollama", 1)
	open.RequestRate, open.Status, open.Notes = 2, ledger.StatusInterrupted, ""
	return []ledger.Row{a1, a4, b1, open}
}

func reportEnv() ledger.Environment {
	return ledger.Environment{Host: "bench-1", OS: "linux", Arch: "amd64", Kernel: "6.8.0", CPU: "AMD EPYC 9654", CPUs: 16,
		GPUs: []string{"NVIDIA GeForce RTX 4060 (8 GB)"}, Driver: "580.65", CUDA: "13.0",
		ServerVersions: map[string]string{"ollama.local": "0.6.5", "openai.vllm": "0.11.0"},
		ModelDigests:   map[string]string{"ollama.local qwen2.5:7b": "sha256:845dbda0ea48"},
		PlanrunVersion: "v0.1.0", PlanPath: "plans/qwen.hcl", PlanHash: "sha256:abc123"}
}

func TestWriteMarkdownGolden(t *testing.T) {
	for _, tt := range []struct{ lang, file string }{{"", "report.en.md"}, {"zh", "report.zh.md"}} {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			rows := reportRows()
			rows[1].SLOAttainmentPct, rows[1].GoodputReqS, rows[1].GoodputTokS = 90, 0.1125, 31.5
			// A decision over the rows, which the report opens with.
			ds := []ledger.Decision{decide.Decide(ledger.DecisionSpec{Name: "pick", Objective: ledger.DecisionObjective{Field: "output_tok_s", Maximize: true},
				Constraints: []ledger.DecisionConstraint{{Field: "memory_gb", Op: "<=", Limit: 5}}}, rows)}
			r := Report{Title: "Qwen on one card", Language: tt.lang, Rows: rows, Env: reportEnv(), Summary: ledger.Summary{Decisions: ds},
				Charts:      []Chart{{Title: "TTFT, TPOT and E2E against load", File: LatencyChartFile, PNG: pngName(LatencyChartFile)}},
				Percentiles: []int{50, 99},
				Capacities: []ledger.Capacity{{CellID: "qwen-7b-q4-ollama", Dimension: "concurrency", Value: 6, Bound: ledger.CapacityFound,
					TargetPct: 95, Resolution: 1, Levels: 5}}}
			if err := WriteMarkdown(&b, r); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, b.Bytes())
		})
	}
}

// The golden file pins the layout; these pin the properties that must hold whatever it
// looks like.
func TestWriteMarkdownProperties(t *testing.T) {
	var b bytes.Buffer
	WriteMarkdown(&b, Report{Rows: reportRows(), Env: reportEnv()})
	md := b.String()
	single := strings.Index(md, "### Single request")
	conc := strings.Index(md, "### Concurrent")
	formulas := strings.Index(md, "## How the figures are measured")
	if single < 0 || conc < single || formulas < conc {
		t.Fatalf("want single-request table, then concurrent table, then formulas; got order %d %d %d", single, conc, formulas)
	}
	singlePart := md[single:conc]
	if strings.Contains(singlePart, "| 4 |") || strings.Contains(singlePart, "open loop") {
		t.Errorf("concurrent or open-loop rows in the single-request table:\n%s", singlePart)
	}
	for _, want := range []string{"TPOT** = (E2E − TTFT) / (output tokens − 1)", "| 0.820 | 28.0 | 35.0 | 4.50 NVML | 1 |",
		"2/30 failed (5xx=1;timeout=1)", "noisy: TTFT spread ±17%", "tokens counted from chunks", ". a | pipe (",
		"no GPU telemetry: NVML library not found", "| — |", "INTERRUPTED", "Driver: 580.65"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var empty bytes.Buffer
	WriteMarkdown(&empty, Report{Language: "zh"})
	if !strings.Contains(empty.String(), "暂无结果") || !strings.Contains(empty.String(), "TTFT") {
		t.Errorf("empty zh report:\n%s", empty.String())
	}
}

func TestWriteCharts(t *testing.T) {
	dir := t.TempDir()
	rows := reportRows()
	charts, err := WriteCharts(dir, rows, []VRAMSeries{{Label: "qwen 7b", Points: []VRAMPoint{{0, 0.6}, {1, 4.2}, {2, 4.5}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 3 {
		t.Fatalf("charts = %v, want TTFT, throughput and VRAM", charts)
	}
	for _, c := range charts {
		data, err := os.ReadFile(filepath.Join(dir, c.File))
		if err != nil {
			t.Fatal(err)
		}
		if err := xml.NewDecoder(bytes.NewReader(data)).Decode(new(struct{})); err != nil && err != io.EOF {
			t.Errorf("%s is not XML: %v", c.File, err)
		}
		if !bytes.Contains(data, []byte("<svg")) {
			t.Errorf("%s is not an SVG", c.File)
		}
	}
	none, err := WriteCharts(t.TempDir(), []ledger.Row{ledger.NewRow()}, nil)
	if err != nil || len(none) != 0 {
		t.Errorf("rows without figures gave charts %v, err %v", none, err)
	}
}

// A reader meeting "noisy" or early stops in a row is told in the same line what they mean.
func TestNotesExplainNoisyAndEarlyStops(t *testing.T) {
	r := ledgertest.SampleRow("c1", 4)
	r.Stability, r.StabilitySpread, r.EarlyStops = "noisy", 0.2, 3
	n := strings.Join(caveats(r), "; ")
	for _, want := range []string{"noisy: TTFT spread ±20% — " + StabilityHint,
		"3 of 30 requests stopped before max_tokens — " + EarlyStopHint} {
		if !strings.Contains(n, want) {
			t.Errorf("notes %q lack %q", n, want)
		}
	}
}

// A chart is drawn only where its x axis has two loads or more: a single replay, one
// concurrency or one request rate gives no line, and drew an axis from -1 to 1.
func TestChartsNeedTwoLoads(t *testing.T) {
	replay := ledgertest.SampleRow("replay", 0)
	replay.SendLag.N = 10 // paced sends at no rate: a replay
	other := ledgertest.SampleRow("replay-b", 0)
	other.SendLag.N = 10
	if figs := figures([]ledger.Row{replay, other}, nil); len(figs) != 0 {
		t.Fatalf("two cells of one replay each drew %d figures: %s", len(figs), figs[0].title)
	}
	rate := ledgertest.SampleRow("open", 1)
	rate.RequestRate = 2
	f := latencyFigure([]ledger.Row{ledgertest.SampleRow("a", 1), ledgertest.SampleRow("a", 4), rate})
	if f == nil || len(f.panels) != 1 || f.panels[0][0].X.Label.Text != "concurrency" {
		t.Fatalf("c1 and c4 draw one row of panels, by concurrency, and the single request rate none: %+v", f)
	}
}

// The charts' text is sans, as the page's is.
func TestChartsSansFont(t *testing.T) {
	charts, err := Charts(reportRows(), nil) // the throughput chart's point labels too
	if err != nil || len(charts) == 0 {
		t.Fatalf("charts %v, err %v", charts, err)
	}
	for _, c := range charts {
		if svg := string(c.SVG); !strings.Contains(svg, "Liberation Sans") || strings.Contains(svg, "Liberation Serif") {
			t.Errorf("%s: a chart font is not Liberation Sans", c.File)
		}
	}
}

// The charts set their font on what they draw, not as gonum's global default: another
// chart in a program that imports this package keeps gonum's own (Liberation Serif).
func TestChartsLeaveGonumsDefaultFont(t *testing.T) {
	if _, err := Charts(reportRows(), nil); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]font.Font{"plot.DefaultFont": plot.DefaultFont, "plotter.DefaultFont": plotter.DefaultFont} {
		if f.Typeface != "Liberation" || f.Variant != "Serif" {
			t.Errorf("%s is %s %s, want gonum's Liberation Serif", name, f.Typeface, f.Variant)
		}
	}
}

// Latencies microseconds apart are read from zero, so their axis ticks differ instead of
// all reading "20"; and every panel leaves room above its highest point.
func TestChartAxesFromZeroWithDistinctTicks(t *testing.T) {
	var rows []ledger.Row
	for i, c := range []int{1, 2, 4} {
		r := ledgertest.SampleRow("a", c)
		r.TTFT.P50, r.TTFT.P99, r.TPOT.P50, r.TPOT.P99 = 0.020001+float64(i)*1e-6, 0.021, 0.005, 0.006
		rows = append(rows, r)
	}
	f := paretoFigure(rows)
	if f == nil {
		t.Fatal("no throughput chart")
	}
	p := f.panels[0][0]
	if p.X.Min != 0 || p.Y.Min != 0 {
		t.Errorf("axes from %v (x) and %v (y), want 0", p.X.Min, p.Y.Min)
	}
	max := p.Y.Max
	headroom(p)
	if p.Y.Max <= max {
		t.Errorf("no headroom above %v", max)
	}
	seen := map[string]bool{}
	for _, tick := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if tick.Label == "" {
			continue
		}
		if seen[tick.Label] {
			t.Errorf("tick label %q repeats", tick.Label)
		}
		seen[tick.Label] = true
	}
	if len(seen) < 2 {
		t.Errorf("ticks %v", seen)
	}
}

// Every panel leaves room right of its last point too, so the last point and its label
// are not drawn on the panel's edge.
func TestChartsPadTheXAxis(t *testing.T) {
	f := latencyFigure([]ledger.Row{ledgertest.SampleRow("a", 1), ledgertest.SampleRow("a", 4)})
	if f == nil {
		t.Fatal("no latency chart")
	}
	if _, err := f.render("svg"); err != nil {
		t.Fatal(err)
	}
	for _, p := range f.panels[0] {
		if p.X.Max <= 4 || p.X.Max > 4.5 {
			t.Errorf("%s: x axis ends at %v; the last point is at 4", p.Title.Text, p.X.Max)
		}
	}
}

// Each cell's line has its own dash pattern as well as its own colour and marker, so
// lines on top of each other still tell apart; the SVG draws them so.
func TestChartSeriesDistinctDashes(t *testing.T) {
	const n = 6
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if slices.Equal(seriesLine(i).Dashes, seriesLine(j).Dashes) {
				t.Errorf("series %d and %d share the dash pattern %v", i, j, seriesLine(i).Dashes)
			}
			if fmt.Sprintf("%T", plotutil.Shape(i)) == fmt.Sprintf("%T", plotutil.Shape(j)) {
				t.Errorf("series %d and %d share the marker shape %T", i, j, plotutil.Shape(i))
			}
		}
	}
	f := latencyFigure([]ledger.Row{ledgertest.SampleRow("a", 1), ledgertest.SampleRow("a", 4), ledgertest.SampleRow("b", 1), ledgertest.SampleRow("b", 4)})
	svg, err := f.render("svg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "stroke-dasharray") {
		t.Error("the second cell's line is drawn solid in the SVG, as the first")
	}
}

// Points on one spot of the throughput chart (two cells, or two levels, measuring the
// same) get one label naming each load once, not labels printed over each other.
func TestChartLabelsOnOneSpotMerge(t *testing.T) {
	points := plotter.XYs{{X: 0.1, Y: 50}, {X: 0.1, Y: 50}, {X: 0.1005, Y: 50.2}, {X: 0.4, Y: 90}}
	got := mergeLabels(points, []string{"c1", "c1", "c4", "c8"})
	if len(got.XYs) != 2 || !slices.Equal(got.Labels, []string{" c1, c4", " c8"}) || got.XYs[0] != points[0] {
		t.Fatalf("labels %q at %v, want \" c1, c4\" at the first point and \" c8\"", got.Labels, got.XYs)
	}
}

// Charts builds the report's figures from its rows, without writing them (WriteCharts
// writes them; tests read the SVG): latency
// against load with p50–p99 bands, throughput against latency, VRAM over time per GPU
// and SLO attainment. A figure with no measured point is left out.
func Charts(rows []ledger.Row, vram []VRAMSeries) ([]Chart, error) {
	return chartsOf(figures(rows, vram))
}

// The plan line appears when the environment names the plan's path or its hash, either
// one alone, and not when it names neither.
func TestMarkdownPlanLine(t *testing.T) {
	for _, c := range []struct {
		path, hash, want string
	}{
		{"plans/qwen.hcl", "sha256:abc123", "Plan `plans/qwen.hcl` (sha256:abc123), planrun v0.1.0.\n\n"},
		{"plans/qwen.hcl", "", "Plan `plans/qwen.hcl` (), planrun v0.1.0.\n\n"},
		{"", "sha256:abc123", "Plan `` (sha256:abc123), planrun v0.1.0.\n\n"},
		{"", "", ""},
	} {
		var b bytes.Buffer
		env := ledger.Environment{PlanPath: c.path, PlanHash: c.hash, PlanrunVersion: "v0.1.0"}
		if err := WriteMarkdown(&b, Report{Title: "t", Env: env}); err != nil {
			t.Fatal(err)
		}
		rest := strings.TrimPrefix(b.String(), "# t\n\n")
		line, _, _ := strings.Cut(rest, english.none)
		if line != c.want {
			t.Errorf("path %q, hash %q: before the body %q, want %q", c.path, c.hash, line, c.want)
		}
	}
}

// A report without rows says so and has no results, charts, seed tables or details;
// the formulas and the environment are still there.
func TestMarkdownWithoutRows(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, Report{}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.HasPrefix(got, "# planrun results\n\nNo results yet.\n\n## How the figures are measured\n\n") {
		t.Errorf("report without rows starts wrong:\n%s", got)
	}
	for _, absent := range []string{"## Results", "## Charts", "### " + english.single, "## Details"} {
		if strings.Contains(got, absent) {
			t.Errorf("report without rows has %q:\n%s", absent, got)
		}
	}
	if !strings.Contains(got, "## Environment\n\n") {
		t.Errorf("report without rows lacks the environment:\n%s", got)
	}
}

// The seed's tables give each of single-request and concurrent rows its own heading,
// and no heading to a part without rows.
func TestMarkdownSeedTablesOnlyPartsWithRows(t *testing.T) {
	for _, c := range []struct {
		conc        int
		has, hasNot string
	}{{1, english.single, english.concurrent}, {4, english.concurrent, english.single}} {
		var b bytes.Buffer
		if err := WriteMarkdown(&b, Report{Rows: []ledger.Row{ledgertest.SampleRow("c", c.conc)}}); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if !strings.Contains(got, "### "+c.has+"\n\n") || strings.Contains(got, "### "+c.hasNot+"\n\n") {
			t.Errorf("concurrency %d: want heading %q and not %q:\n%s", c.conc, c.has, c.hasNot, got)
		}
	}
}

// A figure with an interval shows it as a relative half-width, "0.201 ±0.5%"; one its
// requests could not bound is marked, and a legend under the table says what both mean.
// A row from before intervals shows the bare figure.
func TestMarkdownShowsIntervals(t *testing.T) {
	r := ledgertest.SampleRow("c1", 4)
	r.TTFT.P50, r.TTFT.P99 = 0.201, 0.349
	u := stats.Unbounded(368)
	r.TTFT.CI = &stats.DistCI{Confidence: 0.95, P50: stats.Interval{Lo: 0.200, Hi: 0.202}, P90: u, P95: u, P99: u, Mean: u}
	r.CI.Confidence = 0.95
	old := ledgertest.SampleRow("c2", 4)
	var b strings.Builder
	headlineTable(&b, english, []ledger.Row{r, old})
	md := b.String()
	for _, want := range []string{"| 0.201 ±0.5% / 0.349† ", "± is the half-width of the figure's 95% confidence interval",
		"†: too few requests (or, for tok/s, runs) to bound it at 95%"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(md, "| c2 | ") || strings.Count(md, "±0.5%") != 1 {
		t.Errorf("the row without intervals shows one:\n%s", md)
	}
	var zh strings.Builder
	headlineTable(&zh, chinese, []ledger.Row{r})
	if !strings.Contains(zh.String(), "± 为该指标 95% 置信区间的半宽") || !strings.Contains(zh.String(), "†：请求") {
		t.Errorf("the Chinese report's legend:\n%s", zh.String())
	}
}

// The latency chart draws each point's confidence interval as an error bar where its
// row has one: the same rows with intervals draw more strokes than without.
func TestLatencyChartDrawsIntervals(t *testing.T) {
	svg := func(rows []ledger.Row) []byte {
		dir := t.TempDir()
		charts, err := WriteCharts(dir, rows, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range charts {
			if c.File == LatencyChartFile {
				data, err := os.ReadFile(filepath.Join(dir, c.File))
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
		}
		t.Fatalf("no latency chart among %v", charts)
		return nil
	}
	bare := reportRows()
	with := reportRows()
	u := stats.Unbounded(368)
	for i := range with {
		r := &with[i]
		r.CI.Confidence = 0.95
		r.TTFT.CI = &stats.DistCI{Confidence: 0.95, P50: stats.Interval{Lo: 0.9 * r.TTFT.P50, Hi: 1.1 * r.TTFT.P50}, P90: u, P95: u, P99: u, Mean: u}
	}
	a, b := bytes.Count(svg(bare), []byte("<path")), bytes.Count(svg(with), []byte("<path"))
	t.Logf("latency chart: %d paths without intervals, %d with", a, b)
	// Each bounded point adds its bar and two caps.
	if b < a+3 {
		t.Errorf("latency chart: %d paths with intervals, %d without: want the error bars", b, a)
	}
	if !bytes.Contains(svg(with), []byte("bars its confidence interval")) {
		t.Error("the chart's title does not say what the bars are")
	}
}

// A row's notes are listed one by one, a note's own "; " inside its parenthesis kept; a
// note every row has is said once, under "Every row", and cited on none.
func TestMarkdownNotesSplitAndShared(t *testing.T) {
	a, b := ledgertest.SampleRow("m/a", 1), ledgertest.SampleRow("m/b", 1)
	a.Model, b.Model = "a", "b"
	a.Notes = "no interval for tok/s from 2 runs; memory 0.169 GB (RSS, 2 processes; PSS beside it) is +7%"
	b.Notes = "no interval for tok/s from 2 runs"
	a.Failed, b.Failed = 0, 0
	var md strings.Builder
	seedTables(&md, english, []ledger.Row{a, b})
	got := md.String()
	for _, want := range []string{"Every row:\n\n- no interval for tok/s from 2 runs\n",
		"1. memory 0.169 GB (RSS, 2 processes; PSS beside it) is +7% (a c1)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "[1]") != 1 || strings.Contains(got, "[2]") {
		t.Errorf("want one marker, on a's row only:\n%s", got)
	}
	for in, want := range map[string][]string{
		"x; y":                     {"x", "y"},
		"x (a; b); y":              {"x (a; b)", "y"},
		"x (a (b; c); d)":          {"x (a (b; c); d)"},
		"unbalanced ); z":          {"unbalanced )", "z"},
		"short: x; and late: y; z": {"short: x; and late: y", "z"},
	} {
		if got := splitNotes(in); !slices.Equal(got, want) {
			t.Errorf("splitNotes(%q) = %q, want %q", in, got, want)
		}
	}
}
