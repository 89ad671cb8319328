package apply

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/runreport"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

func newBackend(c backends.Config) (backends.Backend, error) { return connect.New(c) }

// loadPlan writes src as plan.hcl in a temp dir, beside files (name, contents, ...: a
// dataset or trace the plan reads), and loads it with url as var.url.
func loadPlan(t testing.TB, src, url string, files ...string) (*plan.Plan, []*plan.Cell) {
	t.Helper()
	dir := t.TempDir()
	files = append(files, "plan.hcl", src)
	for i := 0; i+1 < len(files); i += 2 {
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return loadPlanFile(t, filepath.Join(dir, "plan.hcl"), "url="+url)
}

// loadPlanFile loads the plan at path with vars ("name=value") and no environment, and
// expands its cells.
func loadPlanFile(t testing.TB, path string, vars ...string) (*plan.Plan, []*plan.Cell) {
	t.Helper()
	p, diags := plan.Load(path, plan.LoadOptions{Vars: vars, Getenv: func(string) string { return "" }, Placements: Placements()})
	if diags.HasErrors() {
		t.Fatalf("plan: %v", diags)
	}
	cells, diags := p.Cells()
	if diags.HasErrors() {
		t.Fatalf("cells: %v", diags)
	}
	return p, cells
}

// readSamples reads every record of a run's requests.jsonl.
func readSamples(t testing.TB, runDir string) []ledger.RequestRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(runDir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ledger.ReadRequests(f)
	if err != nil {
		t.Fatalf("requests.jsonl: %v", err)
	}
	return recs
}

// closedPort returns the URL of a port nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

const twoToolsPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "ollama" "mock" { url = var.url }
workload "w" {
  prompt_tokens = 32
  max_tokens    = 16
  concurrency   = [1, 3]
  warmup_runs   = 1
  repeat_runs   = 2
  requests      = 3
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock, backend.ollama.mock]
  workload = [workload.w]
  model_id = "mock"
}
reference "published" {
  match  = { model = "tiny" }
  ttft_s = [0.001, 0.002]
}
expect "quick" {
  condition     = result.ttft_p50_s < 0.001
  error_message = "TTFT too slow."
}
`

type countingProgress struct {
	notes    atomic.Int64
	requests atomic.Int64
	levels   atomic.Int64
	onReq    func()
}

func (c *countingProgress) Note(string, ...any)                        { c.notes.Add(1) }
func (c *countingProgress) StartLevel(*plan.Cell, plan.LoadLevel, int) {}
func (c *countingProgress) EndLevel(*plan.Cell, ledger.Row)            { c.levels.Add(1) }
func (c *countingProgress) Request(*plan.Cell, plan.LoadLevel, executor.Event) {
	c.requests.Add(1)
	if c.onReq != nil {
		c.onReq()
	}
}

func TestApplyWritesEveryOutput(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 2 * time.Millisecond}))
	defer srv.Close()
	p, cells := loadPlan(t, twoToolsPlan, srv.URL)
	prog := &countingProgress{}
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Progress: prog})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 4 {
		t.Fatalf("rows = %d, want 2 cells × 2 levels", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Status != ledger.StatusOK || r.Requests != 6 || r.Succeeded != 6 {
			t.Fatalf("%s c=%d: status %s, %d/%d ok", r.CellID, r.Concurrency, r.Status, r.Succeeded, r.Requests)
		}
		// The server's own count: 16 tokens a request, 6 measured requests.
		if r.OutputTokens != 96 || r.MaxTokens != 16 {
			t.Fatalf("%s: output tokens %d, want 96", r.CellID, r.OutputTokens)
		}
		wantSource := "usage"
		if strings.Contains(r.Tool, "ollama") {
			wantSource = "server"
		}
		if r.TokenSource != wantSource {
			t.Fatalf("%s: token source %q, want %q", r.Tool, r.TokenSource, wantSource)
		}
		// Scripted timing: TTFT 20 ms, then 15 tokens 2 ms apart. A loaded machine only
		// adds delay, so TTFT is at least the script's and well before the end.
		if r.TTFT.P50 < 0.020 || r.TTFT.P50 > r.E2E.P50-0.020 {
			t.Fatalf("%s: TTFT p50 %.4fs (E2E p50 %.4fs), scripted 0.020s", r.CellID, r.TTFT.P50, r.E2E.P50)
		}
		// The mock schedules token i at TTFT + i×TPOT from admission, so on a loaded
		// machine a late first token shortens the measured TPOT a little: the band is
		// wide; exact TPOT is asserted with an injected clock in package backends.
		if r.TPOT.P50 < 0.0015 || r.TPOT.P50 > 0.010 {
			t.Fatalf("%s: TPOT p50 %.5fs, scripted 0.002s", r.CellID, r.TPOT.P50)
		}
		if r.PromptTokensRequested != 32 || r.PromptTokensActual != 32 {
			t.Fatalf("%s: prompt tokens %d → %v, want calibrated to 32", r.CellID, r.PromptTokensRequested, r.PromptTokensActual)
		}
		if r.Verdict != "ttft_s above" || r.Reference != "published" {
			t.Fatalf("%s: reference %q verdict %q", r.CellID, r.Reference, r.Verdict)
		}
		if r.VRAMSource == "" || !math.IsNaN(r.VRAMPeakGB) {
			t.Fatalf("without a GPU the row must say why there is no VRAM figure: %q %v", r.VRAMSource, r.VRAMPeakGB)
		}
	}
	// 2 cells × 2 levels × (1 warm-up + 2 measured runs) × 3 requests.
	if n := prog.requests.Load(); n != 36 {
		t.Fatalf("progress saw %d requests, want 36", n)
	}
	if len(res.ExpectFailures) != 4 || !strings.Contains(res.ExpectFailures[0].Message, "result.ttft_p50_s = ") {
		t.Fatalf("expect failures: %v", res.ExpectFailures)
	}

	for _, name := range []string{"results.csv", "report.md", "requests.jsonl", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(res.RunDir, name)); err != nil {
			t.Fatalf("missing %s: %v", name, err)
		}
	}
	ledgerRows, err := ledger.ReadLedger(res.LedgerPath)
	if err != nil || len(ledgerRows) != 4 {
		t.Fatalf("ledger: %d rows, %v", len(ledgerRows), err)
	}
	if recs := readSamples(t, res.RunDir); len(recs) != 36 {
		t.Fatalf("requests.jsonl: %d records", len(recs))
	}
	md, _ := os.ReadFile(res.ReportPath)
	for _, want := range []string{"TPOT", "(E2E − TTFT) / (output tokens − 1)", "openai.mock", "ollama.mock"} {
		if !strings.Contains(string(md), want) {
			t.Fatalf("report.md lacks %q", want)
		}
	}
	html, _ := os.ReadFile(filepath.Join(res.RunDir, ledger.HTMLFile))
	for _, want := range []string{"<strong>TPOT</strong> = (E2E − TTFT) / (output tokens − 1)", "openai.mock", "ollama.mock", "<svg"} {
		if !strings.Contains(string(html), want) {
			t.Fatalf("report.html lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(res.RunDir, strings.TrimSuffix(runreport.LatencyChartFile, ".svg")+".png")); err != nil {
		t.Fatalf("the latency chart has no PNG: %v", err)
	}
	m, err := ledger.ReadManifest(filepath.Join(res.RunDir, "manifest.json"))
	if err != nil || m.PlanHash != p.Hash || len(m.Cells) != 2 || m.Ended.IsZero() || m.ServerVersions["ollama.mock"] == "" {
		t.Fatalf("manifest: %+v %v", m, err)
	}

	// A second apply appends to the ledger, with one header.
	if _, err := Run(context.Background(), Options{Plan: p, Cells: cells[:1], NewBackend: newBackend, GPU: gpu.Open(), Now: func() time.Time { return time.Now().Add(time.Hour) }}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(res.LedgerPath)
	recsCSV, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil || len(recsCSV) != 1+4+2 {
		t.Fatalf("ledger after two applies: %d records (want header + 6), %v", len(recsCSV), err)
	}
}

func TestFailingServerIsRecordedAndRunGoesOn(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{APIKey: "sekret"}))
	defer srv.Close()
	src := strings.Replace(twoToolsPlan, `backend "openai" "mock" { url = "${var.url}/v1" }`,
		`backend "openai" "mock" {
  url = "${var.url}/v1"
  api_key_env = "MOCK_KEY"
}`, 1)
	p, cells := loadPlan(t, src, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: func(c backends.Config) (backends.Backend, error) {
		c.Getenv = func(k string) string {
			if k == "MOCK_KEY" {
				return "wrong"
			}
			return ""
		}
		return connect.New(c)
	}, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	ok, failed, _, _ := res.Counts()
	if ok != 1 || failed != 1 {
		t.Fatalf("cells ok=%d failed=%d, want the openai cell failed and the ollama cell ok", ok, failed)
	}
	for _, r := range res.Rows {
		if r.Tool != "openai.mock" {
			continue
		}
		// The probe's test request is refused: the cell fails at once, nothing measured.
		if r.Status != ledger.StatusFailed || r.Requests != 0 || !strings.Contains(r.Notes, "401") {
			t.Fatalf("openai row: status %s, %d requests, notes %q; want failed before measuring with the 401", r.Status, r.Requests, r.Notes)
		}
		if !strings.Contains(r.Notes, "Authorization: Bearer") || strings.Contains(r.Notes, "wrong") {
			t.Fatalf("401 note must say how to send the key and never show it: %q", r.Notes)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(res.RunDir, "requests.jsonl"))
	if strings.Contains(string(raw), "wrong") {
		t.Fatal("the API key leaked into requests.jsonl")
	}
	if strings.Contains(string(raw), "openai.mock") {
		t.Fatal("requests were sent to a backend whose key the probe saw refused")
	}
}

func TestInterruptThenResumeLosesAndDuplicatesNothing(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	p, cells := loadPlan(t, twoToolsPlan, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	prog := &countingProgress{}
	// Interrupt during the second cell's first level: 12 requests per level.
	prog.onReq = func() {
		if prog.requests.Load() == 24+5 {
			cancel()
		}
	}
	res, err := Run(ctx, Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Progress: prog, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Fatal("not interrupted")
	}
	ok, _, interrupted, _ := res.Counts()
	if ok != 1 || interrupted != 1 {
		t.Fatalf("ok=%d interrupted=%d", ok, interrupted)
	}
	res2, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Resume: res.RunDir})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Interrupted {
		t.Fatal("resume interrupted")
	}
	if ok, failed, _, _ := res2.Counts(); ok != 2 || failed != 0 {
		t.Fatalf("after resume ok=%d failed=%d", ok, failed)
	}
	rows, err := ledger.ReadLedger(filepath.Join(res.RunDir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	complete := map[string]int{}
	for _, r := range rows {
		if r.Status == ledger.StatusOK {
			complete[fmt.Sprintf("%s@%d", r.CellID, r.Concurrency)]++
		}
	}
	if len(complete) != 4 {
		t.Fatalf("complete levels after resume: %v, want all 4", complete)
	}
	for k, n := range complete {
		if n != 1 {
			t.Fatalf("%s measured %d times: resume duplicated a complete level", k, n)
		}
	}
}

func TestResumeRefusesAnotherPlan(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, twoToolsPlan, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells[:1], NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	p2, cells2 := loadPlan(t, strings.Replace(twoToolsPlan, "max_tokens    = 16", "max_tokens    = 8", 1), srv.URL)
	_, err = Run(context.Background(), Options{Plan: p2, Cells: cells2, NewBackend: newBackend, GPU: gpu.Open(), Resume: res.RunDir})
	if err == nil || !strings.Contains(err.Error(), "different plan") {
		t.Fatalf("resume of another plan: %v", err)
	}
}

func TestGoalSweepStopsAtCapacity(t *testing.T) {
	// Two queue slots: from concurrency 4 on, half the requests wait a whole request
	// (10 ms + 7×8 ms) before their first token (about 76 ms), so the p90 TTFT goal of
	// 45 ms breaks there, with a wide margin either side of the 10 ms the others see.
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 10 * time.Millisecond, TPOT: 8 * time.Millisecond, QueueSlots: 2}))
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "sweep" {
  prompt_tokens = 8
  max_tokens    = 8
  concurrency   = [1, 2, 4, 8]
  warmup_runs   = 0
  repeat_runs   = 1
  goal          = result.ttft_p90_s < 0.045
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.sweep]
}
`, srv.URL)
	prog := &noteRecorder{}
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Progress: prog})
	if err != nil {
		t.Fatal(err)
	}
	var goals []string
	for _, r := range res.Rows {
		goals = append(goals, fmt.Sprintf("c=%d %s", r.Concurrency, r.Goal))
	}
	if strings.Join(goals, ", ") != "c=1 met, c=2 met, c=4 missed" {
		t.Fatalf("sweep rows: %v (want it to stop after the first missed level)", goals)
	}
	if !strings.Contains(res.Rows[2].Notes, "goal missed: result.ttft_p90_s = ") {
		t.Fatalf("missed row notes: %q", res.Rows[2].Notes)
	}
	if !strings.Contains(prog.text(), `goal of workload "sweep" missed after c=2: capacity at the goal is c=2,`) {
		t.Fatalf("no capacity note in %q", prog.notes)
	}
}

func TestRequestRateLevels(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "ollama" "mock" { url = var.url }
workload "open" {
  prompt_tokens = 8
  max_tokens    = 4
  concurrency   = 2
  request_rate  = [200, 400]
  arrival       = "constant"
  requests      = 6
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.ollama.mock]
  workload = [workload.open]
}
`, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0].RequestRate != 200 || res.Rows[1].RequestRate != 400 {
		t.Fatalf("want one row per rate, got %d rows", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Requests != 6 || r.Succeeded != 6 || r.Concurrency != 2 {
			t.Fatalf("rate %g: %d/%d ok at c=%d", r.RequestRate, r.Succeeded, r.Requests, r.Concurrency)
		}
	}
	rows, err := ledger.ReadLedger(filepath.Join(res.RunDir, "results.csv"))
	if err != nil || rows[1].RequestRate != 400 {
		t.Fatalf("request rate not in the CSV: %v", err)
	}
}

func TestRunDirectoriesNeverMix(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, twoToolsPlan, srv.URL)
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	var dirs []string
	for i := 0; i < 2; i++ {
		res, err := Run(context.Background(), Options{Plan: p, Cells: cells[:1], NewBackend: newBackend, GPU: gpu.Open(), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, res.RunDir)
	}
	if filepath.Base(dirs[0]) != "plan-2026-12-01T10-00-00" || filepath.Base(dirs[1]) != "plan-2026-12-01T10-00-00-2" {
		t.Fatalf("run dirs %v: two runs in the same second must not share a directory", dirs)
	}

	// A ledger with another header is refused before anything is created.
	ledger := filepath.Join(p.Dir, "results", "results.csv")
	if err := os.WriteFile(ledger, []byte("some,other,header\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at = at.Add(time.Minute)
	if _, err := Run(context.Background(), Options{Plan: p, Cells: cells[:1], NewBackend: newBackend, GPU: gpu.Open(), Now: now}); err == nil {
		t.Fatal("a foreign ledger was accepted")
	}
	if _, err := os.Stat(filepath.Join(p.Dir, "results", "plan-2026-12-01T10-01-00")); !os.IsNotExist(err) {
		t.Fatalf("a refused run left its directory behind: %v", err)
	}
}

// A run directory is named for the plan's file, or for Options.Name, before its start
// time; a name that is no plain file name is refused before anything is created.
func TestRunDirectoryNames(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	p, cells := loadPlan(t, twoToolsPlan, srv.URL)
	at := time.Date(2026, 12, 1, 23, 13, 33, 0, time.UTC)
	opts := Options{Plan: p, Cells: cells[:1], NewBackend: newBackend, GPU: gpu.Open(), Now: func() time.Time { return at }}
	opts.Name = "nightly_h200.v2"
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Base(res.RunDir); got != "nightly_h200.v2-2026-12-01T23-13-33" {
		t.Fatalf("run dir %s, want nightly_h200.v2-2026-12-01T23-13-33", got)
	}
	if id := readManifest(t, res.RunDir).RunID; !strings.HasPrefix(id, "nightly_h200.v2-2026-12-01T23-13-33-") {
		t.Fatalf("run id %q does not start with the run directory's name", id)
	}
	for _, bad := range []string{"../up", "a/b", ".hidden", "-flag", "with space", strings.Repeat("x", 65)} {
		opts.Name = bad
		if _, err := Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "run name") {
			t.Errorf("name %q: err %v, want a refusal naming the run name", bad, err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(p.Dir, "results"))
	if len(ents) != 2 { // the ledger and the one run
		t.Fatalf("refused names left entries behind: %v", ents)
	}

	// A run directory named the old way (its start time alone) resumes as before.
	old := filepath.Join(p.Dir, "results", "2026-12-01T23-13-33")
	if err := os.Rename(res.RunDir, old); err != nil {
		t.Fatal(err)
	}
	opts.Name = ""
	opts.Resume = old
	if res, err = Run(context.Background(), opts); err != nil || res.RunDir != old {
		t.Fatalf("resuming %s: run dir %v, %v", old, res, err)
	}
	opts.Resume = ""

	// A plan file whose name is no safe file name still names a safe directory.
	odd := filepath.Join(p.Dir, ".my plan (v2).hcl")
	if err := os.Rename(p.Path, odd); err != nil {
		t.Fatal(err)
	}
	p2, cells2 := loadPlanFile(t, odd, "url="+srv.URL)
	res, err = Run(context.Background(), Options{Plan: p2, Cells: cells2[:1], NewBackend: newBackend, GPU: gpu.Open(), Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Base(res.RunDir); got != "my-plan--v2--2026-12-01T23-13-33" {
		t.Fatalf("run dir %s, want my-plan--v2--2026-12-01T23-13-33", got)
	}
}

// A cell that failed before measuring (its backend was down) is tried again on resume,
// and its row is replaced by the measured ones.
func TestResumeRetriesCellsThatWereNotMeasured(t *testing.T) {
	url := closedPort(t) // down for the first run
	p, cells := loadPlan(t, twoToolsPlan, url)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if _, failed, _, _ := res.Counts(); failed != 2 || len(res.Rows) != 2 || res.Rows[0].Requests != 0 {
		t.Fatalf("first run: %d failed cells, %d rows; want both cells failed before measuring, one row each", failed, len(res.Rows))
	}

	addr := strings.TrimPrefix(url, "http://")
	l, err := net.Listen("tcp", addr) // the server is up now
	if err != nil {
		t.Skipf("port %s was taken meanwhile: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(mockserver.New(mockserver.Config{}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	res, err = Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Resume: res.RunDir})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _, _ := res.Counts(); ok != 2 {
		t.Fatalf("resumed: %d cells ok, want both: %+v", ok, res.Cells)
	}
	rows := latestRows(res.Rows)
	if len(rows) != 4 {
		t.Fatalf("resumed: %d rows, want 2 cells × 2 levels", len(rows))
	}
	for _, r := range rows {
		if r.Status != ledger.StatusOK || r.Requests == 0 {
			t.Fatalf("%s c=%d: %s with %d requests after resume", r.CellID, r.Concurrency, r.Status, r.Requests)
		}
	}
}

// One backend block serves two hosts when a matrix url follows the cell's hardware: each
// host gets its own client, so each cell's requests reach its own host.
func TestApplyMatrixURLKeysBackendByHost(t *testing.T) {
	var hits [2]atomic.Int64
	var urls [2]string
	for i := range urls {
		h := mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			h.ServeHTTP(w, r)
		}))
		defer srv.Close()
		urls[i] = srv.URL
	}
	src := `
variable "url" { type = string }
variable "other" {
  type    = string
  default = "` + urls[1] + `"
}
backend "openai" "vllm" { url = "${var.url}/v1" }
hardware "a" { host = "host-a" }
hardware "b" { host = "host-b" }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  hardware = [hardware.a, hardware.b]
  workload = [workload.w]
  model_id = "mock"
  url      = matrix.hardware.host == "host-a" ? "${var.url}/v1" : "${var.other}/v1"
}
`
	p, cells := loadPlan(t, src, urls[0])
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off()})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _, _ := res.Counts(); ok != 2 {
		t.Fatalf("cells: %+v", res.Cells)
	}
	for i := range hits {
		if hits[i].Load() == 0 {
			t.Errorf("host %d got no request: both cells went to one host", i)
		}
	}
}

// A remote hardware block's DCGM exporter gives its rows their VRAM figure, and every
// row says where its VRAM figure came from.
func TestApplyDCGMMonitor(t *testing.T) {
	prom, err := os.ReadFile(filepath.Join("..", "telemetry", "serverstats", "testdata", "dcgm.prom"))
	if err != nil {
		t.Fatal(err)
	}
	var scrapes atomic.Int64
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		w.Write(prom)
	}))
	defer exporter.Close()
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond}))
	defer srv.Close()
	src := `
variable "url" { type = string }
backend "openai" "vllm" { url = "${var.url}/v1" }
hardware "a" {
  host = "gpu-a"
  telemetry {
    dcgm = "` + exporter.URL + `/metrics"
  }
}
hardware "b" { host = "gpu-b" }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1]
  warmup_runs   = 0
  repeat_runs   = 1
  requests      = 2
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.vllm]
  hardware = [hardware.a, hardware.b]
  workload = [workload.w]
  model_id = "mock"
}
`
	p, cells := loadPlan(t, src, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || scrapes.Load() == 0 {
		t.Fatalf("%d rows, %d scrapes", len(res.Rows), scrapes.Load())
	}
	for _, r := range res.Rows {
		switch r.Hardware {
		case "a":
			// 128344 MiB used on GPU 0, nothing on GPU 1.
			if want := 128344.0 * (1 << 20) / 1e9; math.Abs(r.VRAMPeakGB-want) > 1e-9 || r.VRAMSource != "dcgm exporter "+exporter.URL+"/metrics (framebuffer used, peak)" {
				t.Errorf("hardware a: VRAM peak %v GB from %q, want %v GB from the exporter", r.VRAMPeakGB, r.VRAMSource, want)
			}
		case "b":
			if !math.IsNaN(r.VRAMPeakGB) || !strings.HasPrefix(r.VRAMSource, "none: remote host gpu-b without telemetry") {
				t.Errorf("hardware b: VRAM peak %v GB from %q, want none", r.VRAMPeakGB, r.VRAMSource)
			}
		}
	}
}

// TestPoissonScheduleFollowsTheSeed checks that the workload's seed reaches the open
// loop: each measured run's requests are scheduled exactly at the offsets the seed's
// Poisson draw gives, and another seed gives another schedule.
func TestPoissonScheduleFollowsTheSeed(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	schedules := func(seed int) [][]time.Duration {
		p, cells := loadPlan(t, fmt.Sprintf(`
variable "url" { type = string }
backend "ollama" "mock" { url = var.url }
workload "open" {
  prompt_tokens = 8
  max_tokens    = 2
  concurrency   = 4
  request_rate  = [200]
  arrival       = "poisson"
  requests      = 6
  warmup_runs   = 1
  repeat_runs   = 2
  seed          = %d
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.ollama.mock]
  workload = [workload.open]
}
`, seed), srv.URL)
		res, recs := runSamples(t, p, cells)
		if len(res.Rows) != 1 || res.Rows[0].Succeeded != 12 {
			t.Fatalf("seed %d: %d rows, want one with 12 requests", seed, len(res.Rows))
		}
		got := make([][]time.Duration, 2)
		for _, r := range recs {
			if r.Warmup {
				continue
			}
			if !r.Paced {
				t.Fatalf("seed %d: %s has no schedule", seed, r.ID)
			}
			got[r.Run] = append(got[r.Run], r.Scheduled)
		}
		for run, at := range got {
			slices.Sort(at)
			want := executor.Schedule(200, "poisson", 6, uint64(seed)+uint64(run)*7919)
			if !slices.Equal(at, want) {
				t.Fatalf("seed %d run %d: scheduled at %v, the seed's schedule is %v", seed, run, at, want)
			}
		}
		return got
	}
	a, b := schedules(42), schedules(43)
	if slices.Equal(a[0], b[0]) {
		t.Fatalf("seeds 42 and 43 gave the same schedule %v", a[0])
	}
}
