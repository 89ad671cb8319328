package compare

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/ledgertest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./compare -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./compare -update, then review the diff):\n%s", name, got)
	}
}

func toolRow(tool string, conc int, ttft, tpot, tok, vram float64) ledger.Row {
	r := ledgertest.SampleRow(tool+"-"+string(rune('0'+conc)), conc)
	r.Tool = tool
	r.TTFT.P50, r.TPOT.P50, r.OutputTokS, r.VRAMPeakGB = ttft, tpot, tok, vram
	return r
}

func TestCompareByTool(t *testing.T) {
	rows := []ledger.Row{
		toolRow("ollama.local", 1, 0.8, 0.028, 35, 4.5),
		toolRow("openai.vllm", 1, 0.4, 0.014, 70, math.NaN()),
		toolRow("ollama.local", 4, 1.6, 0.04, 100, 4.6),
		toolRow("openai.vllm", 16, 0.9, 0.02, 400, 7),
	}
	by := ByTool(rows)
	deltas := Compare(by["ollama.local"], by["openai.vllm"])
	if len(deltas) != 3 {
		t.Fatalf("%d deltas, want 3 (c1 matched, c4 only in A, c16 only in B)", len(deltas))
	}
	d := deltas[0]
	if d.Key.Concurrency != 1 || d.A == nil || d.B == nil || d.A.Tool != "ollama.local" || d.B.Tool != "openai.vllm" {
		t.Fatalf("first delta = %+v", d)
	}
	figure := func(name string) Change {
		c, ok := d.Figure(name)
		if !ok {
			t.Fatalf("no figure %s", name)
		}
		return c
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"ttft", figure("ttft_p50_s").Pct, -50}, {"tpot", figure("tpot_p50_ms").Pct, -50}, {"tpot A ms", figure("tpot_p50_ms").A, 28},
		{"throughput", figure("output_tok_s").Pct, 100}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if vram := figure("vram_peak_gb"); !math.IsNaN(vram.Pct) {
		t.Errorf("VRAM Δ%% with B unmeasured = %v, want NaN", vram.Pct)
	}
	if deltas[1].B != nil || deltas[1].Notes != "only in A" || deltas[2].A != nil || deltas[2].Notes != "only in B" {
		t.Errorf("unmatched rows: %+v / %+v", deltas[1], deltas[2])
	}
}

func TestCompareKeepsLatestDuplicate(t *testing.T) {
	old := toolRow("ollama.local", 1, 1.0, 0.03, 30, 4)
	newer := toolRow("ollama.local", 1, 0.5, 0.03, 30, 4)
	newer.Ended = old.Ended.Add(time.Hour)
	// The newer run sits first in the file: end time decides, not position.
	deltas := Compare([]ledger.Row{newer, old}, []ledger.Row{toolRow("ollama.local", 1, 1.0, 0.03, 30, 4)})
	if len(deltas) != 1 {
		t.Fatalf("deltas = %+v", deltas)
	}
	if ttft, _ := deltas[0].Figure("ttft_p50_s"); deltas[0].A.TTFT.P50 != 0.5 || math.Abs(ttft.Pct-100) > 1e-9 {
		t.Fatalf("deltas = %+v", deltas)
	}
	if !strings.Contains(deltas[0].Notes, "A has 2 rows, latest kept") {
		t.Errorf("notes = %q", deltas[0].Notes)
	}
}

func TestCompareRenderGolden(t *testing.T) {
	deltas := Compare(
		[]ledger.Row{toolRow("ollama.local", 1, 0.82, 0.028, 35, 4.5), toolRow("ollama.local", 4, 1.3, 0.041, 98.5, 4.6)},
		[]ledger.Row{toolRow("openai.vllm", 1, 0.28, 0.012, 80.2, 8), toolRow("openai.vllm", 16, 0.9, 0.02, 400, 7)})
	var text, md bytes.Buffer
	if err := WriteCompareText(&text, deltas, "ollama", "vllm"); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareMarkdown(&md, deltas, "ollama", "vllm"); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.txt", text.Bytes())
	golden(t, "compare.md", md.Bytes())
}

// FigureValue reads the named figure with its unit, and refuses a name Compare does not
// compare.
func TestFigureValueReadsNamedFigure(t *testing.T) {
	r := ledgertest.SampleRow("c", 1)
	if v, unit, ok := FigureValue("ttft_p99_s", &r); v != 0.95 || unit != "s" || !ok {
		t.Errorf("ttft_p99_s = %v %q %v, want 0.95 s true", v, unit, ok)
	}
	if v, unit, ok := FigureValue("output_tok_s", &r); v != 35 || !ok {
		t.Errorf("output_tok_s = %v %q %v, want 35 true", v, unit, ok)
	}
	if v, unit, ok := FigureValue("concurrency", &r); !math.IsNaN(v) || unit != "" || ok {
		t.Errorf("concurrency = %v %q %v, want NaN \"\" false", v, unit, ok)
	}
}

// MinConclusiveRequests (20) successful requests a side are enough; 19 on either side
// are too few, and the line under the table counts those rows among all.
func TestCompareTooFewBelowMinimumOnly(t *testing.T) {
	a := []ledger.Row{toolRow("ollama.local", 1, 1, 0.03, 30, 4), toolRow("ollama.local", 2, 1, 0.03, 30, 4)}
	b := []ledger.Row{toolRow("openai.vllm", 1, 1, 0.03, 30, 4), toolRow("openai.vllm", 2, 1, 0.03, 30, 4)}
	a[0].Succeeded, b[0].Succeeded = 20, 20
	a[1].Succeeded, b[1].Succeeded = 20, 19
	deltas := Compare(a, b)
	if deltas[0].TooFew || deltas[0].Notes != "" {
		t.Errorf("20 vs 20: TooFew %v, notes %q; want neither", deltas[0].TooFew, deltas[0].Notes)
	}
	if !deltas[1].TooFew || deltas[1].Notes != "too few requests to conclude (20 vs 19)" {
		t.Errorf("20 vs 19: TooFew %v, notes %q", deltas[1].TooFew, deltas[1].Notes)
	}
	want := "1 of 2 rows have fewer than 20 successful requests on a side: too few to conclude; " +
		"rerun with more requests (repeat_runs, or a longer level) before acting on their Δ%.\n"
	if got := tooFewLine(deltas); got != want {
		t.Errorf("too-few line %q, want %q", got, want)
	}
	if got := tooFewLine(deltas[:1]); got != "" {
		t.Errorf("too-few line with none too few %q, want none", got)
	}
}

// A side whose load was not the load asked is named in the delta's notes, so a Δ% that
// is the client's is not read as the server's.
func TestCompareNotesFidelity(t *testing.T) {
	a, b := toolRow("x", 4, 0.5, 0.02, 100, 1), toolRow("x", 4, 0.6, 0.02, 90, 1)
	a.Fidelity, b.Fidelity = ledger.FidelityOK, ledger.FidelityLate
	d := Compare([]ledger.Row{a}, []ledger.Row{b})
	if len(d) != 1 || !strings.Contains(d[0].Notes, "B fidelity late") || strings.Contains(d[0].Notes, "A fidelity") {
		t.Fatalf("notes %q", d[0].Notes)
	}
	a.Fidelity = ledger.FidelityClientBound
	if d := Compare([]ledger.Row{a}, []ledger.Row{b}); !strings.Contains(d[0].Notes, "A fidelity client-bound; B fidelity late") {
		t.Fatalf("notes %q", d[0].Notes)
	}
}

// A contended row is noted, and a breach on it says so, as an unstable one's does.
func TestUnsettledRowsAreNamed(t *testing.T) {
	base := func(stability, contention string, share float64) ledger.Row {
		r := ledgertest.SampleRow("c", 4)
		r.Stability, r.Contention, r.NeighbourCPUPct = stability, contention, share
		return r
	}
	tests := []struct {
		name string
		a, b ledger.Row
		want string
	}{
		{"both settled", base("stable", "quiet", 2), base("noisy", "", math.NaN()), ""},
		{"B unstable", base("stable", "quiet", 2), base("unstable", "quiet", 3), "B unstable"},
		{"B contended", base("stable", "quiet", 2), base("stable", "contended", 45), "B contended 45%"},
		{"A contended and unstable", base("unstable", "contended", 61.4), base("stable", "", math.NaN()), "A contended 61%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.b.OutputTokS = tt.a.OutputTokS * 0.5
			d := Compare([]ledger.Row{tt.a}, []ledger.Row{tt.b})
			if len(d) != 1 {
				t.Fatalf("%d deltas", len(d))
			}
			if got := strings.Join(unsettled(d[0]), ", "); got != tt.want {
				t.Errorf("unsettled %q, want %q", got, tt.want)
			}
			if tt.want != "" && !strings.Contains(d[0].Notes, tt.want) {
				t.Errorf("notes %q lack %q", d[0].Notes, tt.want)
			}
			th, err := ParseThreshold("output_tok_s<-10%")
			if err != nil {
				t.Fatal(err)
			}
			br := Gate(d, []Threshold{th})
			if len(br) != 1 || br[0].Verdict == Pass {
				t.Fatalf("breaches %+v, want the halved throughput", br)
			}
			if line := br[0].String(); strings.Contains(line, "may be the machine's") != (tt.want != "") ||
				!strings.Contains(line, tt.want) {
				t.Errorf("breach %q for %q", line, tt.want)
			}
		})
	}
}
