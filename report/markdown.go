package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/planrun/planrun/stats"
)

// Report is everything the Markdown report shows. WriteMarkdown is a pure function of
// it, so the executor can re-render the whole file after every cell.
type Report struct {
	Title string
	// Language "zh" uses the seed's Chinese table headers; anything else is English.
	Language string
	Rows     []Row
	Env      Environment
	// Charts are the SVG files written beside the report (WriteCharts), linked by path.
	Charts []Chart
	// Capacities are the answers of the cells' capacity searches.
	Capacities []Capacity
	// Percentiles are the percentiles the percentile table shows, out of
	// stats.Percentiles; nil shows them all.
	Percentiles []int
}

// labels are the words of the report in one language.
type labels struct {
	seed                                  []string
	single, concurrent, details, formulas string
	env, charts, none                     string
}

var english = labels{
	seed: []string{"Model", "Quant", "Tool", "Hardware", "TTFT(s)", "TPOT(ms)", "Throughput(tok/s)",
		"VRAM(GB)", "Concurrency", "Notes"},
	single:     "Single request (concurrency 1)",
	concurrent: "Concurrent",
	details:    "Details",
	formulas:   "How the figures are measured",
	env:        "Environment",
	charts:     "Charts",
	none:       "No results yet.",
}

var chinese = labels{
	seed:       []string{"模型", "量化", "工具", "硬件", "TTFT(s)", "TPOT(ms)", "吞吐(tok/s)", "显存(GB)", "并发", "备注"},
	single:     "单请求（并发 1）",
	concurrent: "并发",
	details:    "明细",
	formulas:   "指标定义",
	env:        "环境",
	charts:     "图表",
	none:       "暂无结果。",
}

// WriteMarkdown renders the report: the seed's table with single-request rows apart
// from concurrent ones, the metric formulas right under it, the detail table, the
// environment and the chart links.
func WriteMarkdown(w io.Writer, r Report) error {
	lb := english
	if r.Language == "zh" {
		lb = chinese
	}
	var b strings.Builder
	title := r.Title
	if title == "" {
		title = "planrun results"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if r.Env.PlanPath != "" || r.Env.PlanHash != "" {
		fmt.Fprintf(&b, "Plan `%s` (%s), planrun %s.\n\n", r.Env.PlanPath, r.Env.PlanHash, r.Env.PlanrunVersion)
	}

	var single, concurrent []Row
	for _, row := range r.Rows {
		if isSingle(row) {
			single = append(single, row)
		} else {
			concurrent = append(concurrent, row)
		}
	}
	if len(r.Rows) == 0 {
		fmt.Fprintf(&b, "%s\n\n", lb.none)
	}
	for _, part := range []struct {
		heading string
		rows    []Row
	}{{lb.single, single}, {lb.concurrent, concurrent}} {
		if len(part.rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", part.heading)
		seedTable(&b, lb, part.rows)
	}

	fmt.Fprintf(&b, "## %s\n\n", lb.formulas)
	formulas(&b, r.Rows)

	if len(r.Rows) > 0 {
		fmt.Fprintf(&b, "## %s\n\n", lb.details)
		detailTable(&b, r.Rows)
		percentileTable(&b, r.Rows, r.Percentiles)
		sloTable(&b, r.Rows)
	}
	capacityList(&b, r.Capacities)

	fmt.Fprintf(&b, "## %s\n\n", lb.env)
	environment(&b, r.Env)

	if len(r.Charts) > 0 {
		fmt.Fprintf(&b, "## %s\n\n", lb.charts)
		for _, c := range r.Charts {
			fmt.Fprintf(&b, "![%s](%s)\n\n", c.Title, c.File)
		}
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// isSingle: single-request rows (one request in flight, closed loop) are kept apart
// from concurrent and open-loop rows, as the seed demands.
func isSingle(r Row) bool { return r.Concurrency == 1 && !(r.RequestRate > 0) }

func seedTable(b *strings.Builder, lb labels, rows []Row) {
	table(b, lb.seed, func(add func(...string)) {
		for _, r := range rows {
			add(r.Model, r.Quantization, r.Tool, r.Hardware,
				num(r.TTFT.P50, 1, 3), num(r.TPOT.P50, 1000, 1), num(r.OutputTokS, 1, 1),
				num(r.VRAMPeakGB, 1, 2), concurrency(r), seedNotes(r))
		}
	})
}

func concurrency(r Row) string {
	if r.RequestRate > 0 {
		return fmt.Sprintf("%d (open loop %s req/s)", r.Concurrency, formatFloat(r.RequestRate))
	}
	return fmt.Sprint(r.Concurrency)
}

// seedNotes says what a reader must know before trusting the row's figures.
func seedNotes(r Row) string {
	var n []string
	if r.Notes != "" {
		n = append(n, r.Notes)
	}
	if r.Status != "" && r.Status != StatusOK {
		n = append(n, strings.ToUpper(r.Status))
	}
	if r.Failed > 0 {
		n = append(n, fmt.Sprintf("%d/%d failed (%s)", r.Failed, r.Requests, formatFailures(r.Failures)))
	}
	if r.Stability == "noisy" || r.Stability == "unstable" {
		n = append(n, fmt.Sprintf("%s: TTFT spread ±%s%%", r.Stability, num(r.StabilitySpread, 100, 0)))
	}
	if r.Goal != "" {
		n = append(n, "goal "+r.Goal)
	}
	if r.Verdict != "" {
		n = append(n, fmt.Sprintf("%s: %s", r.Reference, r.Verdict))
	}
	if r.TokenSource == "chunks" || r.TokenSource == "mixed" {
		n = append(n, "tokens counted from "+r.TokenSource)
	}
	if r.EarlyStops > 0 {
		n = append(n, fmt.Sprintf("%d of %d requests stopped before max_tokens", r.EarlyStops, r.Requests))
	}
	return strings.Join(n, "; ")
}

func detailTable(b *strings.Builder, rows []Row) {
	head := []string{"Cell", "Conc.", "Runs", "OK/Req", "TTFT p50/p90/p99 (s)", "TPOT p50/p90/p99 (ms)",
		"ITL p50/p99 (ms)", "E2E p50/p99 (s)", "tok/s", "req/s", "Decode p50 (tok/s)", "Failures",
		"Tokens (source, tok/chunk)", "Prompt tokens (asked → got)", "Early stops",
		"VRAM base/peak/proc (GB)", "VRAM est./server (GB)", "Client CPU % / lag p99 (ms)", "Stability", "Reference"}
	table(b, head, func(add func(...string)) {
		for _, r := range rows {
			add(r.CellID, concurrency(r), fmt.Sprint(r.Runs), fmt.Sprintf("%d/%d", r.Succeeded, r.Requests),
				tri(r.TTFT.P50, r.TTFT.P90, r.TTFT.P99, 1, 3),
				tri(r.TPOT.P50, r.TPOT.P90, r.TPOT.P99, 1000, 1),
				num(r.ITL.P50, 1000, 1)+" / "+num(r.ITL.P99, 1000, 1),
				num(r.E2E.P50, 1, 2)+" / "+num(r.E2E.P99, 1, 2),
				num(r.OutputTokS, 1, 1), num(r.RequestsPerSec, 1, 3), num(r.DecodeRate.P50, 1, 1),
				dash(formatFailures(r.Failures)),
				fmt.Sprintf("%d (%s, %s)", r.OutputTokens, dash(r.TokenSource), num(r.TokensPerChunk, 1, 2)),
				fmt.Sprintf("%d → %s", r.PromptTokensRequested, num(r.PromptTokensActual, 1, 1)),
				fmt.Sprint(r.EarlyStops),
				tri(r.VRAMBaselineGB, r.VRAMPeakGB, r.VRAMProcessGB, 1, 2),
				num(r.VRAMEstimateGB, 1, 2)+" / "+num(r.ServerVRAMGB, 1, 2),
				num(r.ClientCPUPct, 1, 0)+" / "+num(r.ClientLagP99Ms, 1, 2),
				stability(r), dash(strings.TrimSpace(r.Reference+" "+r.Verdict)))
		}
	})
}

func stability(r Row) string {
	if r.Stability == "" {
		return "—"
	}
	if math.IsNaN(r.StabilitySpread) {
		return r.Stability
	}
	return fmt.Sprintf("%s (±%s%%)", r.Stability, num(r.StabilitySpread, 100, 1))
}

// How ITL percentiles are taken, from the stats package's constants.
var (
	itlExactNote = strconv.FormatInt(stats.ITLExactGaps, 10)
	itlErrorNote = strconv.FormatFloat(stats.ITLRelativeError*100, 'g', -1, 64) + "%"
)

// formulas prints the four metrics exactly as DESIGN.md defines them, plus how the
// figures in the tables were aggregated and which VRAM figure the rows carry.
func formulas(b *strings.Builder, rows []Row) {
	b.WriteString(`- **TTFT** — from the moment the request starts being written to the arrival of the first chunk that carries generated content (a role-only chunk, an empty delta, an SSE comment or keep-alive is not a token).
- **E2E** — request start to the last content chunk (or end of stream).
- **Output tokens** — the server's own count (` + "`usage.completion_tokens`" + ` with ` + "`stream_options.include_usage`" + `; Ollama ` + "`eval_count`" + `); only when the server gives none, content chunks are counted (token source ` + "`chunks`" + `). Tokens per chunk = Σ output tokens / Σ content chunks; above 1 the server coalesces tokens.
- **TPOT** = (E2E − TTFT) / (output tokens − 1), for requests with more than one output token (vLLM's definition, comparable with ` + "`vllm bench serve`" + `). **ITL** (gaps between consecutive content chunks) is a different figure, reported apart.
- **Throughput** = Σ output tokens of successful requests / wall time of the measured window (first request start to last request end); the table shows the median across repeat runs, as for requests/s. Decode rate = (output tokens − 1) / (E2E − TTFT) per request.
- **VRAM** — GPU memory in use while requests run, sampled via NVML during the measured window: baseline before load, peak during load (the table's figure), and per server process where NVML attributes it. NVML's v1 "used" includes driver-reserved memory; v2 separates it.
- Percentiles (p50/p90/p99) are over every successful request of every measured run, by linear interpolation between closest ranks (numpy's default). Warm-up requests are discarded; failed requests are counted by class, not timed.
- ITL percentiles are exact up to ` + itlExactNote + ` gaps per run; beyond that they come from a DDSketch with ≤ ` + itlErrorNote + ` relative error (count, mean, min and max stay exact).
- **Stability** — spread = max |run median TTFT − m| / m, m = median of the run medians: ≤ 10% stable, > 30% unstable, otherwise noisy; single-run when fewer than two runs.
`)
	seen := map[string]bool{}
	var sources []string
	for _, r := range rows {
		if r.VRAMSource != "" && !seen[r.VRAMSource] {
			seen[r.VRAMSource] = true
			sources = append(sources, r.VRAMSource)
		}
	}
	if len(sources) > 0 {
		fmt.Fprintf(b, "- VRAM figures in these rows: %s.\n", strings.Join(sources, "; "))
	}
	b.WriteString("\n")
}

func environment(b *strings.Builder, e Environment) {
	item := func(k, v string) {
		if v != "" {
			fmt.Fprintf(b, "- %s: %s\n", k, v)
		}
	}
	item("Host", e.Host)
	item("OS", strings.TrimSpace(e.OS+"/"+e.Arch+" "+e.Kernel))
	cpu := e.CPU
	if e.CPUs > 0 {
		cpu = strings.TrimSpace(fmt.Sprintf("%s (%d logical CPUs)", e.CPU, e.CPUs))
	}
	item("CPU", cpu)
	gpus := strings.Join(e.GPUs, ", ")
	if gpus == "" {
		gpus = "none reported"
	}
	item("GPU", gpus)
	item("Driver", e.Driver)
	item("CUDA", e.CUDA)
	for _, k := range sortedKeys(e.ServerVersions) {
		item("Server "+k, e.ServerVersions[k])
	}
	for _, k := range sortedKeys(e.ModelDigests) {
		if _, ok := e.Models[k]; !ok {
			item("Model "+k, e.ModelDigests[k])
		}
	}
	modelKeys := make([]string, 0, len(e.Models))
	for k := range e.Models {
		modelKeys = append(modelKeys, k)
	}
	sort.Strings(modelKeys)
	for _, k := range modelKeys {
		item("Model "+k, e.Models[k].String())
	}
	item("planrun", e.PlanrunVersion)
	item("Plan", strings.TrimSpace(e.PlanPath+" "+e.PlanHash))
	b.WriteString("\n")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// table writes a Markdown table; cells have their pipes escaped.
func table(b *strings.Builder, head []string, body func(add func(...string))) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.ReplaceAll(oneLine(c), "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	row(head)
	b.WriteString("|" + strings.Repeat("---|", len(head)) + "\n")
	body(func(cells ...string) { row(cells) })
	b.WriteString("\n")
}

// num formats v·scale with the given decimals; "—" when not measured.
func num(v, scale float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.*f", decimals, v*scale)
}

func tri(a, b, c, scale float64, decimals int) string {
	return num(a, scale, decimals) + " / " + num(b, scale, decimals) + " / " + num(c, scale, decimals)
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
