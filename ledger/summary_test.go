package ledger

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger/summarytest"
)

func TestSummaryValidatesAndEqualsTheCSV(t *testing.T) {
	measured := sampleRow("m/a", 4)
	measured.RunID, measured.Host = "2026-12-01T10-00-00-0badcafe", "bench-1"
	unmeasured := NewRow()
	unmeasured.CellID, unmeasured.Concurrency, unmeasured.Status = "m/b", 1, StatusFailed
	unmeasured.Notes = "not measured: backend openai.dead at http://127.0.0.1:1/v1 cannot serve requests"
	unmeasured.RunID, unmeasured.Host = measured.RunID, measured.Host
	rows := []Row{measured, unmeasured}

	m := Manifest{RunID: measured.RunID, Environment: Environment{Host: "bench-1", OS: "linux", Arch: "amd64", PlanrunVersion: "v0.1.0"},
		Started:   time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Cells:     []CellStatus{{ID: "m/a", Status: StatusOK, Settings: map[string]string{"max_tokens": "128"}}, {ID: "m/b", Status: StatusFailed, Notes: "unreachable"}},
		Servers:   map[string]ServerRun{"ollama": {Command: []string{"ollama", "serve"}, Version: "0.6.5"}},
		PlanFiles: []string{"plan/plan.hcl"}, Variables: map[string]string{"url": "http://x", "key": "(sensitive)"}}
	s := NewSummary("qwen", m, rows)
	s.Outcome = OutcomeFailed
	var buf bytes.Buffer
	if err := WriteSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	summarytest.Validate(t, SummarySchema, buf.Bytes())

	var ledger bytes.Buffer
	w := csv.NewWriter(&ledger)
	w.Write(Header())
	for _, r := range rows {
		w.Write(r.Record())
	}
	w.Flush()
	summarytest.MatchesCSV(t, buf.Bytes(), ledger.Bytes())

	// A figure that was not measured is null, never 0.
	back, err := ReadSummary(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := back.Rows[1]["ttft_p50_s"]; !ok || v != nil {
		t.Fatalf("unmeasured ttft_p50_s = %v (present %v), want null", v, ok)
	}
	if back.Rows[0]["ttft_p50_s"] != json.Number("0.82") {
		t.Fatalf("ttft_p50_s = %#v, want the number 0.82", back.Rows[0]["ttft_p50_s"])
	}
}

func TestSummaryUnits(t *testing.T) {
	s := NewSummary("p", Manifest{}, nil)
	want := map[string]string{"ttft_p50_s": "s", "tpot_p99_ms": "ms", "output_tok_s": "tok/s", "decode_p50_tok_s": "tok/s",
		"requests_s": "1/s", "request_rate_per_s": "1/s", "vram_peak_gb": "GB", "stability_spread_pct": "%",
		"gpu_energy_j": "J", "tokens_per_joule": "tok/J", "output_tokens": "tokens", "requests": "requests",
		"concurrency": "requests in flight", "cell_id": "", "started": ""}
	for _, c := range s.Columns {
		if u, ok := want[c.Name]; ok && c.Unit != u {
			t.Errorf("%s: unit %q, want %q", c.Name, c.Unit, u)
		}
		// A new figure must be named with its unit, as the CSV header promises.
		if (c.Type == "number" || c.Type == "integer") && c.Unit == "" {
			t.Errorf("column %s has no unit: end its name in one (_s, _ms, _tok_s, _gb, _pct, ...)", c.Name)
		}
		if strings.TrimSpace(c.Type) == "" {
			t.Errorf("column %s has no type", c.Name)
		}
	}
}

// The schema's $id names where the schema lives in the repository, so a tool that
// follows it finds this file (it moved here from report/).
func TestSummarySchemaIDNamesItsFile(t *testing.T) {
	var doc struct {
		ID string `json:"$id"`
	}
	if err := json.Unmarshal(SummarySchema, &doc); err != nil {
		t.Fatal(err)
	}
	rel, ok := strings.CutPrefix(doc.ID, "https://github.com/planrun/planrun/")
	if !ok {
		t.Fatalf("$id %q is not under the module's repository", doc.ID)
	}
	if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(rel))); err != nil {
		t.Errorf("$id %q names no file of the repository: %v", doc.ID, err)
	}
}
