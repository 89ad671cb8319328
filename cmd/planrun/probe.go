package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

func init() {
	register("probe", "check the plan's servers: reachable, version, models, usage reporting", runProbe)
}

type probeArgs struct {
	planFlags
	Path    string
	JSON    bool
	Timeout time.Duration
}

// probeTarget is one backend to probe and the model ids its selected cells ask for.
type probeTarget struct {
	backend *plan.Backend
	models  []string
	// managed names the plan-managed server apply would start for this backend; probe
	// does not start servers, so a refused connection is expected then.
	managed string
}

// probeReport is the -json document.
type probeReport struct {
	OK       bool                   `json:"ok"`
	Backends []backends.ProbeResult `json:"backends"`
}

// newProbeBackend builds a backend from its config; tests replace it.
var newProbeBackend = func(c backends.Config) (backends.Backend, error) { return connect.New(c) }

func runProbe(ctx context.Context, env *Env, args []string) int {
	var a probeArgs
	fs := newFlagSet(env, "probe", "PLAN", `Check every backend the selected cells use (every backend of the plan when no -only or
-except is given): is the server reachable, which version it runs, which models it serves,
whether each model id of the plan is among them, and whether it reports its own token count
(one tiny request of at most 2 tokens per model). Plan-managed servers are not started.

Exit codes: 0 every check passed; 1 a check failed (or the plan is invalid); 2 bad usage.`)
	a.bind(fs)
	fs.BoolVar(&a.JSON, "json", false, "print the results as JSON")
	fs.DurationVar(&a.Timeout, "timeout", 30*time.Second, "time limit for probing one backend")
	if code, ok := parseArgs(fs, args, 1, &a.Path); !ok {
		return code
	}
	a.machine = true // probe's stdout is its findings (a table, or JSON): the plan's warnings go to stderr
	p, cells, code := a.load(env, a.Path)
	if code != exitOK {
		return code
	}
	all := len(a.Only) == 0 && len(a.Except) == 0
	targets := probeTargets(p, cells, all)
	if len(targets) == 0 {
		fmt.Fprintln(env.Stderr, "planrun probe: no backend to probe (no cell selected: check -only/-except)")
		return exitUsage
	}

	results := make([]backends.ProbeResult, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = probeOne(ctx, env, t, a.Timeout)
		}()
	}
	wg.Wait()

	ok := true
	for _, r := range results {
		ok = ok && r.OK()
	}
	if a.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(probeReport{OK: ok, Backends: results}); err != nil {
			fmt.Fprintf(env.Stderr, "planrun probe: %v\n", err)
			return exitError
		}
	} else {
		wanted := make([][]string, len(targets))
		for i, t := range targets {
			wanted[i] = t.models
		}
		writeProbeTable(env.Stdout, results, wanted)
	}
	if !ok {
		return exitError
	}
	return exitOK
}

// probeTargets lists the backends to probe in plan order, each with the model ids of
// its selected cells in cell order. With all, backends no cell uses are probed too
// (reachability and version only).
func probeTargets(p *plan.Plan, cells []*plan.Cell, all bool) []probeTarget {
	byAddr := map[string]*probeTarget{}
	seen := map[string]bool{}
	for _, c := range cells {
		t := byAddr[c.Backend.Addr]
		if t == nil {
			t = &probeTarget{backend: c.Backend}
			byAddr[c.Backend.Addr] = t
		}
		if c.Server != nil && t.managed == "" {
			t.managed = c.Server.Name
		}
		if key := c.Backend.Addr + " " + c.ModelID; c.ModelID != "" && !seen[key] {
			seen[key] = true
			t.models = append(t.models, c.ModelID)
		}
	}
	var out []probeTarget
	for _, b := range p.Backends {
		t := byAddr[b.Addr]
		if t == nil && all {
			t = &probeTarget{backend: b}
		}
		if t == nil {
			continue
		}
		if t.managed == "" && b.Server != nil {
			t.managed = b.Server.Name
		}
		out = append(out, *t)
	}
	return out
}

// probeOne probes one backend within timeout. The result never carries the API key:
// the adapters never put it in a message, and anything that still held it is redacted.
func probeOne(ctx context.Context, env *Env, t probeTarget, timeout time.Duration) backends.ProbeResult {
	cfg := t.backend.Config()
	cfg.Getenv = env.Getenv
	b, err := newProbeBackend(cfg)
	if err != nil {
		return backends.ProbeResult{Backend: t.backend.Addr, URL: ledger.SafeURL(t.backend.URL), Problems: []string{err.Error()}}
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	r := b.Probe(ctx, t.models)
	r.Backend, r.URL = t.backend.Addr, ledger.SafeURL(t.backend.URL)
	if r.UsageReported != nil && !*r.UsageReported {
		r.Problems = append(r.Problems, "the server does not report its token count (usage with stream_options.include_usage): "+
			"output tokens would be counted by chunks (token_source = chunks), which undercounts whenever the server sends several tokens in one chunk")
	}
	if !r.Reachable && t.managed != "" {
		r.Problems = append(r.Problems, "this backend's server is managed by the plan (server "+strconv.Quote(t.managed)+
			"): apply starts it, probe does not; start it by hand to probe it")
	}
	if cfg.APIKeyEnv != "" {
		if key := env.Getenv(cfg.APIKeyEnv); key != "" {
			for i, p := range r.Problems {
				r.Problems[i] = strings.ReplaceAll(p, key, "<"+cfg.APIKeyEnv+">")
			}
		}
	}
	return r
}

// shownModels is how many of a server's models the table lists before "…".
const shownModels = 3

// writeProbeTable prints one line per backend, then the problems, then a verdict line.
// wanted[i] are the model ids asked of results[i], in plan order.
func writeProbeTable(w io.Writer, results []backends.ProbeResult, wanted [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tURL\tREACHABLE\tVERSION\tMODELS AVAILABLE\tPLAN MODELS\tUSAGE")
	for i, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Backend, r.URL, yesNo(r.Reachable), cmp.Or(r.Version, "-"),
			modelsCell(r), wantedCell(r, wanted[i]), usageCell(r.UsageReported))
	}
	tw.Flush()

	failed := 0
	for _, r := range results {
		if r.OK() {
			continue
		}
		if failed == 0 {
			fmt.Fprintln(w, "\nProblems:")
		}
		failed++
		if !r.Reachable && len(r.Problems) == 0 {
			fmt.Fprintf(w, "  %s: not reachable\n", r.Backend)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s: %s\n", r.Backend, p)
		}
	}
	if failed == 0 {
		fmt.Fprintf(w, "\nProbe passed: %d of %d backends ready.\n", len(results), len(results))
		return
	}
	fmt.Fprintf(w, "\nProbe failed: %d of %d backends ready.\n", len(results)-failed, len(results))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// modelsCell is the server's model count and its first few names.
func modelsCell(r backends.ProbeResult) string {
	if !r.Reachable || r.Models == nil {
		return "-"
	}
	shown := r.Models
	more := ""
	if len(shown) > shownModels {
		shown, more = shown[:shownModels], ", …"
	}
	return fmt.Sprintf("%d (%s%s)", len(r.Models), strings.Join(shown, ", "), more)
}

// wantedCell says for each model id of the plan whether the server has it: present,
// MISSING, or "?" when the server could not be asked.
func wantedCell(r backends.ProbeResult, ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		present, checked := r.ModelsPresent[id]
		switch {
		case !checked:
			parts[i] = id + " ?"
		case present:
			parts[i] = id + " present"
		default:
			parts[i] = id + " MISSING"
		}
	}
	return strings.Join(parts, ", ")
}

func usageCell(u *bool) string {
	if u == nil {
		return "-" // not checked: unreachable, or no model of the plan is present
	}
	return yesNo(*u)
}
