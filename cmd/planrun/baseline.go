package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/ledger/history"
	"github.com/planrun/planrun/ledger/junit"
	"github.com/planrun/planrun/plan"
)

// baselineFlags are the rolling baseline's flags, shared by compare and apply.
type baselineFlags struct {
	Baseline     string
	Key          string
	Insufficient string
	// FailOnIndeterminate fails (exit 5) what a gate could not settle, which else exits 8.
	FailOnIndeterminate bool
}

func (b *baselineFlags) bindBaseline(fs *flag.FlagSet) {
	fs.StringVar(&b.Baseline, "baseline", "", "judge the run against the median of each cell's last N runs before it: last:N (N ≥ 3)")
	fs.StringVar(&b.Key, "key", "", "with -baseline: environment fields baseline runs must share besides the cell, e.g. server_version")
	fs.StringVar(&b.Insufficient, "insufficient", "exit", "with -baseline, a figure with too few earlier runs: exit (code 7), pass, or fail (code 5)")
	fs.BoolVar(&b.FailOnIndeterminate, "fail-on-indeterminate", false,
		"exit 5, not 8, where the gate cannot tell change from noise: a change's interval straddles its threshold, or a run's own interval reaches back inside the baseline's noise band")
}

// gate parses the baseline flags and thresholds.
func (b *baselineFlags) gate(failOn []string) (history.Baseline, error) {
	var g history.Baseline
	n, err := history.ParseLast(b.Baseline)
	if err != nil {
		return g, fmt.Errorf("-baseline %v", err)
	}
	g.N, g.KeyFields = n, splitList(b.Key)
	if err := history.CheckKeyFields(g.KeyFields); err != nil {
		return g, fmt.Errorf("-key: %v", err)
	}
	switch b.Insufficient {
	case "exit", "pass", "fail":
	default:
		return g, fmt.Errorf("-insufficient %q: write exit, pass or fail", b.Insufficient)
	}
	for _, s := range failOn {
		t, err := compare.ParseThreshold(s)
		if err != nil {
			return g, err
		}
		g.Thresholds = append(g.Thresholds, t)
	}
	return g, nil
}

// judgeBaseline judges the run at path (a run directory, or the latest run of a
// results directory or ledger) against its rolling baseline, writes the verdicts, says
// each regression and insufficient figure on stderr, and returns the gate's exit code.
func (b *baselineFlags) judgeBaseline(env *Env, command, path string, g history.Baseline, o outputFlags) ([]history.Judgement, string, int) {
	set, err := history.Load(path)
	var run *history.Run
	if err == nil {
		run, err = set.RunAt(path)
	}
	var js []history.Judgement
	if err == nil {
		js, err = history.Judge(set, run.ID, g)
	}
	if err == nil {
		err = o.write(env, func(w io.Writer) error { return history.WriteJudgements(w, js, run.ID, o.format()) })
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun %s: %v\n", command, err)
		return nil, "", exitError
	}
	return js, run.ID, b.verdictExit(env, command, js, run.ID, g.N)
}

// verdictExit says each regression and insufficient figure and returns the exit code.
func (b *baselineFlags) verdictExit(env *Env, command string, js []history.Judgement, runID string, n int) int {
	if len(js) == 0 {
		fmt.Fprintf(env.Stderr, "planrun %s: gate failed: run %s has no measured row to judge\n", command, runID)
		return exitNothingCompared
	}
	regressed, insufficient := history.Failing(js)
	indeterminate := history.Indeterminates(js)
	for _, j := range regressed {
		fmt.Fprintf(env.Stderr, "planrun %s: regression: %s\n", command, j)
	}
	for _, j := range slices.Concat(indeterminate, insufficient) {
		fmt.Fprintf(env.Stderr, "planrun %s: %s\n", command, j)
	}
	switch {
	case len(regressed) > 0 || (len(insufficient) > 0 && b.Insufficient == "fail") || (len(indeterminate) > 0 && b.FailOnIndeterminate):
		fmt.Fprintf(env.Stderr, "planrun %s: gate failed: %d regressed, %d indeterminate, %d insufficient data, of %d figure(s) of run %s against last:%d\n",
			command, len(regressed), len(indeterminate), len(insufficient), len(js), runID, n)
		return exitRegression
	case len(indeterminate) > 0:
		fmt.Fprintf(env.Stderr, "planrun %s: gate indeterminate: %d of %d figure(s) of run %s moved beyond the noise band of last:%d on too few requests to tell (above; -fail-on-indeterminate fails them)\n",
			command, len(indeterminate), len(js), runID, n)
		return exitIndeterminate
	case len(insufficient) > 0 && b.Insufficient == "exit":
		// Its own outcome, neither passed nor failed: nothing regressed, the history is
		// too short to say (a first run, or fewer earlier runs than a baseline needs).
		fmt.Fprintf(env.Stderr, "planrun %s: not enough history: %d of %d figure(s) of run %s have too few earlier runs to judge against last:%d "+
			"(a baseline needs %d; exit %d; -insufficient pass or fail decides them)\n",
			command, len(insufficient), len(js), runID, n, history.MinBaselineRuns, exitInsufficient)
		return exitInsufficient
	}
	fmt.Fprintf(env.Stderr, "planrun %s: gate passed: %d figure(s) of run %s judged against last:%d, none regressed\n", command, len(js), runID, n)
	return exitOK
}

// outputFlags say where and how a command writes its result.
type outputFlags struct {
	Out            string
	JSON, Markdown bool
}

// format is the history format the flags choose.
func (o outputFlags) format() string {
	switch {
	case o.JSON:
		return history.FormatJSON
	case o.Markdown:
		return history.FormatMarkdown
	}
	return history.FormatText
}

func (o outputFlags) write(env *Env, f func(io.Writer) error) error {
	if o.Out == "" {
		return f(env.Stdout)
	}
	return ledger.WriteFileAtomic(o.Out, f)
}

// rollingBaseline is compare -baseline last:N RUN.
func (a *compareArgs) rollingBaseline(env *Env, path string) int {
	g, err := a.gate(a.FailOn)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return exitUsage
	}
	js, runID, code := a.judgeBaseline(env, "compare", path, g, outputFlags{a.Out, a.JSON, a.Markdown})
	if code == exitError {
		return code
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### planrun compare -baseline %s %s\n\n", a.Baseline, runID)
	judgementSummary(&b, js, runID)
	if !a.ciFlags.write(env, "compare", junit.Suite{Name: "compare -baseline " + a.Baseline + " " + runID,
		Cases: judgementCases(js, a.Insufficient == "fail")}, b.String()) {
		return exitError
	}
	return code
}

// baselineGate parses apply's -baseline flags; a zero Baseline without -baseline.
func (a *applyArgs) baselineGate(env *Env) (history.Baseline, int) {
	if a.Baseline == "" {
		if len(a.FailOn) > 0 {
			fmt.Fprintln(env.Stderr, "planrun apply: -fail-on needs -baseline last:N (or gate two runs with planrun compare)")
			return history.Baseline{}, exitUsage
		}
		return history.Baseline{}, exitOK
	}
	g, err := a.gate(a.FailOn)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun apply: %v\n", err)
		return g, exitUsage
	}
	return g, exitOK
}

// gateRun judges a finished run against its rolling baseline (with -baseline, when the
// run was not interrupted) and writes the CI outputs; code is apply's exit code so far,
// which a regression (5) or insufficient data (7) replaces only when it is 0.
func (a *applyArgs) gateRun(env *Env, p *plan.Plan, res *apply.Result, g history.Baseline, code int) int {
	var b strings.Builder
	ok, failed, _, _ := res.Counts()
	fmt.Fprintf(&b, "### planrun apply %s\n\nCells: %d ok, %d failed. Expects failed: %d.\n\n", filepath.Base(res.RunDir), ok, failed, len(res.ExpectFailures))
	for _, f := range res.ExpectFailures {
		fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(f.String(), "|", `\|`))
	}
	cases := applyCases(p, res)
	if a.Baseline != "" && !res.Interrupted && res.RunDir != "" {
		fmt.Fprintln(env.Stdout)
		js, runID, gate := a.judgeBaseline(env, "apply", res.RunDir, g, outputFlags{})
		if code == exitOK {
			code = gate
		}
		judgementSummary(&b, js, runID)
		cases = append(cases, judgementCases(js, a.Insufficient == "fail")...)
	}
	if !a.ciFlags.write(env, "apply", junit.Suite{Name: "apply " + filepath.Base(res.RunDir), Cases: cases}, b.String()) && code == exitOK {
		code = exitError
	}
	return code
}

// explainPairs says, for each pair of runs the deltas hold, what changed in the
// environment between them (from their manifests, where the run directories are
// there), and returns the phrase each delta's regression message ends with.
func explainPairs(env *Env, pa, pb string, deltas []compare.Delta) map[string]string {
	ra, rb := runsAt(pa), runsAt(pb)
	out := map[string]string{}
	said := map[[3]string]bool{}
	for _, d := range deltas {
		if d.A == nil || d.B == nil || compare.SameMeasurement(d.A, d.B) {
			continue
		}
		runA, runB := ra[d.A.RunID], rb[d.B.RunID]
		ea, eb := history.EnvOf(*d.A, runA.Manifest), history.EnvOf(*d.B, runB.Manifest)
		why := history.Explain(ea, eb)
		out[d.Name()] = fmt.Sprintf("; from run %s to run %s: %s", cmp.Or(d.A.RunID, "A"), cmp.Or(d.B.RunID, "B"), why)
		// Said once for each pair of runs and change: cells of one change share a line.
		pair := [3]string{d.A.RunID, d.B.RunID, why}
		if !said[pair] && why != "same environment" {
			said[pair] = true
			fmt.Fprintf(env.Stderr, "planrun compare: from run %s to run %s: %s\n", cmp.Or(d.A.RunID, "A"), cmp.Or(d.B.RunID, "B"), why)
			explainChanges(env, history.Diff(ea, eb), d.B.CellID, runA, runB, said)
		}
	}
	return out
}

// explainChanges prints the changes a phrase cannot hold whole: the cell's settings and
// the variables as a diff of key=value lines, the server command lines, and the plan
// files' diff (once for the pair of runs).
func explainChanges(env *Env, changes []history.EnvChange, cell string, runA, runB history.Run, said map[[3]string]bool) {
	var from, to []string
	plan := false
	for _, c := range changes {
		switch {
		case c.Setting() != "":
			from, to = append(from, c.Setting()+"="+c.From), append(to, c.Setting()+"="+c.To)
		case strings.HasPrefix(c.Field, "var.") || c.Field == "server_command":
			fmt.Fprintf(env.Stderr, "    %s: - %s\n    %s: + %s\n", c.Field, c.From, c.Field, c.To)
		case c.Field == "plan_hash":
			plan = true
		}
	}
	if len(from) > 0 {
		fmt.Fprintf(env.Stderr, "    settings of %s:\n", cell)
		for _, l := range from {
			fmt.Fprintf(env.Stderr, "    - %s\n", l)
		}
		for _, l := range to {
			fmt.Fprintf(env.Stderr, "    + %s\n", l)
		}
	}
	if k := [3]string{runA.ID, runB.ID, "plan files"}; plan && !said[k] {
		said[k] = true
		planDiff(env, runA, runB)
	}
}

// runsAt are the runs at path by id (an empty Run for an id it does not hold, so a
// ledger without run directories explains what its rows say).
func runsAt(path string) map[string]history.Run {
	out := map[string]history.Run{}
	set, err := history.Load(path)
	if err != nil {
		return out
	}
	for _, r := range set.Runs {
		out[r.ID] = *r
	}
	return out
}

// planDiff prints, for two runs of different plan hashes, a unified diff of each plan
// file their run directories hold a copy of (plan/): the settings that changed.
func planDiff(env *Env, a, b history.Run) {
	if a.Manifest == nil || b.Manifest == nil || a.Dir == "" || b.Dir == "" {
		return
	}
	files := append(slices.Clone(a.Manifest.PlanFiles), b.Manifest.PlanFiles...)
	slices.Sort(files)
	for _, f := range slices.Compact(files) {
		x, _ := os.ReadFile(filepath.Join(a.Dir, f))
		y, _ := os.ReadFile(filepath.Join(b.Dir, f))
		if string(x) != string(y) {
			writeDiff(env.Stderr, a.ID+"/"+f, b.ID+"/"+f, string(x), string(y))
		}
	}
}
