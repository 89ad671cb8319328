package apply

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The reports' language and percentiles are the last choice of a block that takes them;
// other kinds' blocks (which plan gives the default language) choose nothing.
func TestReportChoices(t *testing.T) {
	tests := []struct {
		name     string
		outs     []*plan.Output
		language string
		pcts     string
	}{
		{"none", nil, "", "[]"},
		{"csv only", []*plan.Output{{Kind: "csv", Language: "en", Percentiles: []int{50, 90, 95, 99}}}, "", "[]"},
		{"markdown", []*plan.Output{{Kind: "markdown", Language: "zh", Percentiles: []int{50}}}, "zh", "[50]"},
		{"last report wins", []*plan.Output{
			{Kind: "markdown", Language: "zh", Percentiles: []int{50}},
			{Kind: "html", Language: "en", Percentiles: []int{90, 99}},
			{Kind: "jsonl", Language: "zh", Percentiles: []int{95}},
		}, "en", "[90 99]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			language, pcts := reportChoices(tt.outs)
			if language != tt.language || fmt.Sprint(pcts) != tt.pcts {
				t.Errorf("reportChoices = %q %v, want %q %s", language, pcts, tt.language, tt.pcts)
			}
		})
	}
}

const outputsPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  max_tokens  = 8
  concurrency = [1, 2]
  warmup_runs = 0
  repeat_runs = 1
  requests    = 2
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
output "markdown" { path = "out/r.md" }
output "html" {
  path        = "out/r.html"
  language    = "zh"
  percentiles = [50, 99]
}
output "summary" { path = "out/s.json" }
`

// Each rendered kind of report.Outputs is written into the run directory and to every
// path its blocks declare, the same bytes; both reports follow the last report block's
// language and percentiles.
func TestDeclaredOutputs(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	p, cells := loadPlan(t, outputsPlan, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ declared, runFile string }{
		{"out/r.md", ledger.MarkdownFile}, {"out/r.html", ledger.HTMLFile}, {"out/s.json", ledger.SummaryFile},
	} {
		declared, err := os.ReadFile(filepath.Join(p.Dir, f.declared))
		if err != nil {
			t.Fatalf("the declared output: %v", err)
		}
		inRun, err := os.ReadFile(filepath.Join(res.RunDir, f.runFile))
		if err != nil {
			t.Fatalf("the run directory's: %v", err)
		}
		if !bytes.Equal(declared, inRun) {
			t.Errorf("%s differs from the run directory's %s", f.declared, f.runFile)
		}
	}
	html, _ := os.ReadFile(filepath.Join(res.RunDir, ledger.HTMLFile))
	if !strings.Contains(string(html), "TTFT p99 (s)") || strings.Contains(string(html), "TTFT p90 (s)") {
		t.Error("report.html does not show the html block's percentiles [50, 99]")
	}
	md, _ := os.ReadFile(res.ReportPath)
	if !strings.Contains(string(md), "模型") {
		t.Error("report.md is not in the html block's language (zh), the last report block's")
	}
}
