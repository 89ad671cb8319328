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
	"sort"
	"syscall"

	"github.com/planrun/planrun/internal/suggest"
)

// Exit codes, one meaning each (documented in the README).
const (
	exitOK          = 0
	exitError       = 1 // invalid plan, failed command, failed probe
	exitUsage       = 2 // bad command line
	exitExpectation = 3 // apply ran, but an expect block failed
	exitCellsFailed = 4 // apply ran, but at least one cell failed
	// exitInsufficient: not enough history: with -baseline last:N (and -insufficient
	// exit, the default), some figure has fewer earlier runs than a baseline needs, and
	// nothing regressed. Its own outcome: apply and compare say "not enough history",
	// neither passed nor failed. (5 and 6, a gate's regression and a gate with nothing
	// to judge, are in compare.go.)
	exitInsufficient = 7
	exitInterrupted  = 130
)

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

// command is one subcommand. run returns the process exit code.
type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) int
}

// commands is the table of subcommands; each lives in its own file.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, env *Env, args []string) int) {
	commands[name] = command{summary: summary, run: run}
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
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'planrun help <command>' (or 'planrun <command> -h') for a command's flags.")
}
