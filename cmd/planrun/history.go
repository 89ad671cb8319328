package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/ledger/history"
	"github.com/planrun/planrun/ledger/index"
	"github.com/planrun/planrun/plan"
)

func init() {
	register("history", "each cell's figures across runs, with the environment changes and a trend per figure", runHistory)
}

type historyArgs struct {
	Cells  stringList
	Since  string
	Fields string
	Key    string
	JSON   bool
	CSV    bool
	Out    string
}

func runHistory(_ context.Context, env *Env, args []string) int {
	var a historyArgs
	fs := newFlagSet(env, "history", "PATH", `For each cell and level, the series of its measured rows across runs: date, run id,
planrun version, plan hash, server version, model digest, GPU and driver, host or
node, and the figures, with what changed in the environment from the run before. Each
figure gets a sparkline and a trend: better, worse or flat, judged as the median of
the last third of the runs against the first third, beyond 3 times the run-to-run
noise (at least 5%).

PATH is a results directory (its results.csv ledger and run directories), a run
directory, a ledger, or a plan (the results directory beside it). A results
directory is read through its index (index.sqlite beside the ledger): runs new
since the last read are added to it, and it is rebuilt when anything else changed. A cell renamed
between runs is a new cell: it is never merged, and a note says so.`)
	fs.Var(&a.Cells, "cell", "only cells whose id, or heading with its level ('*c=4'), matches this glob; * spans '/' (repeatable)")
	fs.StringVar(&a.Since, "since", "", "only runs started since: 2026-11-01, an RFC 3339 time, or a duration back from now (72h)")
	fs.StringVar(&a.Fields, "fields", strings.Join(history.DefaultFields, ","), "figures to show, comma-separated (planrun compare -fields all lists them)")
	fs.StringVar(&a.Key, "key", "", "environment fields that split a cell's series, e.g. server_version: "+strings.Join(history.EnvFields(), ", "))
	fs.BoolVar(&a.JSON, "json", false, "write JSON: every series with its points, environment and trends")
	fs.BoolVar(&a.CSV, "csv", false, "write CSV: one line per run of each series")
	fs.StringVar(&a.Out, "o", "", "write to this file instead of stdout")
	var path string
	if code, ok := parseArgs(fs, args, 1, &path); !ok {
		return code
	}
	opts, fields, err := a.options(time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun history: %v\n", err)
		return exitUsage
	}
	set, err := loadResults(env, "history", path, opts)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun history: %v\n", err)
		return exitError
	}
	series := history.Build(set, opts)
	notes := append(set.Notes, history.Renamed(series)...)
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "planrun history: note: %s\n", n)
	}
	if len(series) == 0 {
		fmt.Fprintf(env.Stderr, "planrun history: no measured rows in %s match (%d runs there)\n", set.Dir, len(set.Runs))
		return exitError
	}
	w := env.Stdout
	if a.Out != "" {
		f, err := os.Create(a.Out)
		if err != nil {
			fmt.Fprintf(env.Stderr, "planrun history: %v\n", err)
			return exitError
		}
		defer f.Close()
		w = f
	}
	switch {
	case a.JSON:
		err = history.WriteJSON(w, series, fields, notes)
	case a.CSV:
		err = history.WriteCSV(w, series, fields)
	default:
		fmt.Fprintf(w, "%s: %d runs, %d series.\n\n", set.Dir, len(set.Runs), len(series))
		if err = history.WriteText(w, series, fields); err == nil {
			err = history.WriteDecisions(w, history.Decisions(set))
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun history: %v\n", err)
		return exitError
	}
	return exitOK
}

// loadResults reads the runs at path: through the results directory's index (updated
// first when stale) when path is a results directory, else from the files. An index
// that cannot be written (a read-only checkout) is passed over with a note.
func loadResults(env *Env, command, path string, o history.Options) (*history.Set, error) {
	path = planResults(env, path)
	if st, err := os.Stat(path); err == nil && st.IsDir() && !isFile(filepath.Join(path, ledger.ManifestFile)) {
		set, _, err := index.Load(path, o)
		if err == nil {
			return set, nil
		}
		fmt.Fprintf(env.Stderr, "planrun %s: note: reading the files, not the index: %v\n", command, err)
	}
	return history.Load(path)
}

// planResults is where a plan's runs are, for a path that names a plan file: the
// directory of its output "csv" when it declares one (as apply writes there), else
// <plan dir>/results; any other path as it is. A plan that does not load (a variable
// without a default) is taken to write to the default.
func planResults(env *Env, path string) string {
	if !strings.HasSuffix(path, ".hcl") || !isFile(path) {
		return path
	}
	dir := filepath.Join(filepath.Dir(path), "results")
	p, diags := plan.Load(path, plan.LoadOptions{Getenv: env.Getenv, Placements: apply.Placements()})
	if diags.HasErrors() || p == nil {
		return dir
	}
	for _, out := range p.Outputs {
		if out.Kind == ledger.LedgerOutput {
			dir = filepath.Dir(out.Path)
		}
	}
	return dir
}

// options parses -cell, -since, -fields and -key.
func (a *historyArgs) options(now time.Time) (history.Options, []string, error) {
	o := history.Options{KeyFields: splitList(a.Key)}
	for _, c := range a.Cells {
		o.Cells = append(o.Cells, splitList(c)...)
	}
	if err := history.CheckKeyFields(o.KeyFields); err != nil {
		return o, nil, fmt.Errorf("-key: %v", err)
	}
	if a.Since != "" {
		t, err := parseSince(a.Since, now)
		if err != nil {
			return o, nil, err
		}
		o.Since = t
	}
	fields := splitList(a.Fields)
	for _, f := range fields {
		if err := compare.CheckCompareField(f); err != nil {
			return o, nil, fmt.Errorf("-fields: %v", err)
		}
	}
	return o, fields, nil
}

// parseSince reads a date, an RFC 3339 time or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("-since %q: write a date (2026-11-01), an RFC 3339 time or a duration (72h)", s)
}
