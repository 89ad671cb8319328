package plan

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

var update = flag.Bool("update", false, "rewrite golden files")

func noEnv(string) string { return "" }

// TestValidFiles loads every valid file, expands it and compares the cells with a golden
// listing (go test ./plan -update rewrites them).
func TestValidFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid-files/*.hcl")
	examples, _ := filepath.Glob("../examples/*.hcl")
	files = append(files, examples...)
	if len(files) < 4 {
		t.Fatalf("found only %d valid files", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, diags := Load(f, LoadOptions{Getenv: noEnv})
			if diags.HasErrors() {
				t.Fatalf("unexpected diagnostics:\n%s", renderDiags(p, diags))
			}
			cells, diags := p.Cells()
			if diags.HasErrors() {
				t.Fatalf("expanding:\n%s", renderDiags(p, diags))
			}
			got := listCells(cells)
			golden := filepath.Join("testdata/golden", strings.TrimSuffix(filepath.Base(f), ".hcl")+".cells")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./plan -update)", err)
			}
			if got != string(want) {
				t.Errorf("cells differ from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
			// Loading again gives the same ids in the same order and the same hash.
			p2, _ := Load(f, LoadOptions{Getenv: noEnv})
			cells2, _ := p2.Cells()
			if again := listCells(cells2); again != got {
				t.Errorf("second expansion differs:\n%s", again)
			}
			if p.Hash != p2.Hash || len(p.Hash) != 64 {
				t.Errorf("hash %q then %q", p.Hash, p2.Hash)
			}
		})
	}
}

func listCells(cells []*Cell) string {
	var b strings.Builder
	for _, c := range cells {
		hw, srv := "-", "-"
		if c.Hardware != nil {
			hw = c.Hardware.Name
		}
		if c.Server != nil {
			srv = c.Server.Name
		}
		fmt.Fprintf(&b, "%s backend=%s model_id=%q hardware=%s workload=%s concurrency=%v server=%s notes=%q\n",
			c.ID, c.Backend.Addr, c.ModelID, hw, c.Workload.Name, c.Workload.Concurrency, srv, c.Notes)
	}
	return b.String()
}

func renderDiags(p *Plan, diags hcl.Diagnostics) string {
	var b bytes.Buffer
	var files map[string]*hcl.File
	if p != nil {
		files = p.Files
	}
	WriteDiagnostics(&b, files, diags, false)
	return b.String()
}

// errorComment marks a line that must get an error with this summary; text after " ~ "
// must appear in the error's detail.
var errorComment = regexp.MustCompile(`# ERROR: (.+)$`)

// TestInvalidFiles walks the invalid files: each line marked "# ERROR: <summary>" must
// get exactly that error, on that line, and no other error may be reported (so no
// diagnostic lands on a correct line, and a panic fails the file).
func TestInvalidFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid-files/*.hcl")
	if len(files) == 0 {
		t.Fatal("no invalid files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := expectedErrors(t, f)
			p, diags := Load(f, LoadOptions{Getenv: noEnv})
			if p != nil {
				more := hcl.Diagnostics(nil)
				_, more = p.Cells()
				diags = append(diags, more...)
			}
			var got []string
			for _, d := range diags {
				if d.Severity != hcl.DiagError {
					continue
				}
				if d.Subject == nil {
					t.Errorf("diagnostic without a subject: %s: %s", d.Summary, d.Detail)
					continue
				}
				got = append(got, fmt.Sprintf("%d: %s", d.Subject.Start.Line, d.Summary))
				for _, w := range want {
					line, detail, ok := strings.Cut(w, " ~ ")
					if ok && line == got[len(got)-1] {
						if !strings.Contains(d.Detail, detail) {
							t.Errorf("line %s: detail %q does not say %q", line, d.Detail, detail)
						}
						got[len(got)-1] = w
					}
				}
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("errors differ\ngot:\n%s\n\nwant:\n%s\n\nfull:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), renderDiags(nil, diags))
			}
		})
	}
}

func expectedErrors(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if m := errorComment.FindStringSubmatch(sc.Text()); m != nil {
			want = append(want, fmt.Sprintf("%d: %s", line, strings.TrimSpace(m[1])))
		}
	}
	sort.Strings(want)
	return want
}

// TestTenMistakes: a plan with ten independent mistakes reports all ten, each with its
// own line, in one load.
func TestTenMistakes(t *testing.T) {
	_, diags := Load("testdata/invalid-files/ten-mistakes.hcl", LoadOptions{Getenv: noEnv})
	lines := map[int]bool{}
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil {
			lines[d.Subject.Start.Line] = true
		}
	}
	if len(diags.Errs()) != 10 || len(lines) != 10 {
		t.Fatalf("got %d errors on %d lines, want 10 on 10:\n%s", len(diags.Errs()), len(lines), renderDiags(nil, diags))
	}
}
