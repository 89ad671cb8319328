package apply

import (
	"context"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The mock's /api/show says Q4_K_M for every model.
const quantPlan = `
variable "url" { type = string }
backend "ollama" "mock" { url = var.url }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "declared" {
  model        = ["tiny"]
  quantization = ["f16", "q4_k_m"]
  tool         = [backend.ollama.mock]
  workload     = [workload.w]
  model_id     = "mock"
}
`

const undeclaredPlan = `
variable "url" { type = string }
backend "ollama" "mock" { url = var.url }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "undeclared" {
  model    = ["tiny"]
  tool     = [backend.ollama.mock]
  workload = [workload.w]
  model_id = "mock"
}
`

// TestMislabelledQuantizationSendsNothing: a cell that declares f16 for a model the
// server serves as Q4_K_M fails, naming both, before any generation request reaches the
// server; the cell that declares what is served runs.
func TestMislabelledQuantizationSendsNothing(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, quantPlan, srv.URL)
	var f16 []int
	for i, c := range cells {
		if c.Quantization == "f16" {
			f16 = append(f16, i)
		}
	}
	if len(cells) != 2 || len(f16) != 1 {
		t.Fatalf("%d cells, %d declaring f16", len(cells), len(f16))
	}
	// The f16 cell alone first: the server must see no generation request at all.
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells[f16[0] : f16[0]+1], NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := mock.Stats().Requests; n != 0 {
		t.Fatalf("the server received %d generation requests for a mislabelled cell, want 0", n)
	}
	if len(res.Rows) != 1 || res.Rows[0].Status != ledger.StatusFailed {
		t.Fatalf("rows %+v", res.Rows)
	}
	if n := res.Rows[0].Notes; !strings.Contains(n, `declares quantization "f16"`) || !strings.Contains(n, "serves Q4_K_M") ||
		!strings.Contains(n, "/api/show") {
		t.Errorf("the failure does not name both quantizations and the source: %s", n)
	}

	// The cell declaring what is served runs, and says where the quantization was read.
	res, err = Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.Quantization == "q4_k_m" && (r.Status != ledger.StatusOK || !strings.Contains(r.QuantizationSource, "details.quantization_level")) {
			t.Errorf("matching cell: status %s, source %q, notes %s", r.Status, r.QuantizationSource, r.Notes)
		}
	}
	if mock.Stats().Requests == 0 {
		t.Error("the matching cell sent nothing")
	}
}

func TestUndeclaredQuantizationFilledFromServer(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, undeclaredPlan, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Progress: &noteRecorder{}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rows[0]
	if r.Status != ledger.StatusOK || r.Quantization != "" || !strings.Contains(r.Notes, "quantization Q4_K_M from ollama /api/show") {
		t.Errorf("status %s, quantization %q, notes %s", r.Status, r.Quantization, r.Notes)
	}
	// The served quantization is in its own column, read back from the ledger, and the
	// seed's table shows it in the Quant column.
	rows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(rows) != 1 || rows[0].QuantizationServed != "Q4_K_M" || rows[0].QuantShown() != "Q4_K_M" {
		t.Fatalf("ledger rows %+v, %v: want quantization_served Q4_K_M", rows, err)
	}
	md, err := os.ReadFile(res.ReportPath)
	if err != nil || !regexp.MustCompile(`\| tiny \| Q4_K_M \|`).Match(md) {
		t.Errorf("report's seed table has no Quant Q4_K_M:\n%s (%v)", md, err)
	}
}
