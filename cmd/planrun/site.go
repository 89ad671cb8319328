package main

import (
	"context"
	"fmt"

	"github.com/planrun/planrun/ledger/history"
	"github.com/planrun/planrun/ledger/site"
)

func init() {
	register("report", "write a results directory as a static site: runs, cells over time, each run's report", runReport)
}

func runReport(_ context.Context, env *Env, args []string) int {
	fs := newFlagSet(env, "report", "RESULTS_DIR -o DIR", `Write a static site a team can browse: index.html (every run: date, plan, cells ok and
failed, its gate verdict against each cell's last 5 runs, the environment change behind a
regression, and every cell), a page per cell and level with each figure over time (TTFT,
TPOT and E2E as a p50 line with a band to p99, throughput) and the runs whose environment
changed marked on the time axis, and a page per run (its report.html). No server, nothing
fetched, no script: open index.html from disk or put DIR on any static host.`)
	out := fs.String("o", "", "the directory to write the site into (required)")
	var path string
	if code, ok := parseArgs(fs, args, 1, &path); !ok {
		return code
	}
	if *out == "" {
		fmt.Fprintln(env.Stderr, "planrun report: -o DIR is required")
		return exitUsage
	}
	set, err := loadResults(env, "report", path, history.Options{})
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun report: %v\n", err)
		return exitError
	}
	for _, n := range set.Notes {
		fmt.Fprintf(env.Stderr, "planrun report: note: %s\n", n)
	}
	if err := site.Write(*out, set); err != nil {
		fmt.Fprintf(env.Stderr, "planrun report: %v\n", err)
		return exitError
	}
	fmt.Fprintf(env.Stdout, "Site of %d runs written to %s/ (open %s/index.html).\n", len(set.Runs), *out, *out)
	return exitOK
}
