package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/apply/rundir"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/internal/shell"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/runreport"
	"github.com/planrun/planrun/placement/kube"
	"github.com/planrun/planrun/placement/slurm"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/gpu"
)

func init() {
	register("apply", "run the plan's cells (here, or as Slurm or Kubernetes jobs) and write the run: CSV rows, raw requests, manifest and reports", runApply)
}

type applyArgs struct {
	planFlags
	Path        string
	Resume      string
	RunDir      string
	Results     string
	Name        string
	Quiet       bool
	Stream      bool
	Grace       time.Duration
	GPU         bool
	GPUInterval time.Duration
	FailOn      stringList
	baselineFlags
	ciFlags
}

func runApply(ctx context.Context, env *Env, args []string) (exit int) {
	var a applyArgs
	fs := newFlagSet(env, "apply", "PLAN", `Run every selected cell of the plan: warm-up runs (discarded), then the measured runs at
each concurrency level, with GPU memory sampled during the measured window. Results are
written as the run goes: the CSV ledger (appended across runs, safely by several runs at
once), and a run directory with results.csv, report.md (+ SVG and PNG charts), report.html,
requests.jsonl and manifest.json. Both go under <plan dir>/results, or -results DIR; an
output "csv" block puts the ledger at its own path.

First Ctrl-C: stop sending, let requests in flight finish (-grace), write everything and
mark the cell interrupted; resume later with the command printed, which reads the run's
own variables.hcl (-resume DIR; sensitive variables again from -var or the environment).
Second Ctrl-C: cancel at once.

`+exitCodeHelp("apply"))
	a.bindFlags(fs)
	if code, ok := parseArgs(fs, args, 1, &a.Path); !ok {
		return code
	}
	if a.Stream {
		if a.RunDir == "" {
			fmt.Fprintln(env.Stderr, "planrun apply: -stream goes with -run-dir (a Kubernetes pod's side of a run)")
			return exitUsage
		}
		end := streamRunDir(a.RunDir, env)
		defer func() { end(exit) }()
	}
	g, code := a.baselineGate(env)
	if code != exitOK {
		return code
	}
	if code, ok := a.checkName(env); !ok {
		return code
	}
	if a.Resume != "" {
		// The run's own variables, so that the plan hashes as it did; -var and -var-file
		// given now still win, and sensitive values (never saved) come from them or the
		// environment.
		if saved := filepath.Join(a.Resume, rundir.VariablesFile); isFile(saved) {
			a.VarFiles = append(stringList{saved}, a.VarFiles...)
		}
	}
	p, cells, code := a.load(env, a.Path)
	if code != exitOK {
		return code
	}
	if len(cells) == 0 {
		fmt.Fprintln(env.Stderr, "planrun apply: no cell selected (check -only/-except)")
		return exitUsage
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := watchInterrupts(env, cancel)

	res, err := apply.Run(ctx, a.options(env, p, cells, stop, args))
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun apply: %s\n", relPaths(err.Error()))
		if res == nil {
			return exitError
		}
	}
	printSummary(env, res)
	printCapacities(env, res)

	for _, f := range res.ExpectFailures {
		fmt.Fprintf(env.Stderr, "Error: %s\n", f)
	}
	code = a.gateRun(env, p, res, g, applyExitCode(err, res))
	a.printEnd(env, fs, p, res, code)
	return code
}

// options are apply's Options for the cells of p this command runs; args are its own.
func (a *applyArgs) options(env *Env, p *plan.Plan, cells []*plan.Cell, stop <-chan struct{}, args []string) apply.Options {
	var tel *gpu.Telemetry // nil: apply opens NVML
	if !a.GPU {
		tel = gpu.Off()
	}
	return apply.Options{
		Plan:           p,
		Cells:          cells,
		NewBackend:     func(c backends.Config) (backends.Backend, error) { c.Getenv = env.Getenv; return connect.New(c) },
		ResultsDir:     a.Results,
		Name:           a.Name,
		Resume:         a.Resume,
		RunDir:         a.RunDir,
		Getenv:         env.Getenv,
		Vars:           a.Vars,
		VarFiles:       a.VarFiles,
		GPU:            tel,
		SampleInterval: a.GPUInterval,
		Grace:          a.Grace,
		Stop:           stop,
		Progress:       newProgress(env.Stderr, env.IsTerminal, a.Quiet),
		Quiet:          a.Quiet,
		Command:        append([]string{"planrun", "apply"}, args...),
	}
}

// streamRunDir sends the run directory's files through this process's log (a pod's),
// which the submitting planrun reads through the Kubernetes API, until end, which
// sends the last of them and the exit code.
func streamRunDir(dir string, env *Env) (end func(exit int)) {
	s := kube.NewSender(dir, env.Stdout)
	sctx, stopSending := context.WithCancel(context.Background())
	sent := make(chan struct{})
	go func() { s.Run(sctx, 500*time.Millisecond); close(sent) }()
	return func(exit int) { stopSending(); <-sent; s.End(exit) }
}

// printEnd says how the apply ended: its cells, where its results are, and how to
// resume an interrupted run.
func (a *applyArgs) printEnd(env *Env, fs *flag.FlagSet, p *plan.Plan, res *apply.Result, code int) {
	ok, failed, interrupted, _ := res.Counts()
	dir := relPath(res.RunDir)
	switch {
	case res.Interrupted:
		fmt.Fprintf(env.Stdout, "\nApply interrupted. Cells: %d ok, %d failed, %d interrupted. Results in %s/.\nResume with: %s\n",
			ok, failed, interrupted, dir, resumeCommand(fs, dir, a.Path, p))
	case code == exitInsufficient:
		// Nothing failed and nothing regressed: the baseline has too few earlier runs.
		fmt.Fprintf(env.Stdout, "\nApply complete, not enough history for -baseline %s (exit %d). Cells: %d ok, %d failed. Results in %s/.\n",
			a.Baseline, exitInsufficient, ok, failed, dir)
	case code == exitIndeterminate:
		fmt.Fprintf(env.Stdout, "\nApply complete, indeterminate against -baseline %s (exit %d): more requests would tell. Cells: %d ok, %d failed. Results in %s/.\n",
			a.Baseline, exitIndeterminate, ok, failed, dir)
	case code != exitOK:
		fmt.Fprintf(env.Stdout, "\nApply failed! Cells: %d ok, %d failed. Results in %s/.\n", ok, failed, dir)
	default:
		fmt.Fprintf(env.Stdout, "\nApply complete! Cells: %d ok, %d failed. Results in %s/.\n", ok, failed, dir)
	}
}

// bindFlags binds apply's flags to a.
func (a *applyArgs) bindFlags(fs *flag.FlagSet) {
	a.bind(fs)
	fs.StringVar(&a.Resume, "resume", "", "continue the run in this run directory, skipping levels already complete")
	fs.StringVar(&a.RunDir, strings.TrimPrefix(slurm.NodeRunDirFlag, "-"), "", "run in this run directory as a Slurm job's node side: created or resumed, and no row appended to the plan's CSV ledger (the submitting planrun merges them)")
	fs.StringVar(&a.Results, "results", "", "directory for run directories, and for the CSV ledger (results.csv) unless an output \"csv\" names its path (default: beside the csv output, or <plan dir>/results)")
	fs.StringVar(&a.Name, "name", "", "name the run directory NAME-<start time> instead of after the plan's file (letters, digits, '.', '_', '-')")
	fs.BoolVar(&a.Quiet, "quiet", false, "no progress, only warnings and the summary")
	fs.BoolVar(&a.Stream, "stream", false, "with -run-dir: also write the run directory's rows, request records and manifest to stdout as framed lines, for the submitting planrun to read from a Kubernetes pod's log")
	fs.DurationVar(&a.Grace, "grace", 10*time.Second, "after the first Ctrl-C, how long requests in flight may finish")
	fs.BoolVar(&a.GPU, "gpu", true, "sample GPU memory, utilisation and power with NVML during each measured window")
	fs.DurationVar(&a.GPUInterval, "gpu-interval", 100*time.Millisecond, "GPU sampling interval (NVML)")
	fs.Var(&a.FailOn, "fail-on", "with -baseline: a figure judged, and the change a regression must also exceed: 'ttft_p99_s>+10%' (repeatable)")
	a.bindBaseline(fs)
	a.bindCI(fs)
}

// applyExitCode picks the exit code of a finished apply in the order of exitCodes.
func applyExitCode(err error, res *apply.Result) int {
	_, failed, _, _ := res.Counts()
	switch {
	case err != nil:
		return exitError
	case res.Interrupted:
		return exitInterrupted
	case len(res.ExpectFailures) > 0:
		return exitExpectation
	case failed > 0:
		return exitCellsFailed
	}
	return exitOK
}

// resumeCommand is the command line that continues the run in dir, to be pasted as
// printed: the flags this run was given, but not its -var and -var-file flags, whose
// values the run directory's variables.hcl holds and -resume reads (their values are
// not echoed: a sensitive one would land in a log). Sensitive variables are never
// saved: the line says to set them again.
func resumeCommand(fs *flag.FlagSet, dir, planPath string, p *plan.Plan) string {
	words := []string{"planrun", "apply", "-resume", shell.Quote(dir)}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "var", "var-file", "resume", "name": // the run directory has its name
			return
		}
		values := []string{f.Value.String()}
		if list, ok := f.Value.(*stringList); ok {
			values = *list
		}
		for _, v := range values {
			words = append(words, shell.Quote("-"+f.Name+"="+v))
		}
	})
	cmd := strings.Join(append(words, shell.Quote(planPath)), " ")
	var sensitive []string
	for _, v := range p.Variables {
		if v.Sensitive {
			sensitive = append(sensitive, v.Name)
		}
	}
	if len(sensitive) > 0 {
		cmd += fmt.Sprintf("\n(sensitive variables are not saved: set %s again, with -var or PLANRUN_VAR_<name>)", strings.Join(sensitive, ", "))
	}
	return cmd
}

// printSummary writes the result rows as an aligned table on stdout.
func printSummary(env *Env, res *apply.Result) {
	if len(res.Rows) == 0 {
		return
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tLEVEL\tSTATUS\tTTFT p50\tTPOT p50\tTOK/S\tMEMORY GB\tOK/REQ\tTOKENS\tSTABILITY\tFIDELITY\tREFERENCE")
	embeddings := false
	for _, r := range res.Rows {
		// The memory the report's table shows: the GPU's where NVML measured it, else the
		// server's processes (RSS), with its source.
		mem := runreport.MemoryShort(r)
		// Every axis of the level (rate, embeddings inputs), so two levels never print
		// as one; an embeddings row's throughput is its input tokens/s.
		tokS := fmtNum(r.OutputTokS, 1)
		if r.Inputs > 0 {
			tokS, embeddings = fmtNum(r.InputTokS, 1)+" in", true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", r.CellID, plan.LevelOf(&r), r.Status,
			fmtSeconds(r.TTFT.P50), fmtMillis(r.TPOT.P50), tokS, mem,
			r.Succeeded, r.Requests, cmp.Or(r.TokenSource, "-"), r.Stability, runreport.FidelityMark(r), cmp.Or(r.Verdict, "-"))
	}
	tw.Flush()
	if embeddings {
		fmt.Fprintln(env.Stdout, "TOK/S \"in\": an embeddings level's input tokens/s (it generates none); its stability is judged on E2E.")
	}
	printFailedCells(env, res.Cells)
	for _, d := range res.Decisions {
		fmt.Fprintln(env.Stdout)
		for _, l := range runreport.DecisionText(d) {
			fmt.Fprintln(env.Stdout, l)
		}
	}
	for _, r := range res.Rows {
		if r.Stability == "noisy" || r.Stability == "unstable" || r.Contention == ledger.ContentionContended {
			verdict := r.Stability
			if verdict != "noisy" && verdict != "unstable" {
				verdict = r.Contention
			}
			fmt.Fprintf(env.Stdout, "%s: %s.\n", verdict, runreport.StabilityAdvice(r))
			break
		}
	}
	printFailureClasses(env, res.Rows)
}

// printFailureClasses sums the rows' failed requests by class, if any failed.
func printFailureClasses(env *Env, rows []ledger.Row) {
	failures := map[string]int{}
	for _, r := range rows {
		for class, n := range r.Failures {
			failures[class] += n
		}
	}
	if len(failures) > 0 {
		var parts []string
		for class, n := range failures {
			parts = append(parts, fmt.Sprintf("%s: %d", class, n))
		}
		sort.Strings(parts)
		fmt.Fprintf(env.Stdout, "Failed requests by class: %s\n", strings.Join(parts, ", "))
	}
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// printFailedCells says why each failed cell failed, once per reason: the cells a
// missing key or a dead backend fails share one line.
func printFailedCells(env *Env, cells []ledger.CellStatus) {
	var reasons []string
	ids := map[string][]string{}
	for _, c := range cells {
		if c.Status != ledger.StatusFailed {
			continue
		}
		if ids[c.Notes] == nil {
			reasons = append(reasons, c.Notes)
		}
		ids[c.Notes] = append(ids[c.Notes], c.ID)
	}
	for _, r := range reasons {
		if len(ids[r]) == 1 {
			fmt.Fprintf(env.Stdout, "Cell %s failed: %s\n", ids[r][0], r)
		} else {
			fmt.Fprintf(env.Stdout, "Cells %s failed: %s\n", strings.Join(ids[r], ", "), r)
		}
	}
}

// relPath shows a path relative to the working directory when it is below it.
// watchInterrupts cancels on the first interrupt (stop sending, drain) and closes the
// channel it returns on the second (cancel requests in flight).
func watchInterrupts(env *Env, cancel context.CancelFunc) chan struct{} {
	stop := make(chan struct{})
	if env.Interrupts == nil {
		return stop
	}
	go func() {
		n := 0
		for range env.Interrupts {
			n++
			switch n {
			case 1:
				fmt.Fprintln(env.Stderr, "\nInterrupt: no new requests; letting requests in flight finish (Ctrl-C again to cancel them).")
				cancel()
			case 2:
				fmt.Fprintln(env.Stderr, "\nSecond interrupt: cancelling requests in flight.")
				close(stop)
			}
		}
	}()
	return stop
}

// checkName refuses a -name that is no safe file name, or one beside -resume or -run-dir,
// which name their run directory already.
func (a *applyArgs) checkName(env *Env) (int, bool) {
	if a.Name == "" {
		return exitOK, true
	}
	err := rundir.CheckName(a.Name)
	if err == nil && (a.Resume != "" || a.RunDir != "") {
		err = errors.New("-name names a new run directory; -resume and -run-dir continue one that has its name")
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "planrun apply: -name: %v\n", err)
		return exitUsage, false
	}
	return exitOK, true
}

// relPaths shortens every absolute path under the working directory in a message to a
// relative one, as relPath does for one path: apply's notes and errors name run
// directories, ledgers, datasets and logs by the absolute paths it works with.
func relPaths(msg string) string {
	cwd, err := os.Getwd()
	if err != nil || cwd == string(filepath.Separator) {
		return msg
	}
	return strings.ReplaceAll(msg, cwd+string(filepath.Separator), "")
}

func relPath(p string) string {
	if rel, err := filepath.Rel(".", p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	if abs, err := filepath.Abs("."); err == nil {
		if rel, err := filepath.Rel(abs, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}
