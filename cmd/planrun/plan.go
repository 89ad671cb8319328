package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/plan"
)

func init() {
	register("plan", "list the cells a plan will run, with stable ids", runPlan)
}

type planArgs struct {
	planFlags
	JSON        bool
	SlurmScript string
	K8sManifest string
	Path        string
}

func runPlan(_ context.Context, env *Env, args []string) int {
	var a planArgs
	fs := newFlagSet(env, "plan", "PLAN", "List every cell apply would run (id, backend, model_id, quantization, hardware,\nworkload, concurrency levels, server, where it runs), when apply starts and stops each\nserver, and the totals. Sends no request.")
	a.bind(fs)
	fs.BoolVar(&a.JSON, "json", false, "print the cells as JSON")
	fs.StringVar(&a.SlurmScript, "slurm-script", "", "print the batch script(s) apply would submit for this hardware block's cells, for review")
	fs.StringVar(&a.K8sManifest, "k8s-manifest", "", "print the ConfigMap(s) and Job(s) apply would create for this hardware block's cells, as YAML, for review")
	if code, ok := parseArgs(fs, args, 1, &a.Path); !ok {
		return code
	}
	a.machine = a.JSON || a.SlurmScript != "" || a.K8sManifest != ""
	p, cells, code := a.load(env, a.Path)
	if code != exitOK {
		return code
	}
	if a.SlurmScript != "" {
		if err := writeSlurmScripts(env.Stdout, p, cells, a.planFlags, a.SlurmScript); err != nil {
			fmt.Fprintf(env.Stderr, "planrun plan: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	if a.K8sManifest != "" {
		if err := writeK8sManifests(env.Stdout, p, cells, a.K8sManifest); err != nil {
			fmt.Fprintf(env.Stderr, "planrun plan: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	sum := summarize(cells)
	if a.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(planJSON(p, cells, sum, serverSchedule(cells))); err != nil {
			fmt.Fprintf(env.Stderr, "planrun: %v\n", err)
			return exitError
		}
		return exitOK
	}
	printPlan(env.Stdout, cells, sum)
	return exitOK
}

// printPlan is plan's table of cells, its mixes, quality phases and server schedule,
// and the totals.
func printPlan(out io.Writer, cells []*plan.Cell, sum planSummary) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tBACKEND\tMODEL_ID\tQUANT\tHARDWARE\tWORKLOAD\tCONCURRENCY\tSERVER\tRUNS ON\tRATE/S")
	for _, c := range cells {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Backend.Addr, c.ModelID, cmp.Or(c.Quantization, "-"),
			cmp.Or(hardwareName(c), "-"), c.Workload.Name, concurrencyColumn(c.Workload), cmp.Or(serverName(c), "-"), runsOn(c),
			rates(c.Workload.RequestRates))
	}
	tw.Flush()
	printMixes(out, cells)
	printQuality(out, cells)
	if sched := serverSchedule(cells); len(sched) > 0 {
		fmt.Fprintln(out, "\nServers (one at a time; consecutive cells that name the same server reuse it):")
		for _, u := range sched {
			fmt.Fprintf(out, "  %s\n", u)
		}
	}
	levels := plural(sum.Levels, "concurrency level", "concurrency levels")
	if sum.OpenLoop {
		levels = plural(sum.Levels, "level", "levels") + " (concurrency × request rate)"
	}
	replays := ""
	if sum.Replays > 0 {
		replays = fmt.Sprintf(", plus the rows of %d %s, counted when apply reads the trace", sum.Replays, plural(sum.Replays, "trace replay", "trace replays"))
	}
	fmt.Fprintf(out, "\nPlan: %d %s, %d %s, %d measured %s%s.\n", sum.Cells, plural(sum.Cells, "cell", "cells"),
		sum.Levels, levels, sum.Requests, plural(sum.Requests, "request", "requests"), replays)
}

// printQuality lists the cells with a quality phase and what each is compared with.
func printQuality(w io.Writer, cells []*plan.Cell) {
	header := false
	for _, c := range cells {
		q := c.Quality
		if q == nil {
			continue
		}
		if !header {
			header = true
			fmt.Fprintln(w, "\nQuality (a phase of its own before the cell's levels, one request at a time, greedy):")
		}
		prompts := fmt.Sprintf("%d built-in prompts of %d words", q.Prompts, q.PromptWords)
		if q.Dataset != nil {
			prompts = fmt.Sprintf("%d prompts from dataset %s", q.Prompts, q.Dataset.Name)
		}
		against := "against " + c.QualityReference
		if c.QualityReference == c.ID {
			against = "the reference: gathers its continuations and reruns itself"
		}
		fmt.Fprintf(w, "  %s: %s; %s × %d tokens, top %d log-probabilities, method %s\n", c.ID, against, prompts, q.MaxTokens, q.TopLogProbs, q.Method)
	}
}

// printMixes lists each workload's model mix once: the names its requests go to and each
// one's share of them.
func printMixes(w io.Writer, cells []*plan.Cell) {
	seen := map[*plan.Workload]bool{}
	for _, c := range cells {
		wl := c.Workload
		if len(wl.Models) == 0 || seen[wl] {
			continue
		}
		if len(seen) == 0 {
			fmt.Fprintln(w, "\nModel mixes (each request goes to one name, drawn by weight from the workload's seed):")
		}
		seen[wl] = true
		fmt.Fprintf(w, "  %s: %s\n", wl.Name, mixShares(wl.Models))
	}
}

// mixShares is "a 50%, b 25%, c 25%": each name's share of the requests.
func mixShares(ms []plan.ModelWeight) string {
	parts := make([]string, len(ms))
	for i, pct := range sharePercents(ms) {
		parts[i] = fmt.Sprintf("%s %.4g%%", ms[i].Name, pct)
	}
	return strings.Join(parts, ", ")
}

// sharePercents are each name's share of a mix's requests: its weight / the sum, in %.
func sharePercents(ms []plan.ModelWeight) []float64 {
	total := 0.0
	for _, m := range ms {
		total += m.Weight
	}
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = 100 * m.Weight / total
	}
	return out
}

// concurrencyColumn is a workload's levels as the plan table shows them; a trace replay
// has no closed-loop level, only an optional cap on requests in flight.
func concurrencyColumn(w *plan.Workload) string {
	switch {
	case w.Replay != nil && w.Concurrency[0] == 0:
		return "replay"
	case w.Replay != nil:
		return "replay ≤" + mdtable.JoinInts(w.Concurrency)
	}
	return mdtable.JoinInts(w.Concurrency)
}

// planSummary is the total line: what apply would measure.
type planSummary struct {
	Cells int `json:"cells"`
	// Levels counts the levels apply runs: each concurrency, times each request rate.
	Levels   int  `json:"concurrency_levels"`
	Requests int  `json:"measured_requests"`
	OpenLoop bool `json:"open_loop,omitempty"` // some workload has request rates
	// Replays counts the cells that replay a whole trace window, whose rows (not in
	// Requests) are known only once apply reads the trace.
	Replays int `json:"trace_replays,omitempty"`
}

// summarize counts the levels as apply runs them (Workload.Levels) and measured
// requests as repeat runs × requests per run at each; warm-ups are not counted.
func summarize(cells []*plan.Cell) planSummary {
	s := planSummary{Cells: len(cells)}
	for _, c := range cells {
		unknown := c.Workload.Replay != nil && c.Workload.Requests == 0 // the window's rows
		if unknown {
			s.Replays++
		}
		for _, lvl := range c.Workload.Levels() {
			s.Levels++
			if !unknown {
				s.Requests += c.Workload.RepeatRuns * c.Workload.RequestsPerRun(lvl.Concurrency)
			}
			s.OpenLoop = s.OpenLoop || lvl.RequestRate > 0
		}
	}
	return s
}

// rates lists a workload's request rates, "-" for a closed loop.
func rates(rs []float64) string {
	if len(rs) == 0 {
		return "-"
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

type cellJSON struct {
	ID           string `json:"id"`
	Matrix       string `json:"matrix"`
	Backend      string `json:"backend"`
	URL          string `json:"url"`
	Model        string `json:"model"`
	ModelID      string `json:"model_id"`
	Quantization string `json:"quantization,omitempty"`
	Hardware     string `json:"hardware,omitempty"`
	Workload     string `json:"workload"`
	Concurrency  []int  `json:"concurrency"`
	WarmupRuns   int    `json:"warmup_runs"`
	RepeatRuns   int    `json:"repeat_runs"`
	// What each request asks for and how requests arrive: enough to tell two plans'
	// loads apart from the JSON alone.
	RequestsPerRun int       `json:"requests_per_run,omitempty"` // 0: one per concurrency slot
	RequestRates   []float64 `json:"request_rates,omitempty"`    // open loop, requests/s
	Arrival        string    `json:"arrival,omitempty"`
	PromptTokens   int       `json:"prompt_tokens"`
	MaxTokens      int       `json:"max_tokens"`
	ForceMaxTokens bool      `json:"force_max_tokens"`
	Temperature    *float64  `json:"temperature,omitempty"`
	Seed           *int64    `json:"seed,omitempty"`
	Server         string    `json:"server,omitempty"`
	Notes          string    `json:"notes,omitempty"`
	// Placement is local, host or the scheduler's name (slurm, kubernetes); RunsOn says it as the table does.
	Placement string `json:"placement"`
	RunsOn    string `json:"runs_on"`
	// PromptLength and OutputLength say how drawn lengths are drawn ("normal(...)",
	// "dataset"); absent for fixed ones (prompt_tokens and max_tokens say them).
	PromptLength string `json:"prompt_length,omitempty"`
	OutputLength string `json:"output_length,omitempty"`
	Dataset      string `json:"dataset,omitempty"`
	NoStream     bool   `json:"no_stream,omitempty"`
	// Models is the workload's model mix: each name and its share of the requests (%).
	Models map[string]float64 `json:"models,omitempty"`
}

// withLoad adds the workload's request shape and arrival settings.
func (j cellJSON) withLoad(w *plan.Workload) cellJSON {
	j.RequestsPerRun, j.RequestRates = w.Requests, w.RequestRates
	if len(w.RequestRates) > 0 {
		j.Arrival = w.Arrival
	}
	j.PromptTokens, j.MaxTokens, j.ForceMaxTokens = w.PromptTokens, w.MaxTokens, w.ForceMaxTokens
	j.Temperature, j.Seed = w.Temperature, w.Seed
	if w.PromptLength.Kind != dataset.LengthFixed {
		j.PromptLength = w.PromptLength.String()
	}
	if w.OutputLength.Kind != dataset.LengthFixed {
		j.OutputLength = w.OutputLength.String()
	}
	if w.Dataset != nil {
		j.Dataset = w.Dataset.Name
	}
	j.NoStream = !w.Stream
	for i, pct := range sharePercents(w.Models) {
		if j.Models == nil {
			j.Models = map[string]float64{}
		}
		j.Models[w.Models[i].Name] = pct
	}
	return j
}

func planJSON(p *plan.Plan, cells []*plan.Cell, sum planSummary, servers []serverUse) any {
	out := struct {
		Path    string      `json:"path"`
		Hash    string      `json:"hash"`
		Cells   []cellJSON  `json:"cells"`
		Servers []serverUse `json:"servers,omitempty"`
		Summary planSummary `json:"summary"`
	}{Path: p.Path, Hash: p.Hash, Cells: []cellJSON{}, Servers: servers, Summary: sum}
	for _, c := range cells {
		out.Cells = append(out.Cells, cellJSON{
			ID: c.ID, Matrix: c.Matrix, Backend: c.Backend.Addr, URL: c.Backend.URL, Model: c.Model,
			ModelID: c.ModelID, Quantization: c.Quantization, Hardware: hardwareName(c), Workload: c.Workload.Name,
			Concurrency: c.Workload.Concurrency, WarmupRuns: c.Workload.WarmupRuns, RepeatRuns: c.Workload.RepeatRuns,
			Server: serverName(c), Notes: c.Notes, Placement: string(placement(c)), RunsOn: runsOn(c),
		}.withLoad(c.Workload))
	}
	return out
}

// serverUse is one start of a plan-managed server during apply: the cells (1-based, in
// plan order) it starts before and is stopped around, as apply's servers.Manager does it.
type serverUse struct {
	Server string `json:"server"`
	// Start is the cell the server is started before; Restart says it ran before.
	Start   int  `json:"start_before_cell"`
	Restart bool `json:"restart,omitempty"`
	// StopBefore is the cell whose different server replaces it; 0 means it runs to the
	// end of the run and is stopped after the last cell (StopAfter).
	StopBefore int `json:"stop_before_cell,omitempty"`
	StopAfter  int `json:"stop_after_cell,omitempty"`
	// Cells counts the cells measured against it.
	Cells int      `json:"cells"`
	IDs   []string `json:"cell_ids"`
}

func (u serverUse) String() string {
	verb := "started"
	if u.Restart {
		verb = "started again"
	}
	stop := fmt.Sprintf("stopped after cell %d (end of the run)", u.StopAfter)
	if u.StopBefore > 0 {
		stop = fmt.Sprintf("stopped before cell %d", u.StopBefore)
	}
	s := fmt.Sprintf("server %s: %s before cell %d, %s; used by %d %s", u.Server, verb, u.Start, stop, u.Cells, plural(u.Cells, "cell", "cells"))
	if u.Restart {
		s += " (put cells that share a server next to each other to start it once)"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// serverSchedule replays apply's server lifecycle over the cells: a cell that names a
// server reuses the running one of the same name, else the running one is stopped and
// its own started; a cell with no server leaves the running one alone; whatever runs at
// the end is stopped after the last cell.
func serverSchedule(cells []*plan.Cell) []serverUse {
	var (
		out  []serverUse
		cur  = -1 // index in out of the running server
		seen = map[string]bool{}
	)
	for i, c := range cells {
		n := i + 1
		if c.Server == nil {
			continue
		}
		if cur >= 0 && out[cur].Server == c.ServerInstance() {
			out[cur].Cells++
			out[cur].IDs = append(out[cur].IDs, c.ID)
			continue
		}
		if cur >= 0 {
			out[cur].StopBefore = n
		}
		out = append(out, serverUse{Server: c.ServerInstance(), Start: n, Restart: seen[c.ServerInstance()], Cells: 1, IDs: []string{c.ID}})
		seen[c.ServerInstance()] = true
		cur = len(out) - 1
	}
	if cur >= 0 {
		out[cur].StopAfter = len(cells)
	}
	return out
}

func hardwareName(c *plan.Cell) string {
	if c.Hardware == nil {
		return ""
	}
	return c.Hardware.Name
}

func serverName(c *plan.Cell) string {
	if c.Server == nil {
		return ""
	}
	return c.Server.Name
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
