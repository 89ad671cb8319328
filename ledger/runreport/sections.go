package runreport

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/stats"
)

// The sections both report.md and report.html show, as plain cells and lines, so the
// two formats cannot disagree on a figure or a formula.

// headlineHead is the compact table a PR reader sees first.
var headlineHead = []string{"Cell", "Workload", "Load", "TTFT p50/p99 (s)", "TPOT p50/p99 (ms)", "tok/s",
	"Memory (GB)", "Verdict"}

// note is a caveat shown once under the headline table, with the rows it applies to.
type note struct {
	Text string
	Rows []string // "cell load"
}

// headline returns the headline table's rows and the notes they refer to: a note that
// several rows share is listed once, and each row's verdict cites it as [n].
func headline(rows []ledger.Row) (body [][]string, notes []note) {
	index := map[string]int{}
	names := ledger.CellNames(rows)
	for _, r := range rows {
		verdict := rowVerdict(r)
		mem, why := memoryNote(r)
		cav := caveats(r)
		if why != "" {
			cav = append(cav, why)
		}
		for _, text := range cav {
			i, ok := index[text]
			if !ok {
				i = len(notes)
				index[text] = i
				notes = append(notes, note{Text: text})
			}
			notes[i].Rows = append(notes[i].Rows, names[r.CellID]+" "+loadLabel(r))
			verdict += fmt.Sprintf(" [%d]", i+1)
		}
		body = append(body, []string{names[r.CellID], mdtable.Dash(r.Workload), concurrency(r),
			withInterval(r, "ttft_p50_s", r.TTFT.P50, 1, 3) + " / " + withInterval(r, "ttft_p99_s", r.TTFT.P99, 1, 3) + prefixShare(r),
			withInterval(r, "tpot_p50_ms", r.TPOT.P50, 1000, 1) + " / " + withInterval(r, "tpot_p99_ms", r.TPOT.P99, 1000, 1),
			throughputCell(r), mem, verdict})
	}
	return body, notes
}

// rowVerdict is what the row concluded: its status when not ok, its goal, and its
// reference verdict; "ok" when there is nothing else to say.
func rowVerdict(r ledger.Row) string {
	var v []string
	if r.Status != "" && r.Status != ledger.StatusOK {
		v = append(v, strings.ToUpper(r.Status))
	}
	if r.Goal != "" {
		v = append(v, "goal "+r.Goal)
	}
	if r.Fidelity != "" && r.Fidelity != ledger.FidelityOK {
		v = append(v, "load "+FidelityMark(r))
	}
	if r.Verdict != "" {
		v = append(v, fmt.Sprintf("%s: %s", r.Reference, r.Verdict))
	}
	if len(v) == 0 {
		return ledger.StatusOK
	}
	return strings.Join(v, "; ")
}

func concurrency(r ledger.Row) string {
	switch {
	case r.RequestRate > 0:
		return fmt.Sprintf("%d (open loop %s req/s)", r.Concurrency, ledger.FormatFloat(r.RequestRate))
	case replayed(r) && r.Concurrency == 0:
		return "trace replay"
	case replayed(r):
		return fmt.Sprintf("trace replay, ≤ %d in flight", r.Concurrency)
	}
	return fmt.Sprint(r.Concurrency)
}

// replayed says whether the row is a trace replay: paced requests (a send lag) without
// an open-loop rate.
func replayed(r ledger.Row) bool { return r.RequestRate == 0 && r.SendLag.N > 0 }

// caveats are what a reader must know before trusting the row's figures, beyond its
// verdict.
func caveats(r ledger.Row) []string {
	var n []string
	if r.Notes != "" {
		// A row's notes are joined by "; " (apply's buildRow): each is its own note, so
		// one that many rows share is listed once.
		n = append(n, splitNotes(r.Notes)...)
	}
	if r.Failed > 0 {
		n = append(n, fmt.Sprintf("%d/%d failed (%s)", r.Failed, r.Requests, ledger.FormatFailures(r.Failures)))
	}
	if r.Stability == "noisy" || r.Stability == "unstable" {
		n = append(n, fmt.Sprintf("%s: %s spread ±%s%% — %s", r.Stability, StabilityFigureName(r), mdtable.Num(r.StabilitySpread, 100, 0), StabilityAdvice(r)))
	}
	if r.TokenSource == "chunks" || r.TokenSource == "mixed" {
		n = append(n, "tokens counted from "+r.TokenSource)
	}
	if r.EarlyStops > 0 {
		n = append(n, fmt.Sprintf("%d of %d requests stopped before max_tokens — %s", r.EarlyStops, r.Requests, EarlyStopHint))
	}
	return n
}

// splitNotes cuts a row's notes where apply joined them, at "; " outside parentheses: a
// note may hold "; " inside its own parenthesis ("memory 0.169 GB (RSS, 2 processes; PSS
// beside it)"), which stays one note, as does one whose next clause begins "and " (a
// fidelity verdict's "client-bound: …; and late: …").
func splitNotes(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ';':
			if depth == 0 && strings.HasPrefix(s[i:], "; ") && !strings.HasPrefix(s[i:], "; and ") {
				out = append(out, s[start:i])
				start = i + 2
			}
		}
	}
	return append(out, s[start:])
}

// StabilityHint explains a noisy or unstable row in one line, where the verdict appears.
const StabilityHint = "the runs' median TTFT, median TPOT or throughput differ by more than 10% (unstable: 30%); one run is not " +
	"typical: rerun on a quieter machine or with more repeat_runs before comparing"

// StabilityAdvice is the advice on a noisy or unstable row: StabilityHint, or where the
// row was contended (other processes took the server's cores during its window) that,
// with the share they took, which is the first thing to look at.
func StabilityAdvice(r ledger.Row) string {
	if r.Contention == ledger.ContentionContended {
		return fmt.Sprintf(ContendedHint, r.NeighbourCPUPct)
	}
	return StabilityHint
}

// ContendedHint is StabilityAdvice on a contended row, with the neighbours' share in %.
const ContendedHint = "other processes used %.0f%% of the server's cores during the window (contended): check the " +
	"background processes first, or pin them to other cores, then rerun"

// StabilityFigureName is how the report names the figure a row's stability verdict is
// on: TTFT for a ledger that judged no other.
func StabilityFigureName(r ledger.Row) string {
	switch r.StabilityFigure {
	case "", "ttft":
		return "TTFT"
	case "throughput":
		return "throughput"
	}
	return strings.ToUpper(r.StabilityFigure)
}

// EarlyStopHint explains early stops in one line, where they appear.
const EarlyStopHint = "the server ended them (end of sequence) before the length asked, so their TPOT and " +
	"throughput cover fewer tokens; force_max_tokens, on servers that honour it, keeps lengths equal"

// detailHead and detailCells are the table of every figure, one row per level.
var detailHead = []string{"Cell", "Conc.", "Runs", "OK/Req", "TTFT p50/p90/p99 (s)", "TPOT p50/p90/p99 (ms)",
	"ITL p50/p99 (ms)", "E2E p50/p99 (s)", "tok/s", "req/s", "Decode p50 (tok/s)", "Failures",
	"Tokens (source, tok/chunk)", "Prompt tokens (asked → got)", "Early stops",
	"VRAM base/peak/proc (GB)", "VRAM est./server (GB)", "Client CPU % / lag p99 (ms)", "Stability / fidelity", "Reference"}

func detailCells(r ledger.Row) []string {
	return []string{r.CellID, concurrency(r), fmt.Sprint(r.Runs), fmt.Sprintf("%d/%d", r.Succeeded, r.Requests),
		tri(r.TTFT.P50, r.TTFT.P90, r.TTFT.P99, 1, 3) + prefixShare(r),
		tri(r.TPOT.P50, r.TPOT.P90, r.TPOT.P99, 1000, 1),
		mdtable.Num(r.ITL.P50, 1000, 1) + " / " + mdtable.Num(r.ITL.P99, 1000, 1),
		mdtable.Num(r.E2E.P50, 1, 2) + " / " + mdtable.Num(r.E2E.P99, 1, 2),
		throughputCell(r), mdtable.Num(r.RequestsPerSec, 1, 3), mdtable.Num(r.DecodeRate.P50, 1, 1),
		mdtable.Dash(ledger.FormatFailures(r.Failures)),
		fmt.Sprintf("%d (%s, %s)", r.OutputTokens, mdtable.Dash(r.TokenSource), mdtable.Num(r.TokensPerChunk, 1, 2)),
		fmt.Sprintf("%d → %s", r.PromptTokensRequested, mdtable.Num(r.PromptTokensActual, 1, 1)),
		fmt.Sprint(r.EarlyStops),
		tri(r.VRAMBaselineGB, r.VRAMPeakGB, r.VRAMProcessGB, 1, 2),
		mdtable.Num(r.VRAMEstimateGB, 1, 2) + " / " + mdtable.Num(r.ServerVRAMGB, 1, 2),
		mdtable.Num(r.ClientCPUPct, 1, 0) + " / " + mdtable.Num(r.ClientLagP99Ms, 1, 2),
		stability(r) + " / " + FidelityMark(r) + sendLag(r), mdtable.Dash(strings.TrimSpace(r.Reference + " " + r.Verdict))}
}

// sendLag is, for a paced level (open loop, trace replay), how late its sends were
// against the schedule, beside its fidelity: "" for a closed loop.
func sendLag(r ledger.Row) string {
	if math.IsNaN(r.SendLag.P99) {
		return ""
	}
	return fmt.Sprintf(" (send lag p99 %s ms, max %s ms)", mdtable.Num(r.SendLag.P99, 1000, 2), mdtable.Num(r.SendLag.Max, 1000, 2))
}

// FidelityMark is the row's fidelity in a few characters, as reports and the terminal
// show it: "ok", "short −12%", "client-bound", "late 27.4 ms" (the send lag or
// turnaround p99 it was judged on); "—" when it was not judged.
func FidelityMark(r ledger.Row) string {
	switch {
	case r.Fidelity == "":
		return "—"
	case r.Fidelity == ledger.FidelityShort && !math.IsNaN(r.FidelityShortfallPct):
		return fmt.Sprintf("short −%s%%", mdtable.Num(r.FidelityShortfallPct, 1, 0))
	case r.Fidelity == ledger.FidelityLate:
		if _, p99 := r.LateBy(); !math.IsNaN(p99) {
			return "late " + mdtable.Num(p99, 1000, 1) + " ms"
		}
	}
	return r.Fidelity
}

// prefixShare is the row's shared prefix share as TTFT's cells show it beside TTFT
// (prefix caching lowers TTFT); "" when no prompt token was a shared prefix.
func prefixShare(r ledger.Row) string {
	if !(r.SharedPrefixPct > 0) {
		return ""
	}
	return " · prefix " + mdtable.Num(r.SharedPrefixPct, 1, 0) + "%"
}

// sharedPrefixFormula defines shared_prefix_pct under the tables of rows that have one.
const sharedPrefixFormula = "**Shared prefix** = Σ shared prefix tokens / Σ prompt tokens (the server's count), over successful requests: a request's shared prefix tokens are its prefix group's tokens once an earlier request of the same run sent that group (the first of each group counts 0), or its leading Mooncake hash blocks (`block_size` tokens each, the last cut to the input length) as far as earlier requests of the run sent them, a block counting only behind blocks that all matched, as a prefix cache reuses them. Shown beside TTFT as `prefix N%`: a prefix-caching server turns it into shorter prefill."

// fidelityFormula defines the fidelity verdict under the tables.
const fidelityFormula = "**Fidelity** — the load delivered against the load asked. Closed loop: the time-weighted mean of requests in flight (start stamp to end) from the start of the concurrency-th request to the start of the last one, against the concurrency (the most in flight when there are no more requests than slots); open loop and replay: (n − 1) / (last start − first start) against the schedule's own (n − 1) / (last due − first due). Shortfall = 1 − delivered / asked: above the workload's `fidelity_tolerance_pct` (default 5%) it is short; client-bound when the client itself was the limit (CPU above 90% of its cores, scheduling lag p50 above 1% of the mean TPOT, or a shortfall with no full cap on requests in flight to blame); late when the load was delivered but sent late: an open loop's or replay's send lag p99 (actual − scheduled send time), or a closed loop's turnaround p99 (a slot's body end to its next start), above the workload's `fidelity_lag_ms` (default 1 ms), shown as `late` and that p99; ok otherwise. A late level decides nothing in a capacity search."

func stability(r ledger.Row) string {
	if r.Stability == "" {
		return "—"
	}
	s := r.Stability
	if !math.IsNaN(r.StabilitySpread) {
		s = fmt.Sprintf("%s (%s ±%s%%)", r.Stability, StabilityFigureName(r), mdtable.Num(r.StabilitySpread, 100, 1))
	}
	if r.Contention == ledger.ContentionContended {
		s += fmt.Sprintf(" · contended %s%%", mdtable.Num(r.NeighbourCPUPct, 1, 0))
	}
	return s
}

// How ITL percentiles are taken, from the stats package's constants.
var (
	itlExactNote = strconv.FormatInt(stats.ITLExactGaps, 10)
	itlErrorNote = strconv.FormatFloat(stats.ITLRelativeError*100, 'g', -1, 64) + "%"
)

// formulaLines are the four metrics exactly as DESIGN.md defines them, plus how the
// figures were aggregated and which VRAM figure the rows carry: one Markdown line each
// (bold and code spans only, which the HTML report converts).
func formulaLines(rows []ledger.Row) []string {
	lines := []string{
		"**TTFT** — from the moment the request starts being written to the arrival of the first chunk that carries generated content (a role-only chunk, an empty delta, an SSE comment or keep-alive is not a token).",
		"**E2E** — request start to the last content chunk (or end of stream).",
		"**Output tokens** — the server's own count (`usage.completion_tokens` with `stream_options.include_usage`; Ollama `eval_count`); only when the server gives none, content chunks are counted (token source `chunks`). Tokens per chunk = Σ output tokens / Σ content chunks; above 1 the server coalesces tokens.",
		"**TPOT** = (E2E − TTFT) / (output tokens − 1), for requests with more than one output token (vLLM's definition, comparable with `vllm bench serve`). **ITL** (gaps between consecutive content chunks) is a different figure, reported apart.",
		"**Throughput** = Σ output tokens of successful requests / wall time of the measured window (first request start to last request end); the table shows the median across repeat runs, as for requests/s. Decode rate = (output tokens − 1) / (E2E − TTFT) per request.",
		"**VRAM** — GPU memory in use while requests run, sampled via NVML during the measured window: baseline before load, peak during load (the table's figure), and per server process where NVML attributes it. NVML's v1 \"used\" includes driver-reserved memory; v2 separates it.",
		"**Memory without a GPU** — the RSS of the server's process tree (a server planrun started), sampled during the measured window: baseline before load, peak during load (the table's figure, marked RSS), with PSS from smaps_rollup beside it and the seed's estimate (params × bits per weight + KV cache + overhead) with the difference in %.",
		"Percentiles (p50/p90/p99) are over every successful request of every measured run, by linear interpolation between closest ranks (numpy's default). Warm-up requests are discarded; failed requests are counted by class, not timed.",
		"ITL percentiles are exact up to " + itlExactNote + " gaps per run, and the per-request figures' up to " + itlExactNote + " requests per run; beyond that they come from a DDSketch with ≤ " + itlErrorNote + " relative error (count, mean, min and max stay exact).",
		"**Stability** — spread = max |run figure − m| / m, m = median of the runs' figures, for each of median TTFT, median TPOT and throughput: ≤ 10% stable, > 30% unstable, otherwise noisy; single-run when fewer than two runs; the row shows the worst figure.",
		fidelityFormula,
	}
	if slices.ContainsFunc(rows, func(r ledger.Row) bool { return r.SharedPrefixPct > 0 }) {
		lines = append(lines, sharedPrefixFormula)
	}
	if slices.ContainsFunc(rows, func(r ledger.Row) bool { return !math.IsNaN(r.SteadyOutputTokS) }) {
		lines = append(lines, steadyFormula)
	}
	seen := map[string]bool{}
	var sources []string
	for _, r := range rows {
		if r.VRAMSource != "" && !seen[r.VRAMSource] {
			seen[r.VRAMSource] = true
			sources = append(sources, r.VRAMSource)
		}
	}
	if len(sources) > 0 {
		lines = append(lines, fmt.Sprintf("VRAM figures in these rows: %s.", strings.Join(sources, "; ")))
	}
	return lines
}

// envItems are the environment's facts as (name, value), empty values left out.
func envItems(e ledger.Environment) [][2]string {
	var items [][2]string
	item := func(k, v string) {
		if v != "" {
			items = append(items, [2]string{k, v})
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
	for _, k := range slices.Sorted(maps.Keys(e.ServerVersions)) {
		item("Server "+k, e.ServerVersions[k])
	}
	for _, k := range slices.Sorted(maps.Keys(e.ServerBuilds)) {
		item("Engine build "+k, e.ServerBuilds[k])
	}
	for _, k := range slices.Sorted(maps.Keys(e.ModelDigests)) {
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
	return items
}

func tri(a, b, c, scale float64, decimals int) string {
	return mdtable.Num(a, scale, decimals) + " / " + mdtable.Num(b, scale, decimals) + " / " + mdtable.Num(c, scale, decimals)
}

// percentileCells is the percentile table: each latency distribution at pcts (default
// stats.Percentiles) plus its standard deviation, one column per figure and percentile.
func percentileCells(rows []ledger.Row, pcts []int) (head []string, body [][]string) {
	if len(pcts) == 0 {
		pcts = stats.Percentiles
	}
	head = []string{"Cell", "Conc."}
	for _, d := range ledger.LatencyDists {
		name := strings.ToUpper(d.Prefix)
		for _, p := range pcts {
			head = append(head, fmt.Sprintf("%s p%d (%s)", name, p, d.Unit))
		}
		head = append(head, fmt.Sprintf("%s std (%s)", name, d.Unit))
	}
	for i := range rows {
		cells := []string{rows[i].CellID, concurrency(rows[i])}
		for _, d := range ledger.LatencyDists {
			dist := d.Get(&rows[i])
			for _, p := range pcts {
				v, _ := dist.At(p)
				cells = append(cells, mdtable.Num(v, d.Scale, d.Decimals))
			}
			cells = append(cells, mdtable.Num(dist.Std, d.Scale, d.Decimals))
		}
		body = append(body, cells)
	}
	return head, body
}

// sloNote says how SLO attainment and goodput are counted (a Markdown line: code spans
// only, which the HTML report converts).
const sloNote = "A request is good when it succeeded and met every limit of its workload's `slo` (vLLM's `--goodput` rule; its ITL is its largest gap between content chunks). Attainment = good / all requests; goodput = good requests/s and their output tokens/s (median across runs)."

// sloCells is the SLO table: attainment and goodput of the rows whose workload has an
// slo; no body when none has.
func sloCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Attainment (%)", "Goodput (req/s)", "Goodput (tok/s)", "tok/s"}
	for _, r := range rows {
		if !math.IsNaN(r.SLOAttainmentPct) {
			body = append(body, []string{r.CellID, concurrency(r), mdtable.Num(r.SLOAttainmentPct, 1, 1),
				mdtable.Num(r.GoodputReqS, 1, 3), mdtable.Num(r.GoodputTokS, 1, 1), mdtable.Num(r.OutputTokS, 1, 1)})
		}
	}
	return head, body
}

// unboundedMark follows a figure whose sample could not bound it (intervalLegend says so).
const unboundedMark = "†"

// withInterval writes a figure (·scale, to decimals) with its interval as a relative
// half-width, "0.201 ±0.4%", from the row's interval on the ledger figure name; with
// unboundedMark where the row has intervals but this one is unbounded; bare for a row
// from before intervals.
func withInterval(r ledger.Row, name string, v, scale float64, decimals int) string {
	s := mdtable.Num(v, scale, decimals)
	if math.IsNaN(v) {
		return s
	}
	iv, _, ok := r.Interval(name)
	if !ok {
		return s
	}
	if hw := iv.HalfWidth(v * scale); !math.IsNaN(hw) {
		return s + fmt.Sprintf(" ±%.1f%%", 100*hw)
	}
	if strings.HasSuffix(name, "_tok_s") {
		return s // a rate needs 6 runs: the row's notes say so, a mark on every cell would not help
	}
	return s + unboundedMark
}

// intervalLegend is the line under a table whose figure cells (the columns cols) hold
// unboundedMark or intervals; "" for one with neither.
func intervalLegend(lb labels, body [][]string, cols []int, conf float64) string {
	var mark, pm bool
	for _, row := range body {
		for _, i := range cols {
			mark = mark || strings.Contains(row[i], unboundedMark)
			pm = pm || strings.Contains(row[i], "±")
		}
	}
	if !mark && !pm {
		return ""
	}
	s := fmt.Sprintf(lb.interval, 100*conf)
	if mark {
		s += fmt.Sprintf(lb.unbounded, unboundedMark, 100*conf)
	}
	return s + " ([how sure is a figure](https://github.com/planrun/planrun/blob/main/docs/uncertainty.md)).\n\n"
}

// rowsConfidence is the confidence of the rows' intervals (the first row with one's;
// the default when none has).
func rowsConfidence(rows []ledger.Row) float64 {
	for _, r := range rows {
		if c := r.CI.Confidence; c > 0 {
			return c
		}
	}
	return stats.DefaultConfidence
}
