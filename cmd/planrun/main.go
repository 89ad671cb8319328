// Command planrun turns LLM-serving benchmarks into reproducible, version-controlled
// evaluation plans. The command is thin: each subcommand parses its flags into a struct,
// calls the library packages, and renders the result.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/planrun/planrun/internal/suggest"
)

// Exit codes, one meaning each; exitCodes says what each means to apply and compare.
const (
	exitOK              = 0
	exitError           = 1 // invalid plan, failed command, failed probe
	exitUsage           = 2 // bad command line
	exitExpectation     = 3 // apply ran, but an expect block failed
	exitCellsFailed     = 4 // apply ran, but at least one cell failed
	exitRegression      = 5 // a -fail-on threshold was crossed, or a figure regressed against -baseline
	exitNothingCompared = 6 // a -fail-on gate had no pair of rows to judge
	// exitInsufficient: not enough history: with -baseline last:N (and -insufficient
	// exit, the default), some figure has fewer earlier runs than a baseline needs, and
	// nothing regressed. Its own outcome: apply and compare say "not enough history",
	// neither passed nor failed.
	exitInsufficient = 7
	// exitIndeterminate: a -fail-on gate could not tell change from noise: the interval
	// of some row's change straddles its threshold, and nothing failed.
	exitIndeterminate = 8
	exitInterrupted   = 130
)

// exitCodes is planrun's one table of exit codes, in the order apply picks among them
// (the first that holds wins), with what each means to apply and to compare ("" where
// that command never returns it). apply -h, compare -h and the README's table
// (docs_test.go keeps it equal) are written from it; a line break in a meaning continues the line.
var exitCodes = []struct {
	code           int
	apply, compare string
}{
	{exitError, "the plan is invalid, or the outputs could not be written", "a result set could not be read"},
	{exitInterrupted, "interrupted (Ctrl-C)", ""},
	{exitExpectation, "an expect block failed", ""},
	{exitCellsFailed, "a cell failed (before measuring, or every request of a level failed)", ""},
	{exitRegression, "with -baseline: a figure regressed against the cell's rolling baseline", "a -fail-on threshold was crossed"},
	{exitNothingCompared, "", "a -fail-on gate judged nothing: no row of A matches a row of B, or A and B are\nthe same run (with -baseline: the run has no measured row)"},
	{exitInsufficient, "with -baseline: not enough history (a figure has < 3 earlier runs; -insufficient pass/fail decides)",
		"with -baseline: a figure has insufficient data (fewer than 3 earlier runs of its\ncell and level), unless -insufficient pass or fail says otherwise"},
	{exitIndeterminate, "with -baseline: a figure moved beyond the noise band, but on too few requests to tell (-fail-on-indeterminate makes it 5)", "a -fail-on threshold is indeterminate: the interval of a row's change straddles\nits limit (it says how many requests would resolve it); -fail-on-indeterminate makes it 5"},
	{exitUsage, "bad command line (nothing was run)", "bad command line"},
	{exitOK, "every cell ok and every expect block held", "compared (a gate: passed, and it says on what)"},
}

// exitCodeMeaning is what code means to command ("apply" or "compare").
func exitCodeMeaning(command string, i int) string {
	if command == "apply" {
		return exitCodes[i].apply
	}
	return exitCodes[i].compare
}

// exitCodeHelp is command's exit code list for its -h: apply's in the order it picks
// among them, compare's by code.
func exitCodeHelp(command string) string {
	order := make([]int, len(exitCodes))
	for i := range order {
		order[i] = i
	}
	head := "Exit codes:"
	if command == "apply" {
		head = "Exit codes (when several apply, the first in this list wins):"
	} else {
		slices.SortFunc(order, func(i, j int) int { return exitCodes[i].code - exitCodes[j].code })
	}
	var b strings.Builder
	b.WriteString(head)
	for _, i := range order {
		if m := exitCodeMeaning(command, i); m != "" {
			fmt.Fprintf(&b, "\n  %-4d %s", exitCodes[i].code, strings.ReplaceAll(m, "\n", "\n       "))
		}
	}
	return b.String()
}

// Env is the process's I/O, built once in main so tests can inject fakes.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	Stdin  io.Reader
	Getenv func(string) string
	// Interrupts delivers Ctrl-C (SIGINT/SIGTERM); nil in tests that send none.
	Interrupts <-chan os.Signal
	// IsTerminal reports whether stdout is a terminal (progress bars vs plain lines).
	IsTerminal bool
}

// command is one subcommand. run returns the process exit code. A hidden command is
// one planrun starts itself (an agent): it runs, but usage does not list it.
type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
	hidden  bool
}

// commands is the table of subcommands; each lives in its own file.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, env *Env, args []string) int) {
	commands[name] = command{summary: summary, run: run}
}

// registerHidden registers a command usage does not list.
func registerHidden(name, summary string, run func(ctx context.Context, env *Env, args []string) int) {
	commands[name] = command{summary: summary, run: run, hidden: true}
}

func main() {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	env := &Env{
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Stdin:      os.Stdin,
		Getenv:     os.Getenv,
		Interrupts: sig,
		IsTerminal: isTerminal(os.Stdout),
	}
	os.Exit(Main(context.Background(), env, os.Args[1:]))
}

// Main runs planrun with args (without the program name) and returns the exit code.
func Main(ctx context.Context, env *Env, args []string) int {
	if len(args) == 2 && args[0] == "help" {
		// `planrun help apply` is `planrun apply -h`, on stdout as help asked for is.
		cmd, ok := lookupCommand(env, args[1])
		if !ok {
			return exitUsage
		}
		helpEnv := *env
		helpEnv.Stderr = env.Stdout
		return cmd.run(ctx, &helpEnv, []string{"-h"})
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	cmd, ok := lookupCommand(env, args[0])
	if !ok {
		return exitUsage
	}
	return cmd.run(ctx, env, args[1:])
}

// lookupCommand finds a command by name, or says on stderr that there is none, with a
// did-you-mean and the list of commands.
func lookupCommand(env *Env, name string) (command, bool) {
	cmd, ok := commands[name]
	if !ok {
		names := make([]string, 0, len(commands))
		for n := range commands {
			names = append(names, n)
		}
		fmt.Fprintf(env.Stderr, "planrun: unknown command %q.%s\n\n", name, suggest.DidYouMean(name, names))
		usage(env.Stderr)
	}
	return cmd, ok
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: planrun <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'planrun help <command>' (or 'planrun <command> -h') for a command's flags.")
}
