package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/ledger/junit"
)

func init() {
	register("compare", "put two result sets (or two tools of one) side by side, with Δ%", runCompare)
}

type compareArgs struct {
	Tools    string
	Markdown bool
	JSON     bool
	Out      string
	Fields   string
	FailOn   stringList
	baselineFlags
	ciFlags
}

// compareHelp is compare's -h text above its exit codes.
const compareHelp = `Match the rows of two result sets by model, quantization, hardware, workload and
concurrency, and show TTFT p50, TPOT p50, throughput and VRAM side by side with
Δ% = (B − A) / A × 100 (positive: B is higher; for TTFT and TPOT higher is worse).

A and B are run directories (their results.csv) or CSV ledgers. With -tools X,Y a
single result set is split by tool instead: the Ollama-vs-vLLM view of one run.

As a gate (CI): -fail-on '<figure><op><signed change>' (repeatable) exits 5 naming
every row and figure that crossed, e.g. -fail-on 'ttft_p99_s>+10%' -fail-on
'output_tok_s<-5%'; a change without % is in the figure's unit (B − A). Figures are
the numeric result fields (planrun compare -fields all shows them all). Rows on one
side only are noted, not failed; a gated figure A measured and B did not fails.

Each figure carries its confidence interval (95% unless the workload set confidence),
and the gate judges the interval of the change, built from both rows' intervals: pass
when all of it is within the threshold, fail (exit 5) when all of it is beyond, and
indeterminate (exit 8) when it straddles the limit, with a line saying about how many
successful requests a side (runs, for a rate across runs) would resolve it. A figure a
side cannot bound (a p99 from fewer than 368 requests at 95%) is judged on the highest
percentile of the same figure both bound (a p99 on 40 requests on the p90).
-fail-on-indeterminate turns indeterminate into a failure. Rows from a ledger written
before intervals are judged on the point change: a percentile only with as many
requests as bound it, crossings on fewer reported as too few to conclude. A gate that
passes says on what it judged; one with nothing to judge (no row of A matches a row of
B, or both sides are one run) fails and says why.

With -baseline last:N RUN, each measured row of RUN (a run directory, or the latest
run of a results directory or ledger) is judged against the median of the same
cell and level's last N runs before it, found beside it: each figure is regressed,
improved, within noise, or insufficient data (fewer than 3 earlier runs, or too few
requests to resolve the percentile). The noise band is a 99.5% prediction interval for
one more run like the baseline's (Student's t × √(1 + 1/n) × the standard deviation
of the baseline runs, the one furthest from the median left out), at least 5% of the
median. -key server_version,model_digest adds
environment fields the baseline runs must share. -fail-on names the figures judged and
the change a regression must also exceed (default: ttft_p50_s, tpot_p50_ms, e2e_p50_s,
output_tok_s, any move beyond noise in the worse direction). A regression names what
changed in the environment from the latest baseline run.

`

func runCompare(_ context.Context, env *Env, args []string) int {
	var a compareArgs
	fs := newFlagSet(env, "compare", "A [B]", compareHelp+exitCodeHelp("compare"))
	a.bindFlags(fs)
	var pa, pb string
	operands := []*string{&pa, &pb}
	if hasFlag(args, "tools") || hasFlag(args, "baseline") {
		operands = operands[:1]
	}
	if code, ok := parseArgs(fs, args, len(operands), operands...); !ok {
		return code
	}
	if a.Baseline != "" {
		return a.rollingBaseline(env, pa)
	}
	rowsA, rowsB, labelA, labelB, code := a.readSides(env, pa, pb)
	if code != exitOK {
		return code
	}
	thresholds, fields, err := a.gateAndFields()
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return exitUsage
	}
	if a.Tools == "" {
		noteRuns(env, "A", pa, rowsA)
		noteRuns(env, "B", pb, rowsB)
	}
	deltas := compareRows(rowsA, rowsB)
	breaches := compare.Gate(deltas, thresholds)
	var changes []compare.DecisionChange
	if a.Tools == "" {
		changes = compare.DecisionChanges(readDecisions(pa), readDecisions(pb))
	}
	if err := a.write(env, deltas, breaches, labelA, labelB, fields, changes); err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return exitError
	}
	judged := compare.Judge(deltas, thresholds)
	if judged.Rows == 0 {
		fmt.Fprintf(env.Stderr, "planrun compare: nothing compared: %s\n", nothingCompared(rowsA, rowsB, judged))
		if len(thresholds) > 0 {
			fmt.Fprintln(env.Stderr, "planrun compare: gate failed: it judged nothing")
			return exitNothingCompared
		}
		return exitOK
	}
	if judged.Same > 0 {
		fmt.Fprintf(env.Stderr, "planrun compare: %d row(s) are one measurement on both sides (the same run): not judged\n", judged.Same)
	}
	a.printBreaches(env, pa, pb, deltas, breaches)
	if !a.ciFlags.write(env, "compare", junit.Suite{Name: "compare " + labelA + " " + labelB, Cases: breachCases(deltas, thresholds, breaches, a.FailOnIndeterminate)},
		pairSummary(deltas, breaches, labelA, labelB, fields)) {
		return exitError
	}
	return gateExit(env, breaches, thresholds, judged, a.FailOnIndeterminate)
}

// readSides reads the two sides compared and names them: A's rows and B's, or with
// -tools the rows of each of the two tools in A. code is exitOK or why not.
func (a *compareArgs) readSides(env *Env, pa, pb string) (rowsA, rowsB []ledger.Row, labelA, labelB string, code int) {
	rowsA, err := readRows(pa)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return nil, nil, "", "", exitError
	}
	if a.Tools == "" {
		if rowsB, err = readRows(pb); err != nil {
			fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
			return nil, nil, "", "", exitError
		}
		return rowsA, rowsB, label(pa), label(pb), exitOK
	}
	tools := strings.Split(a.Tools, ",")
	if len(tools) != 2 {
		fmt.Fprintln(env.Stderr, "planrun compare: -tools takes two tools separated by a comma, e.g. ollama.local,openai.vllm")
		return nil, nil, "", "", exitUsage
	}
	by := compare.ByTool(rowsA)
	for _, t := range tools {
		if _, ok := by[t]; !ok {
			fmt.Fprintf(env.Stderr, "planrun compare: no rows for tool %q in %s (tools there: %s)\n", t, pa, strings.Join(slices.Sorted(maps.Keys(by)), ", "))
			return nil, nil, "", "", exitError
		}
	}
	return by[tools[0]], by[tools[1]], tools[0], tools[1], exitOK
}

// printBreaches names each threshold crossing, with what changed between the two runs
// where it can tell.
func (a *compareArgs) printBreaches(env *Env, pa, pb string, deltas []compare.Delta, breaches []compare.Breach) {
	explain := map[string]string{}
	if a.Tools == "" {
		explain = explainPairs(env, pa, pb, deltas)
	}
	for _, b := range breaches {
		kind := "regression"
		if b.Inconclusive {
			kind = "indeterminate"
		}
		fmt.Fprintf(env.Stderr, "planrun compare: %s: %s%s\n", kind, b, explain[b.Row])
	}
}

// gateExit is the exit code of a comparison that judged rows, and its last line: a
// crossing fails, an answer that cannot tell change from noise is indeterminate
// (failing under strict), and a gate that judged and found nothing passes.
func gateExit(env *Env, breaches []compare.Breach, thresholds []compare.Threshold, judged compare.Judged, strict bool) int {
	if failing := compare.Failing(breaches, strict); len(failing) > 0 {
		fmt.Fprintf(env.Stderr, "planrun compare: %d threshold crossing(s) in %d row(s) compared\n", len(failing), judged.Rows)
		return exitRegression
	}
	if len(breaches) > 0 {
		fmt.Fprintf(env.Stderr, "planrun compare: gate indeterminate: %d answer(s) in %d row(s) compared cannot tell change from noise (above; -fail-on-indeterminate fails them)\n",
			len(breaches), judged.Rows)
		return exitIndeterminate
	}
	if len(thresholds) > 0 {
		line := fmt.Sprintf("gate passed: %d threshold(s) judged on %d row(s), %d figure(s)", len(thresholds), judged.Rows, judged.Figures)
		fmt.Fprintf(env.Stderr, "planrun compare: %s\n", strings.Join(append([]string{line}, judged.Notes...), "; "))
	}
	return exitOK
}

// bindFlags binds compare's flags to a.
func (a *compareArgs) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.Tools, "tools", "", "compare two tools within one result set: -tools ollama.local,openai.vllm")
	fs.BoolVar(&a.Markdown, "markdown", false, "write Markdown instead of an aligned text table")
	fs.StringVar(&a.Out, "o", "", "write to this file instead of stdout")
	fs.BoolVar(&a.JSON, "json", false, "write JSON: every row with every figure (A, B, Δ%) and the gate's breaches")
	fs.StringVar(&a.Fields, "fields", "", "figures to show, comma-separated, or 'all' (default: ttft_p50_s,tpot_p50_ms,output_tok_s,vram_peak_gb)")
	fs.Var(&a.FailOn, "fail-on", "exit 5 when a figure's change crosses this: 'ttft_p99_s>+10%' (repeatable)")
	fs.BoolVar(&a.FailOnIndeterminate, "strict", false, "the same as -fail-on-indeterminate")
	a.bindBaseline(fs)
	a.bindCI(fs)
}

// nothingCompared says why no pair of rows was judged: the two sides are one run, or
// their rows' keys differ (and how).
func nothingCompared(a, b []ledger.Row, j compare.Judged) string {
	if j.Same > 0 {
		return fmt.Sprintf("A and B are the same measurements (%d row(s) of run %s on both sides); name two runs", j.Same, cmp.Or(j.SameRun, "without a run id"))
	}
	return "no row of A matches a row of B: " + compare.Mismatch(a, b, len(compare.ByTool(a)) > 1 || len(compare.ByTool(b)) > 1)
}

// noteRuns says when a side holds the rows of several runs (a ledger, or a results
// directory's): each of its cells and levels stands for the latest row, and naming one
// run directory compares that run alone.
func noteRuns(env *Env, side, path string, rows []ledger.Row) {
	ids := runIDs(rows)
	if len(ids) < 2 {
		return
	}
	const shown = 5
	list := ids
	if len(list) > shown {
		list = append(slices.Clone(ids[:shown]), fmt.Sprintf("… %d more", len(ids)-shown))
	}
	fmt.Fprintf(env.Stderr, "planrun compare: %s (%s) holds %d runs (latest first: %s); each cell and level is its latest row. Name a run directory to compare one run.\n",
		side, path, len(ids), strings.Join(list, ", "))
}

// runIDs are the runs rows come from, the latest first (by a row's end, then file
// order, as Compare picks the latest row); "" for rows of a ledger from before run ids.
func runIDs(rows []ledger.Row) []string {
	type last struct {
		ended time.Time
		at    int
	}
	runs := map[string]last{}
	for i, r := range rows {
		if old, ok := runs[r.RunID]; !ok || !r.Ended.Before(old.ended) {
			runs[r.RunID] = last{r.Ended, i}
		}
	}
	ids := slices.Sorted(maps.Keys(runs))
	sort.Slice(ids, func(i, j int) bool {
		a, b := runs[ids[i]], runs[ids[j]]
		if !a.ended.Equal(b.ended) {
			return a.ended.After(b.ended)
		}
		return a.at > b.at
	})
	return ids
}

// gateAndFields parses -fail-on and -fields; the figures a threshold names are shown
// too, so the table holds what the gate judged.
func (a *compareArgs) gateAndFields() ([]compare.Threshold, []string, error) {
	var ts []compare.Threshold
	var fields []string
	switch a.Fields {
	case "":
	case "all":
		for _, f := range compare.CompareFields {
			fields = append(fields, f.Name)
		}
	default:
		for _, f := range splitList(a.Fields) {
			if err := compare.CheckCompareField(f); err != nil {
				return nil, nil, fmt.Errorf("-fields: %v", err)
			}
			fields = append(fields, f)
		}
	}
	for _, s := range a.FailOn {
		t, err := compare.ParseThreshold(s)
		if err != nil {
			return nil, nil, err
		}
		ts = append(ts, t)
		if a.Fields == "all" {
			continue
		}
		if len(fields) == 0 && a.Fields == "" {
			fields = append(fields, compare.CompareHeadline...)
		}
		if !slices.Contains(fields, t.Field) {
			fields = append(fields, t.Field)
		}
	}
	return ts, fields, nil
}

// write renders the comparison to -o or stdout.
func (a *compareArgs) write(env *Env, deltas []compare.Delta, breaches []compare.Breach, la, lb string, fields []string, changes []compare.DecisionChange) error {
	w := env.Stdout
	if a.Out != "" {
		f, err := os.Create(a.Out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	switch {
	case a.JSON:
		return compare.WriteCompareJSON(w, deltas, la, lb, breaches, changes...)
	case a.Markdown:
		if err := compare.WriteCompareMarkdown(w, deltas, la, lb, fields...); err != nil {
			return err
		}
		if err := compare.WriteBreachesMarkdown(w, breaches); err != nil {
			return err
		}
		return compare.WriteDecisionChanges(w, changes, true)
	default:
		if err := compare.WriteCompareText(w, deltas, la, lb, fields...); err != nil {
			return err
		}
		return compare.WriteDecisionChanges(w, changes, false)
	}
}

// readDecisions are the decisions a run directory's summary.json holds (path the
// directory or its results.csv); none for a ledger, which keeps rows only.
func readDecisions(path string) []ledger.Decision {
	dir := path
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		dir = filepath.Dir(path)
		if filepath.Base(path) != ledger.ResultsFile {
			return nil
		}
	}
	f, err := os.Open(filepath.Join(dir, ledger.SummaryFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	s, err := ledger.ReadSummary(f)
	if err != nil {
		return nil
	}
	return s.Decisions
}

// compareRows pairs rows of two result sets. Two sets of one tool each pair up across
// tools (Ollama in A, vLLM in B); otherwise rows pair within the same tool, so two runs
// of a two-tool plan compare tool by tool.
func compareRows(a, b []ledger.Row) []compare.Delta {
	byA, byB := compare.ByTool(a), compare.ByTool(b)
	if len(byA) == 1 && len(byB) == 1 {
		return compare.Compare(a, b)
	}
	tools := map[string]bool{}
	for t := range byA {
		tools[t] = true
	}
	for t := range byB {
		tools[t] = true
	}
	var out []compare.Delta
	for _, t := range slices.Sorted(maps.Keys(tools)) {
		for _, d := range compare.Compare(byA[t], byB[t]) {
			d.Notes = strings.TrimSuffix("tool "+t+"; "+d.Notes, "; ")
			out = append(out, d)
		}
	}
	return out
}

// label names a result set in headers: a run directory's name, or the file's.
func label(path string) string {
	path = strings.TrimSuffix(path, "/")
	base := filepath.Base(path)
	if base == ledger.ResultsFile {
		return filepath.Base(filepath.Dir(path))
	}
	return base
}

// readRows reads a CSV ledger, or the results.csv of a run directory.
func readRows(path string) ([]ledger.Row, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, ledger.ResultsFile)
	}
	rows, err := ledger.ReadLedger(path)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s holds no result rows", path)
	}
	return rows, nil
}
