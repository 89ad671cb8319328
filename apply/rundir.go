package apply

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
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

// newRunID names a run: its directory's name (its start time) and a random suffix, so
// runs started in the same second on two machines still differ.
func newRunID(runDir string) string {
	var b [4]byte
	rand.Read(b[:])
	return filepath.Base(runDir) + "-" + hex.EncodeToString(b[:])
}

// copyPlan copies the plan's files into the run directory and writes the variables'
// values as a -var-file, sensitive ones left out, and lists both in the manifest.
func (a *applier) copyPlan() error {
	p, dir := a.o.Plan, a.res.RunDir
	if err := os.MkdirAll(filepath.Join(dir, planCopyDir), 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(p.Files))
	for name := range p.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	a.manifest.PlanFiles = nil
	for _, name := range names {
		rel := filepath.Join(planCopyDir, filepath.Base(name))
		if err := writeFile(filepath.Join(dir, rel), p.Files[name].Bytes); err != nil {
			return err
		}
		a.manifest.PlanFiles = append(a.manifest.PlanFiles, rel)
	}
	vars, text := variableValues(p.Variables)
	a.manifest.Variables = vars
	return writeFile(filepath.Join(dir, VariablesFile), text)
}

// variableValues returns each variable's value as HCL text (redacted when sensitive),
// and the same as a -var-file that repeats the run.
func variableValues(vars []*plan.Variable) (map[string]string, []byte) {
	values := map[string]string{}
	var b bytes.Buffer
	b.WriteString("# The variables of this run: planrun apply -var-file " + VariablesFile + " plan/\n")
	for _, v := range vars {
		if v.Sensitive {
			values[v.Name] = redacted
			fmt.Fprintf(&b, "# %s is sensitive and not copied: set it with -var or PLANRUN_VAR_%s\n", v.Name, v.Name)
			continue
		}
		text := strings.TrimSpace(string(hclwrite.TokensForValue(v.Value).Bytes()))
		values[v.Name] = text
		fmt.Fprintf(&b, "%s = %s\n", v.Name, text)
	}
	if len(values) == 0 {
		values = nil
	}
	return values, b.Bytes()
}

func writeFile(path string, data []byte) error {
	return ledger.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// recordServer notes in the manifest how a plan-managed server was started, and its
// version once its backend's probe has told it.
func (a *applier) recordServer(spec servers.Spec, version string) {
	if a.manifest.Servers == nil {
		a.manifest.Servers = map[string]ledger.ServerRun{}
	}
	s := a.manifest.Servers[spec.Name]
	s.Command, s.Dir, s.Setup = spec.Command, spec.Dir, spec.Setup
	s.EnvNames = nil
	for name := range spec.Env {
		s.EnvNames = append(s.EnvNames, name)
	}
	slices.Sort(s.EnvNames)
	if version != "" {
		s.Version = version
	}
	a.manifest.Servers[spec.Name] = s
}

// redactCommand returns args with the value of each -var that sets a sensitive variable
// replaced, in either form ("-var", "name=value" or "-var=name=value").
func redactCommand(args []string, vars []*plan.Variable) []string {
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

// setIn sets (*m)[k] = v, making the map first: the manifest's maps stay nil (and out
// of manifest.json) until a run has something to put in them.
func setIn[M ~map[K]V, K comparable, V any](m *M, k K, v V) {
	if *m == nil {
		*m = M{}
	}
	(*m)[k] = v
}
