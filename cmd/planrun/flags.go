package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/planrun/planrun/internal/suggest"
)

// Every subcommand builds its flag set with newFlagSet or newUsageFlagSet and parses it
// with parseArgs or parseFlags, so -h, flag errors and exit codes behave alike everywhere.

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// planFlags are the flags every command that reads a plan shares (validate, plan,
// apply, probe): variables, cell selection and colour.
type planFlags struct {
	Vars     stringList
	VarFiles stringList
	Only     stringList
	Except   stringList
	NoColor  bool
	// machine is set by a command whose stdout is for a program (JSON, a batch script,
	// YAML): the load's warnings then go to stderr, so the output still parses.
	machine bool
}

func (f *planFlags) bind(fs *flag.FlagSet) {
	fs.Var(&f.Vars, "var", "set a variable: -var 'name=value' (repeatable)")
	fs.Var(&f.VarFiles, "var-file", "read variables from an HCL file of name = value (repeatable)")
	fs.Var(&f.Only, "only", "keep only cells whose id matches this glob; * spans '/' (repeatable)")
	fs.Var(&f.Except, "except", "drop cells whose id matches this glob (repeatable)")
	fs.BoolVar(&f.NoColor, "no-color", false, "no colour in diagnostics")
}

// newFlagSet makes a command's flag set whose -h prints a usage line and description.
func newFlagSet(env *Env, name, operands, description string) *flag.FlagSet {
	return newUsageFlagSet(env.Stderr, name,
		fmt.Sprintf("Usage: planrun %s [flags] %s\n\n%s\n\nFlags:\n", name, operands, description))
}

// newUsageFlagSet makes a command's flag set whose -h prints usage, as given, above the
// flags; for commands whose usage is more than one line and a description.
func newUsageFlagSet(w io.Writer, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, whose flags may follow the operands, and returns the operands.
// The flag set has already printed any error; flag.ErrHelp means -h was given.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		// The flag package prints the usage on -h and on a bad flag alike; a bad flag
		// gets the error, a did-you-mean and one line, not the 50 lines of every flag.
		full := fs.Usage
		fs.Usage = func() {}
		err := fs.Parse(args)
		fs.Usage = full
		if errors.Is(err, flag.ErrHelp) {
			full()
			return nil, err
		}
		if err != nil {
			suggestFlag(fs, err)
			fmt.Fprintf(fs.Output(), "Run 'planrun %s -h' for its usage.\n", fs.Name())
			return nil, err
		}
		if fs.NArg() == 0 {
			return operands, nil
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// suggestFlag adds a did-you-mean under the flag package's error for an unknown flag.
func suggestFlag(fs *flag.FlagSet, err error) {
	given, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := suggest.Nearest(given, names); s != "" {
		fmt.Fprintf(fs.Output(), "planrun %s: unknown flag -%s. Did you mean -%s?\n", fs.Name(), given, s)
	}
}

// parseArgs parses flags (which may follow the operands) and takes exactly n operands
// into dst. ok is false when the command should return code.
func parseArgs(fs *flag.FlagSet, args []string, n int, dst ...*string) (code int, ok bool) {
	operands, err := parseFlags(fs, args)
	if err != nil {
		return flagErrorCode(err), false
	}
	if len(operands) != n {
		fmt.Fprintf(fs.Output(), "planrun %s: expected %d argument(s), got %d\n", fs.Name(), n, len(operands))
		fs.Usage()
		return exitUsage, false
	}
	for i := range dst {
		*dst[i] = operands[i]
	}
	return exitOK, true
}

// flagErrorCode is the exit code after parseFlags failed: -h is not a failure.
func flagErrorCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// usageExit reports an error from a command's flag parsing (or its checks of the values)
// on stderr and returns the exit code; -h exits 0 and prints nothing more.
func usageExit(env *Env, command string, err error) int {
	if !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(env.Stderr, "planrun %s: %v\n", command, err)
	}
	return flagErrorCode(err)
}

// hasFlag says whether args set the flag name, before parsing, for commands whose
// operands depend on a flag.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// splitList splits a comma-separated flag value into its items, trimmed, without empty ones.
func splitList(s string) []string {
	var items []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return items
}

// parseCounts reads a comma-separated list of positive numbers of unit (e.g. streams);
// the error names the first item that is not one.
func parseCounts(s, unit string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number of %s", f, unit)
		}
		ns = append(ns, n)
	}
	return ns, nil
}
