package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/apply"
	"github.com/planrun/planrun/plan"
)

// exampleSteps are the examples the docs send a user to after a step that fills .tools/,
// with that step as the docs name it and the script that is it.
var exampleSteps = []struct{ example, step, script string }{
	{"slurm.hcl", "make quickstart", "scripts/quickstart.sh"},
	{"gateway.hcl", "scripts/install-litellm.sh", "scripts/install-litellm.sh"},
}

// toolsWritten is what a script leaves under .tools/, from the paths its commands name
// ("$root/.tools/quickstart-25m"), comments aside: a rename in the script shows here.
func toolsWritten(t *testing.T, script string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", script))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	re := regexp.MustCompile(`"\$root/\.tools/([\w./-]+)"`)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s names nothing under $root/.tools/", script)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// serverPaths are the relative and absolute paths an example's managed servers use: a
// command's program and arguments, setup commands, environment values, each resolved
// against the server's dir as the server would.
func serverPaths(p *plan.Plan) []string {
	var out []string
	for _, s := range p.Servers {
		args := slices.Clone(s.Spec.Command)
		for _, c := range s.Spec.Setup {
			args = append(args, c...)
		}
		for _, v := range s.Spec.Env {
			args = append(args, v)
		}
		for _, a := range args {
			if !strings.Contains(a, "/") || strings.Contains(a, "://") || strings.HasPrefix(a, "-") || strings.ContainsAny(a, " $") {
				continue // not a path: a flag, a URL, a shell line
			}
			if !filepath.IsAbs(a) {
				a = filepath.Join(s.Spec.Dir, a)
			}
			out = append(out, a)
		}
	}
	return out
}

// Every path an example's servers use under .tools/ is one that the step the docs run
// before it writes (examples/slurm.hcl once read .tools/quickstart/Modelfile after the
// quickstart had moved to .tools/quickstart-25m/), every other relative path is in the
// clone, and each doc that sends a user to the example names the step.
func TestExamplesUseWhatTheirStepLeaves(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(root, ".tools")
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append(docs, "../../README.md")
	examples, _ := filepath.Glob("../../examples/*.hcl")
	for _, f := range examples {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			p, diags := plan.Load(f, plan.LoadOptions{Getenv: func(string) string { return "" }, Placements: apply.Placements()})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var written []string
			i := slices.IndexFunc(exampleSteps, func(s struct{ example, step, script string }) bool { return s.example == name })
			if i >= 0 {
				for _, w := range toolsWritten(t, exampleSteps[i].script) {
					written = append(written, filepath.Join(tools, w))
				}
			}
			for _, path := range serverPaths(p) {
				rel, err := filepath.Rel(tools, path)
				switch {
				case err == nil && !strings.HasPrefix(rel, ".."):
					if i < 0 {
						t.Errorf("a server uses %s, under .tools/: add the step the docs run first to exampleSteps", path)
					} else if !slices.ContainsFunc(written, func(w string) bool { return path == w || strings.HasPrefix(path, w+"/") }) {
						t.Errorf("a server uses %s, which `%s` does not write (it writes %v)", path, exampleSteps[i].step, written)
					}
				case strings.HasPrefix(path, root+"/"):
					if _, err := os.Stat(path); err != nil {
						t.Errorf("a server uses %s, which is not in the clone: %v", path, err)
					}
				}
			}
			if i < 0 {
				return
			}
			// Each paragraph of the docs that runs the example (with the text before its command
			// block) names the step.
			mentioned := false
			for _, d := range docs {
				b, err := os.ReadFile(d)
				if err != nil {
					t.Fatal(err)
				}
				paras := strings.Split(string(b), "\n\n")
				for j, para := range paras {
					if strings.Contains(para, "examples/"+name) && strings.Contains(para, "apply") {
						mentioned = true
						if j > 0 && strings.HasPrefix(para, "    ") {
							para = paras[j-1] + "\n\n" + para // a command block, after the text that leads to it
						}
						if !strings.Contains(para, exampleSteps[i].step) {
							t.Errorf("%s runs examples/%s without naming `%s` first:\n%s", d, name, exampleSteps[i].step, para)
						}
					}
				}
			}
			if !mentioned {
				t.Logf("no doc runs examples/%s", name)
			}
		})
	}
}

// The README's commands written `planrun …` run after a step it names first that puts
// planrun on PATH: `make install`, a Makefile target that builds it into $(BINDIR),
// /usr/local/bin unless set (after `make build` or `make quickstart` nothing is on PATH).
func TestReadmePlanrunOnPath(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`(?m)^    planrun `).FindIndex(readme)
	install := strings.Index(string(readme), "    make install ")
	if first == nil || install < 0 || install > first[0] {
		t.Fatalf("README runs `planrun …` (at byte %v) before a `make install` line (at %d)", first, install)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\ninstall:\n\tscripts/build-planrun.sh \"$(BINDIR)/planrun\"", "\nBINDIR ?= /usr/local/bin\n"} {
		if !strings.Contains(string(mk), want) {
			t.Errorf("Makefile lacks %q", want)
		}
	}
}
