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
	"github.com/planrun/planrun/stats"
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

// summary.json carries every interval of a measured row, in the CSV's units, with null
// for an end its sample cannot bound and the count that would bound it.
func TestSummaryHasTheIntervals(t *testing.T) {
	r := NewRow()
	r.CellID, r.Concurrency, r.Succeeded, r.TTFT.P50, r.TPOT.P50, r.OutputTokS = "c", 4, 100, 0.2, 0.02, 50
	u := stats.Unbounded(368)
	r.TTFT.CI = &stats.DistCI{Confidence: 0.95, P50: stats.Interval{Lo: 0.19, Hi: 0.21}, P90: u, P95: u, P99: u, Mean: u}
	r.TPOT.CI = &stats.DistCI{Confidence: 0.95, P50: stats.Interval{Lo: 0.019, Hi: 0.021}, P90: u, P95: u, P99: u, Mean: u}
	r.CI.Confidence, r.CI.OutputTokS = 0.95, stats.Unbounded(6)
	var b strings.Builder
	if err := WriteSummary(&b, NewSummary("p", Manifest{RunID: "r"}, []Row{r, NewRow()})); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Intervals []struct {
			CellID     string `json:"cell_id"`
			Confidence float64
			Figures    map[string]struct {
				Lo, Hi *float64
				Needed int
			}
		}
	}
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Intervals) != 1 || got.Intervals[0].CellID != "c" || got.Intervals[0].Confidence != 0.95 {
		t.Fatalf("intervals %+v, want the one measured row's", got.Intervals)
	}
	f := got.Intervals[0].Figures
	if p := f["tpot_p50_ms"]; p.Lo == nil || *p.Lo != 19 || *p.Hi != 21 {
		t.Errorf("tpot_p50_ms %+v, want [19, 21] ms", p)
	}
	if p := f["ttft_p99_s"]; p.Hi != nil || p.Needed != 368 {
		t.Errorf("ttft_p99_s %+v, want an unbounded end needing 368", p)
	}
	if p, ok := f["output_tok_s"]; !ok || p.Lo != nil || p.Needed != 6 {
		t.Errorf("output_tok_s %+v, want unbounded, needing 6 runs", p)
	}
	if _, ok := f["ttft_mean_s"]; !ok {
		t.Errorf("no mean's interval: %v", f)
	}
}
