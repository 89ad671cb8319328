package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/planrun/planrun/history"
	"github.com/planrun/planrun/report"
)

// exitInsufficient is the exit code of a rolling-baseline gate that found too few
// earlier runs for some figure (with -insufficient exit, the default).
const exitInsufficient = 7

// baselineFlags are the rolling baseline's flags, shared by compare and apply.
type baselineFlags struct {
	Baseline     string
	Key          string
	Insufficient string
}

func (b *baselineFlags) bind(fs interface {
	StringVar(p *string, name, value, usage string)
}) {
	fs.StringVar(&b.Baseline, "baseline", "", "judge the run against the median of each cell's last N runs before it: last:N (N ≥ 3)")
	fs.StringVar(&b.Key, "key", "", "with -baseline: environment fields baseline runs must share besides the cell, e.g. server_version")
	fs.StringVar(&b.Insufficient, "insufficient", "exit", "with -baseline, a figure with too few earlier runs: exit (code 7), pass, or fail (code 5)")
}

// gate parses the baseline flags and thresholds.
func (b *baselineFlags) gate(failOn []string) (history.Baseline, error) {
	var g history.Baseline
	n, err := history.ParseLast(b.Baseline)
	if err != nil {
		return g, err
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
		t, err := report.ParseThreshold(s)
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
func (b *baselineFlags) judgeBaseline(env *Env, command, path string, g history.Baseline, o outputFlags) ([]history.Judgement, int) {
	set, err := history.Load(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun %s: %v\n", command, err)
		return nil, exitError
	}
	run, err := set.RunAt(path)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun %s: %v\n", command, err)
		return nil, exitError
	}
	js, err := history.Judge(set, run.ID, g)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun %s: %v\n", command, err)
		return nil, exitError
	}
	if err := o.write(env, func(w io.Writer) error { return writeJudgements(w, js, run.ID, o) }); err != nil {
		fmt.Fprintf(env.Stderr, "planrun %s: %v\n", command, err)
		return js, exitError
	}
	return js, b.verdictExit(env, command, js, run.ID, g.N)
}

// verdictExit says each regression and insufficient figure and returns the exit code.
func (b *baselineFlags) verdictExit(env *Env, command string, js []history.Judgement, runID string, n int) int {
	if len(js) == 0 {
		fmt.Fprintf(env.Stderr, "planrun %s: gate failed: run %s has no measured row to judge\n", command, runID)
		return exitNothingCompared
	}
	regressed, insufficient := history.Failing(js)
	for _, j := range regressed {
		fmt.Fprintf(env.Stderr, "planrun %s: regression: %s\n", command, j)
	}
	for _, j := range insufficient {
		fmt.Fprintf(env.Stderr, "planrun %s: %s\n", command, j)
	}
	switch {
	case len(regressed) > 0 || (len(insufficient) > 0 && b.Insufficient == "fail"):
		fmt.Fprintf(env.Stderr, "planrun %s: gate failed: %d regressed, %d insufficient data, of %d figure(s) of run %s against last:%d\n",
			command, len(regressed), len(insufficient), len(js), runID, n)
		return exitRegression
	case len(insufficient) > 0 && b.Insufficient == "exit":
		fmt.Fprintf(env.Stderr, "planrun %s: %d of %d figure(s) have insufficient data (-insufficient pass or fail decides them)\n",
			command, len(insufficient), len(js))
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

func (o outputFlags) write(env *Env, f func(io.Writer) error) error {
	if o.Out == "" {
		return f(env.Stdout)
	}
	return report.WriteFileAtomic(o.Out, f)
}

// writeJudgements writes the verdicts as a table, Markdown or JSON.
func writeJudgements(w io.Writer, js []history.Judgement, runID string, o outputFlags) error {
	if o.JSON {
		type jsonJudgement struct {
			Cell     string              `json:"cell"`
			Figure   string              `json:"figure"`
			Verdict  history.Verdict     `json:"verdict"`
			Value    *float64            `json:"value"`
			Median   *float64            `json:"baseline_median"`
			Band     *float64            `json:"noise_band"`
			Change   *float64            `json:"change_pct"`
			Baseline []string            `json:"baseline_runs"`
			Changes  []history.EnvChange `json:"environment_changes"`
			Message  string              `json:"message"`
		}
		out := struct {
			Run        string          `json:"run"`
			Judgements []jsonJudgement `json:"judgements"`
		}{Run: runID, Judgements: []jsonJudgement{}}
		for _, j := range js {
			out.Judgements = append(out.Judgements, jsonJudgement{j.Key.String(), j.Asked, j.Verdict, num(j.Value), num(j.Median),
				num(j.Band), num(j.Change), j.Baseline, j.Changes, j.String()})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	sep, head := "\t", "CELL\tFIGURE\tRUN\tBASELINE MEDIAN\tCHANGE\tNOISE BAND\tVERDICT\tCHANGES"
	if o.Markdown {
		sep, head = " | ", "| cell | figure | run | baseline median | change | noise band | verdict | changes |\n|---|---|---|---|---|---|---|---|"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Run %s against each cell's rolling baseline:\n%s\n", runID, head)
	for _, j := range js {
		cells := []string{j.Key.String(), j.Asked, "—", "—", "—", "—", string(j.Verdict), ""}
		if j.Verdict != history.Insufficient {
			cells[1] = j.Field
			cells[2], cells[3] = history.FormatValue(j.Value), history.FormatValue(j.Median)
			cells[4], cells[5] = fmt.Sprintf("%+.1f%%", j.Change), fmt.Sprintf("±%.1f%%", j.Band/math.Abs(j.Median)*100)
			cells[7] = j.Explain
		}
		line := strings.Join(cells, sep)
		if o.Markdown {
			line = "| " + line + " |"
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// rollingBaseline is compare -baseline last:N RUN.
func (a *compareArgs) rollingBaseline(env *Env, path string) int {
	g, err := a.gate(a.FailOn)
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun compare: %v\n", err)
		return exitUsage
	}
	_, code := a.judgeBaseline(env, "compare", path, g, outputFlags{a.Out, a.JSON, a.Markdown})
	return code
}
