package plan

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

const varsPlan = `
variable "n" {
  type    = number
  default = 1
}
variable "s" {
  default = "d"
}
backend "ollama" "local" {}
workload "w" {
  concurrency = var.n
  prompt      = var.s
}
matrix "m" {
  model    = ["a"]
  tool     = [backend.ollama.local]
  workload = [workload.w]
}
`

// Variable values take precedence default < environment < -var-file < -var.
func TestVariablePrecedence(t *testing.T) {
	dir := t.TempDir()
	varFile := dir + "/v.hcl"
	if err := writeFile(varFile, "n = 3\n"); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"PLANRUN_VAR_n": "2", "PLANRUN_VAR_s": "from-env"}[k]
	}
	tests := []struct {
		name     string
		opts     LoadOptions
		wantN    int
		wantText string
	}{
		{"default", LoadOptions{Getenv: noEnv}, 1, "d"},
		{"env", LoadOptions{Getenv: env}, 2, "from-env"},
		{"var-file over env", LoadOptions{Getenv: env, VarFiles: []string{varFile}}, 3, "from-env"},
		{"var over all", LoadOptions{Getenv: env, VarFiles: []string{varFile}, Vars: []string{"n=4", "s=x=y"}}, 4, "x=y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, diags := LoadFiles(dir, map[string][]byte{"p.hcl": []byte(varsPlan)}, tt.opts)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			w := p.Workloads[0]
			if w.Concurrency[0] != tt.wantN || w.Prompt != tt.wantText {
				t.Errorf("concurrency %v prompt %q, want %d %q", w.Concurrency, w.Prompt, tt.wantN, tt.wantText)
			}
		})
	}
	// A changed value changes the hash even though no file changed.
	a, _ := LoadFiles(dir, map[string][]byte{"p.hcl": []byte(varsPlan)}, LoadOptions{Getenv: noEnv})
	b, _ := LoadFiles(dir, map[string][]byte{"p.hcl": []byte(varsPlan)}, LoadOptions{Getenv: noEnv, Vars: []string{"n=2"}})
	if a.Hash == b.Hash {
		t.Error("hash ignores variable values")
	}
}

func TestVariableErrors(t *testing.T) {
	tests := []struct {
		opts LoadOptions
		want string
	}{
		{LoadOptions{Vars: []string{"nn=2"}}, `sets "nn", which the plan does not declare. Did you mean "n"?`},
		{LoadOptions{Vars: []string{"n=abc"}}, "Invalid value for variable"},
		{LoadOptions{Vars: []string{"n=abc"}}, `-var 'n=...': "abc" is not a valid value for var.n, which is of type number.`},
		{LoadOptions{Vars: []string{"novalue"}}, "Invalid -var option"},
	}
	for _, tt := range tests {
		tt.opts.Getenv = noEnv
		_, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(varsPlan)}, tt.opts)
		if !strings.Contains(diags.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.opts.Vars, diags, tt.want)
		}
	}
}

func TestWorkloadDefaults(t *testing.T) {
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(`workload "w" {}`)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	w := p.Workloads[0]
	got := fmt.Sprintf("%d %d %v %d %d %v %s %v %d", w.PromptTokens, w.MaxTokens, w.Concurrency, w.WarmupRuns, w.RepeatRuns, w.Measure, w.Arrival, w.ForceMaxTokens, w.RequestsPerRun(4))
	if want := "128 256 [1] 3 5 [ttft tpot throughput vram] poisson true 4"; got != want {
		t.Errorf("defaults %q, want %q (the seed config's)", got, want)
	}
}

func TestBackendConfig(t *testing.T) {
	src := `
backend "taotoken" "gw" {}
backend "openai" "vllm" {
  url               = "http://127.0.0.1:8000/v1/"
  api               = "completions"
  headers           = { X-Team = "bench" }
  extra_fields      = { top_p = 0.9, stop = ["x"] }
  engine_extensions = true
  timeouts {
    connect = "2s"
    total   = "1m"
  }
}`
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	gw, vllm := p.Backends[0].Config(), p.Backends[1].Config()
	if gw.URL != "https://taotoken.net/api/v1" || gw.APIKeyEnv != "TAOTOKEN_API_KEY" || gw.API != "chat" || gw.Name != "taotoken.gw" {
		t.Errorf("taotoken defaults: %+v", gw)
	}
	if vllm.URL != "http://127.0.0.1:8000/v1" || vllm.API != "completions" || vllm.Headers["X-Team"] != "bench" ||
		vllm.ExtraFields["top_p"] != 0.9 || !vllm.EngineExtensions || vllm.Timeouts.Connect.String() != "2s" || vllm.Timeouts.Total.String() != "1m0s" {
		t.Errorf("openai config: %+v", vllm)
	}
}

func TestReferenceMatches(t *testing.T) {
	r := &Reference{Match: map[string]string{"hardware": "rtx4060", "model": "qwen2.5-7b", "quantization": "Q4_K_M", "tool": "ollama"}}
	cell := &Cell{Model: "qwen2.5-7b", Quantization: "q4_K_M",
		Backend: &Backend{Kind: "ollama", Name: "local", Addr: "ollama.local"}, Hardware: &Hardware{Name: "rtx4060"}, Workload: &Workload{Name: "short"}}
	if !r.Matches(cell) {
		t.Error("reference should match (case-insensitive quantization, tool by kind)")
	}
	other := *cell
	other.Hardware = &Hardware{Name: "rtx5090"}
	if r.Matches(&other) {
		t.Error("reference matched another card")
	}
	other.Hardware = nil
	if r.Matches(&other) {
		t.Error("reference matched a cell without hardware")
	}
}

func TestExpectCheck(t *testing.T) {
	src := `
variable "limit" {
  default = 1.5
}
expect "fast" {
  condition = result.ttft_p50_s < var.limit
  cells     = ["m/*"]
}`
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := p.Expects[0]
	for _, tt := range []struct {
		ttft float64
		want bool
	}{{1.0, true}, {2.0, false}} {
		ok, diags := e.Check(map[string]cty.Value{"ttft_p50_s": cty.NumberFloatVal(tt.ttft)})
		if ok != tt.want || diags.HasErrors() {
			t.Errorf("ttft %v: ok=%v diags=%v", tt.ttft, ok, diags)
		}
	}
	if ok, diags := e.Check(map[string]cty.Value{}); ok || !diags.HasErrors() {
		t.Error("a result without the value must fail with a diagnostic")
	}
	if !e.Applies("m/a/-/x.y/-/w") || e.Applies("n/a/-/x.y/-/w") {
		t.Error("cells globs not honoured")
	}
}

func TestSelectCells(t *testing.T) {
	var cells []*Cell
	for _, id := range []string{"q/a/q4/ollama.local/h/s", "q/a/fp8/openai.vllm/h/s", "q/b/fp8/openai.vllm/h/s", "r/a/-/taotoken.gw/-/s"} {
		cells = append(cells, &Cell{ID: id})
	}
	ids := func(cs []*Cell) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.ID)
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		only, except []string
		want, err    string
	}{
		{nil, nil, "q/a/q4/ollama.local/h/s q/a/fp8/openai.vllm/h/s q/b/fp8/openai.vllm/h/s r/a/-/taotoken.gw/-/s", ""},
		{[]string{"q/*"}, []string{"*/fp8/*"}, "q/a/q4/ollama.local/h/s", ""},
		{[]string{"*openai*", "r/*"}, nil, "q/a/fp8/openai.vllm/h/s q/b/fp8/openai.vllm/h/s r/a/-/taotoken.gw/-/s", ""},
		{[]string{"q/?/fp8/*"}, []string{"q/b/*"}, "q/a/fp8/openai.vllm/h/s", ""},
		{[]string{"nope/*"}, nil, "", `-only "nope/*" matches no cell`},
	}
	for _, tt := range tests {
		got, err := SelectCells(cells, tt.only, tt.except)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v/%v: err %v, want %q", tt.only, tt.except, err, tt.err)
			}
			continue
		}
		if err != nil || ids(got) != tt.want {
			t.Errorf("%v/%v: got %q (%v), want %q", tt.only, tt.except, ids(got), err, tt.want)
		}
	}
}

func TestWriteDiagnostics(t *testing.T) {
	src := "backend \"ollama\" \"local\" {\n  urll = \"x\"\n}\n"
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if p != nil || !diags.HasErrors() {
		t.Fatal("want an error")
	}
	files := map[string]*hcl.File{"p.hcl": {Bytes: []byte(src)}}
	var b bytes.Buffer
	WriteDiagnostics(&b, files, diags, false)
	want := "Error: Unsupported argument\n  --> p.hcl:2:3\n  |\n2 |   urll = \"x\"\n  |   ^^^^\n" +
		"An argument named \"urll\" is not expected in a backend block. Did you mean \"url\"?\n\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// A reference that matches no cell would hold nothing against its ranges, silently.
func TestReferenceMatchingNoCellWarns(t *testing.T) {
	src := varsPlan + `
reference "typo" {
  match  = { model = "qwen-nope" }
  ttft_s = [0.1, 0.2]
}
`
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, diags = p.Cells()
	if len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Reference matches no cell" ||
		!strings.Contains(diags[0].Detail, `Reference "typo" (match { model = "qwen-nope" })`) {
		t.Fatalf("diags = %v", diags)
	}
}
