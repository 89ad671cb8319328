package main

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
)

// sharedLedgerPlan writes many short rows (two tools × six levels) to the default
// ledger beside the plan, and its raw lines to one shared output "jsonl", as every
// example without an output "csv" block shares examples/results/results.csv.
const sharedLedgerPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
backend "ollama" "mock" { url = var.url }
workload "w" {
  prompt_tokens = 16
  max_tokens    = 4
  concurrency   = [1, 2, 3, 4, 5, 6]
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["tiny"]
  tool     = [backend.openai.mock, backend.ollama.mock]
  workload = [workload.w]
  model_id = "mock"
}
output "jsonl" { path = "shared/raw.jsonl" }
`

// Eight planrun processes apply at once, round after round, on one ledger and one
// JSONL output: every row each run wrote to its own results.csv must be in the shared
// ledger, whole (field for field), every raw line whole and counted, and compare must
// read the ledger. PLANRUN_LEDGER_ROUNDS sets the rounds (default 4).
func TestConcurrentAppliesShareOneLedger(t *testing.T) {
	rounds := 4
	if s := os.Getenv("PLANRUN_LEDGER_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	const procs = 8
	bin := planrunBinary(t)
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	plan := writePlan(t, sharedLedgerPlan)
	dir := filepath.Dir(plan)
	runDirRe := regexp.MustCompile(`Results in (.+)/\.`)
	var runDirs []string
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		outs := make([][]byte, procs)
		errs := make([]error, procs)
		for i := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(bin, "apply", "-quiet", "-gpu=false", "-var", "url="+srv.URL, plan)
				cmd.Dir = dir
				outs[i], errs[i] = cmd.CombinedOutput()
			}()
		}
		wg.Wait()
		for i := range procs {
			m := runDirRe.FindSubmatch(outs[i])
			if errs[i] != nil || m == nil || !bytes.Contains(outs[i], []byte("Apply complete!")) {
				t.Fatalf("round %d, apply %d: %v\n%s", round, i, errs[i], outs[i])
			}
			runDirs = append(runDirs, filepath.Join(dir, string(m[1])))
		}
	}

	ledgerRows, err := ledger.ReadLedger(filepath.Join(dir, "results", "results.csv"))
	if err != nil {
		t.Fatalf("the shared ledger does not read back: %v", err)
	}
	inLedger := map[string][]string{}
	for _, r := range ledgerRows {
		inLedger[ledgerKey(r)] = r.Record()
	}
	want := 0
	requests := map[string]int{}
	for _, rd := range runDirs {
		own, err := ledger.ReadLedger(filepath.Join(rd, "results.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if len(own) != 12 {
			t.Fatalf("%s holds %d rows, want 12", rd, len(own))
		}
		for _, r := range own {
			want++
			requests[r.RunID] += r.Requests
			got, ok := inLedger[ledgerKey(r)]
			if !ok {
				t.Errorf("row %s of %s is missing from the shared ledger", ledgerKey(r), rd)
			} else if !slices.Equal(got, r.Record()) {
				t.Errorf("row %s differs in the shared ledger", ledgerKey(r))
			}
		}
	}
	if len(ledgerRows) != want {
		t.Errorf("shared ledger has %d rows, the %d runs wrote %d", len(ledgerRows), len(runDirs), want)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "shared", "raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := ledger.ReadRequests(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the shared JSONL does not read back: %v", err)
	}
	lines := map[string]int{}
	for _, s := range samples {
		lines[s.RunID]++
	}
	for id, n := range requests {
		if lines[id] != n {
			t.Errorf("run %s: %d raw lines, its rows count %d requests", id, lines[id], n)
		}
	}

	code, out, errb := runCmd(t, "", "compare", filepath.Join(dir, "results", "results.csv"), runDirs[0])
	if code != exitOK {
		t.Fatalf("compare on the shared ledger: exit %d\n%s\n%s", code, out, errb)
	}
}

func ledgerKey(r ledger.Row) string {
	return fmt.Sprintf("%s %s c=%d", r.RunID, r.CellID, r.Concurrency)
}

// -results DIR moves the ledger with the run directories, unless an output "csv" names
// its path.
func TestResultsFlagMovesTheLedger(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	for _, tc := range []struct {
		name, output, ledger string
	}{
		{"no csv output", "", "elsewhere/results.csv"},
		{"csv output", `output "csv" { path = "mine/ledger.csv" }`, "mine/ledger.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := writePlan(t, applyPlan+tc.output)
			dir := filepath.Dir(plan)
			code, out, errb := runCmd(t, "", "apply", "-quiet", "-gpu=false", "-var", "url="+srv.URL, "-results", filepath.Join(dir, "elsewhere"), plan)
			if code != exitOK {
				t.Fatalf("apply exit %d\n%s\n%s", code, out, errb)
			}
			if rows, err := ledger.ReadLedger(filepath.Join(dir, tc.ledger)); err != nil || len(rows) != 4 {
				t.Fatalf("ledger %s: %d rows, %v", tc.ledger, len(rows), err)
			}
			if _, err := os.Stat(filepath.Join(dir, "results")); !os.IsNotExist(err) {
				t.Errorf("apply -results wrote under the plan's results/ too: %v", err)
			}
			runs, _ := filepath.Glob(filepath.Join(dir, "elsewhere", "plan-2*"))
			if len(runs) != 1 {
				t.Errorf("run directories under -results: %v", runs)
			}
		})
	}
}
