package plan

import (
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestNotAPlan: a source that declares nothing to run, or is not HCL at all (the seed's
// config.toml), gets one error that says so, with a subject, and no HCL parse errors.
func TestNotAPlan(t *testing.T) {
	seed, err := os.ReadFile("../examples/seed-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file, src, summary, detail string
	}{
		{"empty", "p.hcl", "", "Plan declares no cells", "no matrix block"},
		{"blank lines", "p.hcl", "\n\n   \n\t\n", "Plan declares no cells", "no matrix block"},
		{"hash comments", "p.hcl", "# a plan\n# to come\n", "Plan declares no cells", "no matrix block"},
		{"block comment", "p.hcl", "/* nothing\n here */\n// yet\n", "Plan declares no cells", "no matrix block"},
		{"blocks but no matrix", "p.hcl", "backend \"ollama\" \"o\" {}\nworkload \"w\" {}\n", "Plan declares no cells", "no matrix block"},
		{"seed config as .toml", "config.toml", string(seed), "Not a plan: a TOML config", "planrun convert config.toml"},
		{"seed config as .hcl", "config.hcl", string(seed), "Not a plan: a TOML config", "planrun convert config.hcl"},
		{"toml without tables", "settings.toml", "host = \"0.0.0.0\"\nport = 8000\n", "Not a plan: a TOML config", "planrun convert"},
		{"array of tables", "p.hcl", "[[models]]\nname = \"a\"\n", "Not a plan: a TOML config", "planrun convert"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, diags := LoadFiles(t.TempDir(), map[string][]byte{tt.file: []byte(tt.src)}, LoadOptions{Getenv: noEnv})
			if p != nil {
				_, more := p.Cells()
				diags = append(diags, more...)
			}
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("%d errors, want one %q:\n%s", len(errs), tt.summary, renderDiags(p, diags))
			}
			d := errs[0].(*hcl.Diagnostic)
			if d.Summary != tt.summary || !strings.Contains(d.Detail, tt.detail) || d.Subject == nil || d.Subject.Filename != tt.file {
				t.Fatalf("got %q (%q) at %v, want %q saying %q in %s", d.Summary, d.Detail, d.Subject, tt.summary, tt.detail, tt.file)
			}
		})
	}
}

// TestMalformedPlansGetDiagnostics: plans broken in many small ways never panic, and each
// gets at least one error with a subject in the file (nothing is sent for any).
func TestMalformedPlansGetDiagnostics(t *testing.T) {
	base := `backend "openai" "v" { url = "http://127.0.0.1:8000/v1" }
workload "w" {}
matrix "m" {
  model    = ["a"]
  tool     = [backend.openai.v]
  workload = [workload.w]
}
`
	broken := []string{
		strings.Replace(base, `"http://127.0.0.1:8000/v1"`, `"http://:8000/v1"`, 1),
		strings.Replace(base, `"http://127.0.0.1:8000/v1"`, `"http://${""}:8000/v1"`, 1),
		strings.Replace(base, `"http://127.0.0.1:8000/v1"`, `true ? null : "x"`, 1),
		strings.Replace(base, `"http://127.0.0.1:8000/v1"`, `["http://127.0.0.1"]`, 1),
		strings.Replace(base, "[backend.openai.v]", "[workload.w]", 1),
		strings.Replace(base, "[workload.w]", "[backend.openai.v]", 1),
		strings.Replace(base, "[workload.w]", "[workload.w, workload.x]", 1),
		strings.Replace(base, `["a"]`, `[]`, 1),
		strings.Replace(base, `["a"]`, `[null]`, 1),
		strings.Replace(base, `["a"]`, `{ a = 1 }`, 1),
		strings.Replace(base, "}\n", "", 1),
		strings.Replace(base, `"v" {`, `"v" `, 1),
		strings.Replace(base, "workload \"w\" {}", "workload \"w\" { dataset = \"x\" }", 1),
		strings.Replace(base, "workload \"w\" {}", "workload \"w\" { concurrency = [0] }", 1),
		strings.Replace(base, "workload \"w\" {}", "workload \"w\" {\n  replay {}\n}", 1),
		strings.Replace(base, "workload = [workload.w]", "workload = [workload.w]\n  model_id = matrix.tool.knd", 1),
		strings.Replace(base, "workload = [workload.w]", "workload = [workload.w]\n  hardware = [hardware.h]\n  notes = matrix.hardware.gpuu", 1),
		base[:len(base)/2],
		base[:len(base)/3],
		"[server]\n" + base,
		base + "\n[x]\n",
		base + "matrix \"m\" {}\n",
		base + "expect \"e\" { condition = null }\n",
		strings.Repeat("{", 50),
		"backend",
		"matrix \"m\" {",
		"\x00\x01\x02",
	}
	for i, src := range broken {
		p, diags := LoadFiles(t.TempDir(), map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
		if p != nil {
			_, more := p.Cells()
			diags = append(diags, more...)
		}
		if !diags.HasErrors() {
			t.Errorf("case %d: no error for\n%s", i, src)
			continue
		}
		for _, d := range diags.Errs() {
			if d := d.(*hcl.Diagnostic); d.Subject == nil || d.Subject.Filename != "p.hcl" {
				t.Errorf("case %d: %q without a subject in the file:\n%s", i, d.Summary, src)
			}
		}
	}
}
