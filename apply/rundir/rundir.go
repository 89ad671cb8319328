// Package rundir names a run's directory and writes what it holds to repeat the run:
// <name>-<start time> under the results directory, the run's id, the plan's files and
// its variables' values as a -var-file (sensitive ones left out), and the command line
// with sensitive -var values redacted.
package rundir

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

// The run directory holds what is needed to repeat the run: the plan's files, the
// variables' values and each plan-managed server's command line, beside the results.
const (
	planCopyDir = "plan"
	// VariablesFile holds the run's variable values as a -var-file (sensitive ones left
	// out): -resume reads it, so the plan hashes as it did.
	VariablesFile = "variables.hcl"
	redacted      = "(sensitive)"
)

// ID names a run: its directory's name (its start time) and a random suffix, so
// runs started in the same second on two machines still differ.
func ID(runDir string) string {
	var b [4]byte
	rand.Read(b[:])
	return filepath.Base(runDir) + "-" + hex.EncodeToString(b[:])
}

// CopyPlan copies the plan's files into the run directory and writes the variables'
// values as a -var-file, sensitive ones left out; it returns the copies' paths in the
// run directory and the values, for the manifest.
func CopyPlan(p *plan.Plan, dir string) (files []string, vars map[string]string, err error) {
	if err := os.MkdirAll(filepath.Join(dir, planCopyDir), 0o755); err != nil {
		return nil, nil, err
	}
	names := make([]string, 0, len(p.Files))
	for name := range p.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rel := filepath.Join(planCopyDir, filepath.Base(name))
		if err := WriteFile(filepath.Join(dir, rel), p.Files[name].Bytes); err != nil {
			return nil, nil, err
		}
		files = append(files, rel)
	}
	vars, text := variableValues(p.Variables)
	return files, vars, WriteFile(filepath.Join(dir, VariablesFile), text)
}

// variableValues returns each variable's value as HCL text (redacted when sensitive),
// for the manifest, and the -var-file text that loads the plan with them.
func variableValues(vars []*plan.Variable) (map[string]string, []byte) {
	return plan.ValuesFile(vars, "# The variables of this run: planrun apply -var-file "+VariablesFile+" plan/", redacted)
}

// WriteFile writes a file of the run directory whole or not at all.
func WriteFile(path string, data []byte) error {
	return ledger.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// RedactCommand returns args with the value of each -var that sets a sensitive variable
// replaced, in either form ("-var", "name=value" or "-var=name=value").
func RedactCommand(args []string, vars []*plan.Variable) []string {
	sensitive := map[string]bool{}
	for _, v := range vars {
		sensitive[v.Name] = v.Sensitive
	}
	redact := func(assign string) string {
		name, _, ok := strings.Cut(assign, "=")
		if ok && sensitive[strings.TrimSpace(name)] {
			return name + "=" + redacted
		}
		return assign
	}
	out := slices.Clone(args)
	for i, arg := range out {
		flag := strings.TrimLeft(arg, "-")
		switch {
		case arg == flag: // an operand
		case flag == "var" && i+1 < len(out):
			out[i+1] = redact(out[i+1])
		case strings.HasPrefix(flag, "var="):
			out[i] = arg[:len(arg)-len(flag)] + "var=" + redact(strings.TrimPrefix(flag, "var="))
		}
	}
	return out
}

// New creates the run's directory, named for the run (the plan's file name, or
// -name) and its start time, as <name>-2006-01-02T15-04-05; a second run in the same
// second gets a suffix rather than mixing its files with the first's.
func New(parent, name string, started time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(parent, name+"-"+started.UTC().Format(TimeLayout))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// TimeLayout is the start time in a run directory's name.
const TimeLayout = "2006-01-02T15-04-05"

// CheckName says why name cannot name run directories (apply -name): it must be a
// plain file name, so the run directory stays inside the results directory.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("the run name is empty")
	case len(name) > 64:
		return fmt.Errorf("the run name %q is longer than 64 characters", name)
	case name[0] == '.' || name[0] == '-':
		return fmt.Errorf("the run name %q starts with %q: use a letter or digit first", name, name[:1])
	}
	for _, r := range name {
		if !safeNameRune(r) {
			return fmt.Errorf("the run name %q holds %q: use letters, digits, '.', '_' and '-' only", name, r)
		}
	}
	return nil
}

func safeNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// Name is the name part of the run's directory: name (apply -name), or the plan's file
// name with any character unsafe in a file name replaced by '-'.
func Name(name string, p *plan.Plan) string {
	if name != "" {
		return name
	}
	name = strings.TrimLeft(strings.Map(func(r rune) rune {
		if safeNameRune(r) {
			return r
		}
		return '-'
	}, PlanName(p)), ".-")
	if len(name) > 64 {
		name = name[:64]
	}
	return cmp.Or(name, "run")
}

// PlanName is the plan's file name without its extension: what a run's reports are
// titled.
func PlanName(p *plan.Plan) string {
	base := filepath.Base(p.Path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
