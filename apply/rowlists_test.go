package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// listsPlan has a session workload and an agent loop, two levels each, on the queue
// scheduler's hardware: every row carries per-turn figures, and the agent loop's rows
// per-step ones too, which the CSV's scalar columns do not hold.
const listsPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
hardware "pool" {
  queue { name = "batch" }
}
workload "chat" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 1
  session {
    turns    = 3
    sessions = 2
  }
}
workload "agent" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1, 2]
  warmup_runs   = 0
  repeat_runs   = 1
  tool "search" {
    parameters = { type = "object", properties = { q = { type = "string" } }, required = ["q"] }
  }
  session {
    turns    = 2
    sessions = 2
    agent {
      max_steps       = 4
      tool_latency_ms = 5
      result_tokens   = 8
    }
  }
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock]
  hardware = [hardware.pool]
  workload = [workload.chat, workload.agent]
  model_id = "mock"
}
`

// listTables are the report's tables of the rows' list figures: per turn, per session
// and per agent step.
var listTables = []string{"Turns", "Sessions", "Agent loop steps"}

// reportTable is the Markdown table under "### heading" in the run directory's report,
// one string per line; it fails the test when the report has no such table.
func reportTable(t *testing.T, dir, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ledger.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n### "+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q table", filepath.Join(dir, ledger.MarkdownFile), heading)
	}
	var table []string
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		if strings.HasPrefix(line, "|") {
			table = append(table, line)
		}
	}
	if len(table) < 3 {
		t.Fatalf("%q: no body in %q", heading, table)
	}
	return table
}

// A batch-placed run's report is written by the coordinator from the rows it reads
// back from each job's results.csv: its per-turn, per-session and per-step tables hold
// the same figures as the job's own report, rendered on the node from the rows it
// measured.
func TestBatchReportKeepsListFigures(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond, ToolCalls: 1, PrefixCache: true}))
	defer srv.Close()
	useQueue(t)
	p, cells := loadPlan(t, listsPlan, srv.URL)
	o := Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), Vars: []string{"url=" + srv.URL}, ResultsDir: t.TempDir(), Quiet: true}
	o.Jobs.Poll = 20 * time.Millisecond
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 4 {
		t.Fatalf("%d rows, want 2 cells × 2 levels", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Status != ledger.StatusOK || r.Batch.Scheduler != "queue" {
			t.Fatalf("%s c=%d: %s, placed %+v", r.CellID, r.Concurrency, r.Status, r.Batch)
		}
	}
	jobDir := filepath.Join(res.RunDir, "queue", "pool")
	for _, h := range listTables {
		got, want := reportTable(t, res.RunDir, h), reportTable(t, jobDir, h)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the run's report has\n%s\nthe job's own\n%s", h, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// summary.json's session figures (per session, per turn, per step) likewise.
	got, want := summarySessions(t, res.RunDir), summarySessions(t, jobDir)
	if got != want || !strings.Contains(want, `"per_turn":[{`) || !strings.Contains(want, `"per_step":[{`) {
		t.Errorf("summary.json sessions: the run's\n%s\nthe job's own\n%s", got, want)
	}
}

// summarySessions is the sessions member of the run directory's summary.json, each
// agent_loop's per-task figures left out: they are CSV columns, whose figures a row
// read back has to the CSV's 6 decimals.
func summarySessions(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ledger.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Sessions []map[string]any }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Sessions {
		if a, ok := s["agent_loop"].(map[string]any); ok {
			s["agent_loop"] = map[string]any{"per_step": a["per_step"]}
		}
	}
	out, err := json.Marshal(doc.Sessions)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A resumed run takes the levels already complete from its results.csv: its report's
// per-turn, per-session and per-step tables keep their figures as the first report
// showed them, beside the figures of the levels it measures again.
func TestResumedReportKeepsListFigures(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: time.Millisecond, TPOT: time.Millisecond, ToolCalls: 1, PrefixCache: true}))
	defer srv.Close()
	src := strings.NewReplacer("hardware = [hardware.pool]", "", `queue { name = "batch" }`, "").Replace(listsPlan)
	p, cells := loadPlan(t, src, srv.URL)
	o := Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Off(), ResultsDir: t.TempDir(), Quiet: true}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	first := map[string][]string{}
	for _, h := range listTables {
		first[h] = reportTable(t, res.RunDir, h)
	}

	// As if the run stopped before its last level: results.csv without that row.
	csvPath := filepath.Join(res.RunDir, ledger.ResultsFile)
	rows, err := ledger.ReadLedgerAll(csvPath)
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	last := rows[len(rows)-1]
	if err := os.Remove(csvPath); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.OpenLedger(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[:len(rows)-1] {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	o.Resume = res.RunDir
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	// Lines of the level measured again hold new figures; every other line is the first
	// report's, and the level has as many lines as before.
	again := fmt.Sprintf("| %s | %d | ", last.CellID, last.Concurrency) // closed loops: the level is its concurrency
	for _, h := range listTables {
		got, want := reportTable(t, res.RunDir, h), first[h]
		if len(got) != len(want) {
			t.Errorf("%s: %d lines after resuming, %d before:\n%s", h, len(got), len(want), strings.Join(got, "\n"))
			continue
		}
		for i := range got {
			if got[i] != want[i] && !strings.HasPrefix(want[i], again) {
				t.Errorf("%s line %d: %s after resuming, %s before", h, i, got[i], want[i])
			}
		}
	}
}
