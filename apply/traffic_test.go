package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/load/traffic"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// runSamples applies a plan against a fresh mock server and returns the result with the
// measured requests of requests.jsonl.
func runSamples(t testing.TB, p *plan.Plan, cells []*plan.Cell) (*Result, []ledger.RequestRecord) {
	t.Helper()
	// A temporary ledger and results directory: the examples' plans would otherwise
	// write their results into examples/.
	tmp := t.TempDir()
	if !slices.ContainsFunc(p.Outputs, func(o *plan.Output) bool { return o.Kind == "csv" }) {
		p.Outputs = append(p.Outputs, &plan.Output{Kind: "csv", Path: filepath.Join(tmp, "results.csv")})
	}
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true,
		ResultsDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	var measured []ledger.RequestRecord
	for _, r := range readSamples(t, res.RunDir) {
		if !r.Warmup {
			measured = append(measured, r)
		}
	}
	return res, measured
}

// requestIndex is n of a request id ".../req<n>": the index of its drawn shape.
func requestIndex(t testing.TB, id string) int {
	t.Helper()
	n, err := strconv.Atoi(id[strings.LastIndex(id, "/req")+4:])
	if err != nil {
		t.Fatalf("request id %q: %v", id, err)
	}
	return n
}

// examples/datasets.hcl against the mock: every prompt is a dataset row (the mock counts
// words, so its count is the row's words plus the request's prefix), every output has
// its drawn length, and the manifest names the file by its SHA-256.
func TestApplyDatasetsExample(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/datasets.hcl", "url="+srv.URL+"/v1", "model=mock")
	res, recs := runSamples(t, p, cells)
	for _, r := range res.Rows {
		if r.Status != ledger.StatusOK || r.Succeeded != r.Requests || r.EarlyStops != 0 {
			t.Fatalf("c=%d: status %s, %d/%d ok, %d early stops", r.Concurrency, r.Status, r.Succeeded, r.Requests, r.EarlyStops)
		}
	}
	rowWords := map[int]bool{}
	if _, err := dataset.Scan(p.Datasets[0].Spec, func(r dataset.Row) error { rowWords[r.PromptWords] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	seenOut := map[int]bool{}
	for _, r := range recs {
		if !rowWords[r.PromptTokens-1] || r.PromptTokens-1 < 4 {
			t.Fatalf("%s: %d prompt tokens is no dataset row of at least 4 words plus the prefix", r.ID, r.PromptTokens)
		}
		if r.MaxTokens < 16 || r.MaxTokens > 128 || r.OutputTokens != r.MaxTokens {
			t.Fatalf("%s: drew %d output tokens, got %d: want the drawn length in [16, 128]", r.ID, r.MaxTokens, r.OutputTokens)
		}
		seenOut[r.MaxTokens] = true
	}
	if len(recs) != 2*2*16 || len(seenOut) < 8 {
		t.Fatalf("%d measured requests with %d distinct output lengths", len(recs), len(seenOut))
	}
	raw, _ := os.ReadFile(p.Datasets[0].Spec.Path)
	sum := sha256.Sum256(raw)
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Datasets["questions"]; d.SHA256 != hex.EncodeToString(sum[:]) || d.Rows != 200 || d.Kept == 0 || d.Format != "jsonl" {
		t.Fatalf("manifest dataset = %+v", d)
	}
}

const drawnPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = normal(300, 60, 50, 1000)
  max_tokens    = uniform(8, 40)
  concurrency   = 16
  requests      = 400
  warmup_runs   = 0
  repeat_runs   = 1
  seed          = 3
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
`

// Drawn lengths arrive as drawn, on the server's own count: each prompt within 2% of
// its draw, and over the run the mean and spread of the declared distributions within
// a few percent.
func TestDrawnLengthsReachTheServer(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, drawnPlan, srv.URL)
	res, recs := runSamples(t, p, cells)
	if len(recs) != 400 {
		t.Fatalf("%d measured requests, want 400", len(recs))
	}
	if !strings.Contains(res.Rows[0].Notes, "tokens/word") {
		t.Errorf("row notes %q do not give the prompt fit", res.Rows[0].Notes)
	}
	drawn := traffic.DrawShapes(p.Workloads[0], dataset.Sample{})
	var in, out []float64
	for _, r := range recs {
		n := requestIndex(t, r.ID)
		if want := drawn[n].PromptTokens; math.Abs(float64(r.PromptTokens-want)) > 0.02*float64(want) {
			t.Fatalf("%s: the server counted %d prompt tokens, drawn %d", r.ID, r.PromptTokens, want)
		}
		if r.OutputTokens != drawn[n].MaxTokens {
			t.Fatalf("%s: %d output tokens, drawn %d", r.ID, r.OutputTokens, drawn[n].MaxTokens)
		}
		in, out = append(in, float64(r.PromptTokens)), append(out, float64(r.OutputTokens))
	}
	check := func(what string, xs []float64, mean, sd float64) {
		var s, sq float64
		for _, x := range xs {
			s += x
			sq += x * x
		}
		m := s / float64(len(xs))
		d := math.Sqrt(sq/float64(len(xs)) - m*m)
		if math.Abs(m-mean) > 0.03*mean || math.Abs(d-sd) > 0.08*sd {
			t.Errorf("%s: mean %.1f sd %.1f, declared %.1f and %.1f", what, m, d, mean, sd)
		}
	}
	check("prompt tokens", in, 300, 60)
	check("output tokens", out, 24, math.Sqrt((33*33-1)/12.0))
}

// stream = false against the mock, through both protocols: E2E and the server's token
// counts are measured, TTFT and TPOT are unavailable (NaN, an empty cell), not invented.
func TestApplyNonStreamed(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 5 * time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	src := strings.Replace(twoToolsPlan, "prompt_tokens = 32", "prompt_tokens = 32\n  stream = false", 1)
	// A non-streamed workload has no TTFT, so the plan refuses an expect on it.
	src = strings.Replace(src, "result.ttft_p50_s < 0.001", "result.e2e_p50_s < 0.001", 1)
	p, cells := loadPlan(t, src, srv.URL)
	res, recs := runSamples(t, p, cells)
	sent := 0
	for _, r := range res.Rows {
		sent += r.Requests
	}
	if len(res.Rows) != 2*2 || sent == 0 || len(recs) != sent {
		// Without these the checks below pass on a run that sent nothing.
		t.Fatalf("%d rows (want 2 tools × 2 levels) of %d requests, %d raw records", len(res.Rows), sent, len(recs))
	}
	for _, r := range res.Rows {
		if r.Status != ledger.StatusOK || r.OutputTokens != 16*r.Requests || r.E2E.P50 < 0.005+0.015 {
			t.Fatalf("%s c=%d: status %s, %d output tokens, E2E p50 %.4f", r.Tool, r.Concurrency, r.Status, r.OutputTokens, r.E2E.P50)
		}
		if !math.IsNaN(r.TTFT.P50) || !math.IsNaN(r.TPOT.P50) || !strings.Contains(r.Notes, "TTFT, TPOT and ITL unavailable") {
			t.Fatalf("%s: TTFT %v, TPOT %v, notes %q: want both unavailable, and said", r.Tool, r.TTFT.P50, r.TPOT.P50, r.Notes)
		}
	}
	for _, r := range recs {
		if !r.Unstreamed || r.PromptTokens != 32 {
			t.Fatalf("%s: unstreamed %v, %d prompt tokens", r.ID, r.Unstreamed, r.PromptTokens)
		}
	}
}

const corpusPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
dataset "book" {
  format       = "text"
  path         = "book.txt"
  prompt_words = 50
}
workload "w" {
  dataset       = dataset.book
  prompt_tokens = uniform(20, 120)
  max_tokens    = 4
  requests      = 30
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
`

// A text corpus is cut into prompts of the drawn lengths, on the server's count.
func TestApplyTextCorpus(t *testing.T) {
	var book strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&book, "word%d ", i)
		if i%13 == 0 {
			book.WriteString("\n")
		}
	}
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, corpusPlan, srv.URL, "book.txt", book.String())
	_, recs := runSamples(t, p, cells)
	drawn := traffic.DrawShapes(p.Workloads[0], dataset.Sample{})
	for _, r := range recs {
		n := requestIndex(t, r.ID)
		if want := drawn[n].PromptTokens; want < 20 || want > 120 || math.Abs(float64(r.PromptTokens-want)) > 0.02*float64(want) {
			t.Fatalf("%s: the server counted %d prompt tokens, drawn %d", r.ID, r.PromptTokens, want)
		}
	}
	if len(recs) != 30 {
		t.Fatalf("%d requests", len(recs))
	}
}

// A malformed dataset line stops apply with file:line before the server sees a request.
// validate refuses such a file too (plan/datasetscan.go); apply's own check is for a
// file written after the plan was loaded, or too large for validate to read.
func TestApplyRefusesMalformedDataset(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	src := strings.NewReplacer(`format       = "text"`, `format = "jsonl"`, "book.txt", "rows.jsonl", "prompt_words = 50", "").Replace(corpusPlan)
	p, cells := loadPlan(t, src, srv.URL, "rows.jsonl", "{\"prompt\": \"a b\"}\n")
	if err := os.WriteFile(p.Datasets[0].Spec.Path, []byte("{\"prompt\": \"a b\"}\n{\"prompt\": 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
	if err == nil || !strings.Contains(err.Error(), "rows.jsonl:2:") {
		t.Fatalf("err = %v, want rows.jsonl:2", err)
	}
	if n := mock.Stats().Requests; n != 0 {
		t.Fatalf("the server got %d requests", n)
	}
}

// A Mooncake trace's rows give each request its input and output length (replay at the
// trace's timestamps is a later step; here they are sent as a closed loop).
func TestApplyMooncakeLengths(t *testing.T) {
	var trace strings.Builder
	for i := range 12 {
		fmt.Fprintf(&trace, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%d]}\n", i*10, 40+i*30, 3+i, i)
	}
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	src := strings.NewReplacer(`format       = "text"`, `format = "mooncake"`, "book.txt", "trace.jsonl", "prompt_words = 50", "",
		"uniform(20, 120)", `"dataset"`, "max_tokens    = 4", `max_tokens = "dataset"`, "requests      = 30", "requests = 12").Replace(corpusPlan)
	p, cells := loadPlan(t, src, srv.URL, "trace.jsonl", trace.String())
	_, recs := runSamples(t, p, cells)
	if len(recs) != 12 {
		t.Fatalf("%d requests", len(recs))
	}
	for _, r := range recs {
		n := requestIndex(t, r.ID)
		in := 40 + n*30
		if math.Abs(float64(r.PromptTokens-in)) > 0.02*float64(in) || r.OutputTokens != 3+n {
			t.Fatalf("%s: %d prompt and %d output tokens, the trace says %d and %d", r.ID, r.PromptTokens, r.OutputTokens, in, 3+n)
		}
	}
}

// Drawn lengths past the model's context (the mock's max_model_len is 4096) fail the
// cell with a clear error before the server sees a request.
func TestApplyRefusesLengthsPastTheContext(t *testing.T) {
	mock := mockserver.New(mockserver.Config{})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, strings.Replace(drawnPlan, "uniform(8, 40)", "uniform(3000, 5000)", 1), srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Status != "failed" || !strings.Contains(res.Cells[0].Notes, "past the 4096-token context the server gives model \"mock\"") {
		t.Fatalf("cells = %+v", res.Cells)
	}
	// The probe's one tiny request (does the server report usage?) and nothing else.
	if n := mock.Stats().Requests; n != 1 {
		t.Fatalf("the server got %d requests, want only the probe's", n)
	}
}
