package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/planrun/planrun/plan"
)

func init() {
	register("plan", "list the cells a plan will run, with stable ids", runPlan)
}

type planArgs struct {
	planFlags
	JSON bool
	Path string
}

func runPlan(_ context.Context, env *Env, args []string) int {
	var a planArgs
	fs := newFlagSet(env, "plan", "PLAN", "List every cell apply would run (id, backend, model_id, quantization, hardware,\nworkload, concurrency levels, server) and the totals. Sends no request.")
	a.bind(fs)
	fs.BoolVar(&a.JSON, "json", false, "print the cells as JSON")
	if code, ok := parseArgs(fs, args, 1, &a.Path); !ok {
		return code
	}
	p, cells, code := a.load(env, a.Path)
	if code != exitOK {
		return code
	}
	sum := summarize(cells)
	if a.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(planJSON(p, cells, sum)); err != nil {
			fmt.Fprintf(env.Stderr, "planrun: %v\n", err)
			return exitError
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tBACKEND\tMODEL_ID\tQUANT\tHARDWARE\tWORKLOAD\tCONCURRENCY\tSERVER")
	for _, c := range cells {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Backend.Addr, c.ModelID, dash(c.Quantization),
			dash(hardwareName(c)), c.Workload.Name, joinInts(c.Workload.Concurrency), dash(serverName(c)))
	}
	tw.Flush()
	fmt.Fprintf(env.Stdout, "\nPlan: %d cells, %d concurrency levels, %d measured requests.\n", sum.Cells, sum.Levels, sum.Requests)
	return exitOK
}

// planSummary is the total line: what apply would measure.
type planSummary struct {
	Cells    int `json:"cells"`
	Levels   int `json:"concurrency_levels"`
	Requests int `json:"measured_requests"`
}

// summarize counts measured requests as repeat runs × requests per run at each level;
// warm-up requests are not measured and not counted.
func summarize(cells []*plan.Cell) planSummary {
	s := planSummary{Cells: len(cells)}
	for _, c := range cells {
		for _, lvl := range c.Workload.Concurrency {
			s.Levels++
			s.Requests += c.Workload.RepeatRuns * c.Workload.RequestsPerRun(lvl)
		}
	}
	return s
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
	Server       string `json:"server,omitempty"`
	Notes        string `json:"notes,omitempty"`
}

func planJSON(p *plan.Plan, cells []*plan.Cell, sum planSummary) any {
	out := struct {
		Path    string      `json:"path"`
		Hash    string      `json:"hash"`
		Cells   []cellJSON  `json:"cells"`
		Summary planSummary `json:"summary"`
	}{Path: p.Path, Hash: p.Hash, Cells: []cellJSON{}, Summary: sum}
	for _, c := range cells {
		out.Cells = append(out.Cells, cellJSON{
			ID: c.ID, Matrix: c.Matrix, Backend: c.Backend.Addr, URL: c.Backend.URL, Model: c.Model,
			ModelID: c.ModelID, Quantization: c.Quantization, Hardware: hardwareName(c), Workload: c.Workload.Name,
			Concurrency: c.Workload.Concurrency, WarmupRuns: c.Workload.WarmupRuns, RepeatRuns: c.Workload.RepeatRuns,
			Server: serverName(c), Notes: c.Notes,
		})
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

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
