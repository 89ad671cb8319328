package ledger

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/stats"
)

// sampleRow is a fully filled row with figures that survive the CSV round trip exactly.
func sampleRow(cell string, conc int) Row {
	r := NewRow()
	r.Plan, r.PlanPath, r.PlanHash = "qwen", "plans/qwen.hcl", "sha256:abc123"
	r.CellID, r.Matrix = cell, "qwen"
	r.Model, r.ModelID, r.Quantization = "qwen2.5-7b", "qwen2.5:7b-instruct-q4_K_M", "q4_K_M"
	r.Tool, r.BackendURL = "ollama.local", "http://127.0.0.1:11434"
	r.Hardware, r.GPU, r.Workload = "rtx4060", "NVIDIA GeForce RTX 4060", "short"
	r.Concurrency, r.Runs, r.MaxTokens = conc, 3, 256
	r.Requests, r.Succeeded, r.Failed = 30, 28, 2
	r.Failures = map[string]int{"timeout": 1, "5xx": 1}
	r.TTFT = stats.Dist{P50: 0.82, P90: 0.9, P99: 0.95, Mean: 0.83, Min: 0.7, Max: 0.96, P95: 0.92, Std: 0.05}
	r.TPOT = stats.Dist{P50: 0.028, P90: 0.03, P99: 0.031, Mean: 0.0285, Min: 0.025, Max: 0.032, P95: 0.0305, Std: 0.002}
	r.ITL = stats.Dist{P50: 0.027, P90: 0.04, P99: 0.05, Mean: 0.03, Min: 0.001, Max: 0.06, P95: 0.045, Std: 0.01}
	r.E2E = stats.Dist{P50: 7.9, P90: 8.1, P99: 8.2, Mean: 7.95, Min: 7.5, Max: 8.25, P95: 8.15, Std: 0.2}
	r.DecodeRate = stats.Dist{P50: 35.7, P90: 38, P99: 39, Mean: 35.5, Min: 31, Max: 40, P95: 38.5, Std: 2}
	r.OutputTokS, r.RequestsPerSec, r.WindowSeconds, r.OutputTokens = 35, 0.125, 80, 7168
	r.TokenSource, r.TokensPerChunk = "server", 1
	r.PromptTokensRequested, r.PromptTokensActual, r.EarlyStops = 128, 131, 0
	r.VRAMBaselineGB, r.VRAMPeakGB, r.VRAMProcessGB, r.VRAMSource = 0.6, 4.5, 3.9, "nvml v2 used (reserved excluded)"
	r.Stability, r.StabilitySpread = "stable", 0.04
	r.Reference, r.Verdict = "rtx4060-7b-q4", "within"
	r.Status, r.Notes, r.Version = StatusOK, "empty context, short input", "v0.1.0"
	r.Started = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	r.Ended = time.Date(2026, 12, 1, 10, 1, 20, 0, time.UTC)
	return r
}

func TestRecordRoundTrip(t *testing.T) {
	want := sampleRow("c1", 4)
	want.SLOAttainmentPct, want.GoodputReqS, want.GoodputTokS = 90, 0.1125, 31.5
	want.MemJobBaselineGB, want.MemJobPeakGB, want.MemJobSource = 0.125, 0.5, "sstat MaxRSS of job 41.batch, the whole job"
	got, err := ParseRecord(want.Record())
	if err != nil {
		t.Fatal(err)
	}
	// Distributions come back without N (not a ledger column); compare everything else.
	for _, d := range []*stats.Dist{&want.TTFT, &want.TPOT, &want.ITL, &want.E2E, &want.DecodeRate} {
		d.N = 0
	}
	if a, b := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); a != b {
		t.Errorf("round trip changed the row:\n got %s\nwant %s", a, b)
	}
	empty, err := ParseRecord(NewRow().Record())
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(empty.TTFT.P50) || !math.IsNaN(empty.VRAMPeakGB) || !math.IsNaN(empty.OutputTokS) {
		t.Errorf("unmeasured figures must come back as NaN, got %v %v %v", empty.TTFT.P50, empty.VRAMPeakGB, empty.OutputTokS)
	}
}

func TestHeaderHasUnits(t *testing.T) {
	h := strings.Join(Header(), ",")
	for _, col := range []string{"ttft_p50_s", "tpot_p50_ms", "itl_p99_ms", "output_tok_s", "vram_peak_gb",
		"requests_s", "cell_id", "backend_url", "token_source", "stability", "reference_verdict", "planrun_version"} {
		if !strings.Contains(","+h+",", ","+col+",") {
			t.Errorf("header lacks %s", col)
		}
	}
}

func TestSafeURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
		{"https://user:pw@gw.example/v1", "https://gw.example/v1"},
		{"https://gw.example/v1?api_key=sk-1&model=x", "https://gw.example/v1?model=x"},
		{"https://gw.example/v1?token=abc&Access_Token=d&x=1", "https://gw.example/v1?x=1"},
		{"http://[::1:bad", "(unparseable URL removed)"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SafeURL(tt.in); got != tt.want {
			t.Errorf("SafeURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLedgerAppendsAcrossOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	for i, cell := range []string{"a", "b"} {
		l, err := OpenLedger(path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		r := sampleRow(cell, 1)
		r.BackendURL = "https://u:secret@gw.example/v1?key=sk-live"
		r.Notes = "line one\nline two"
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Errorf("ledger has %d lines, want header + 2 rows:\n%s", n, data)
	}
	if strings.Contains(string(data), "secret") || strings.Contains(string(data), "sk-live") {
		t.Errorf("ledger leaks credentials:\n%s", data)
	}
	rows, err := ReadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].CellID != "a" || rows[1].CellID != "b" {
		t.Fatalf("rows = %d (%v)", len(rows), rows)
	}
	if rows[1].Notes != "line one; line two" || rows[1].BackendURL != "https://gw.example/v1" {
		t.Errorf("notes %q url %q", rows[1].Notes, rows[1].BackendURL)
	}
}

func TestLedgerRefusesOtherHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.csv")
	os.WriteFile(path, []byte("model,ttft\nx,1\n"), 0o644)
	_, err := OpenLedger(path)
	if err == nil || !strings.Contains(err.Error(), "start a new ledger") {
		t.Fatalf("err = %v, want a refusal that says how to start a new ledger", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "model,ttft\nx,1\n" {
		t.Errorf("refused ledger was modified: %q", data)
	}
}

func TestLedgerRepairsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "torn.csv")
	l, _ := OpenLedger(path)
	l.Append(sampleRow("a", 1))
	l.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("qwen,plans/qwen.hcl,sha256") // a power loss mid-record
	f.Close()
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(sampleRow("b", 1))
	l.Close()
	rows, err := ReadLedger(path)
	if err != nil || len(rows) != 2 || rows[1].CellID != "b" {
		t.Fatalf("rows %d err %v", len(rows), err)
	}
}

// encodeRecord is the bytes Append writes for r.
func encodeRecord(t *testing.T, r Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(r.Record()); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return buf.Bytes()
}

// TestLedgerCutAnywhere cuts the last record of a ledger at every byte, a quoted field
// holding a newline and doubled quotes included: each cut reads back as the earlier rows
// exactly (the torn record is not a row, nor an error), and reopening cuts the torn bytes
// off so the next append is whole.
func TestLedgerCutAnywhere(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "base.csv")
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Append(sampleRow("a", 1))
	l.Close()
	base, _ := os.ReadFile(path)
	last := sampleRow("b", 2)
	last.Notes = "said \"no\",\nthen stopped"
	// Row.Record writes a newline in notes as "; "; an older or hand-edited ledger may
	// hold a real one inside the quoted field, so put it back in the bytes.
	rec := bytes.Replace(encodeRecord(t, last), []byte(",; then"), []byte(",\nthen"), 1)
	if bytes.IndexByte(rec, '\n') == len(rec)-1 {
		t.Fatalf("the record should hold a newline inside a field: %q", rec)
	}
	for cut := 0; cut <= len(rec); cut++ {
		p := filepath.Join(dir, "cut"+strconv.Itoa(cut)+".csv")
		os.WriteFile(p, append(slices.Clip(base), rec[:cut]...), 0o644)
		rows, err := ReadLedger(p)
		want := []string{"a"}
		if cut == len(rec) {
			want = []string{"a", "b"}
		}
		if err != nil || len(rows) != len(want) || rows[len(rows)-1].CellID != want[len(want)-1] {
			t.Fatalf("cut at %d of %d: rows %d, err %v", cut, len(rec), len(rows), err)
		}
		l, err := OpenLedger(p)
		if err != nil {
			t.Fatalf("cut at %d: reopen: %v", cut, err)
		}
		l.Append(sampleRow("c", 3))
		l.Close()
		rows, err = ReadLedger(p)
		if err != nil || len(rows) != len(want)+1 || rows[len(rows)-1].CellID != "c" {
			t.Fatalf("cut at %d: after reopening and appending: rows %d, err %v", cut, len(rows), err)
		}
		if cut == len(rec) && rows[1].Notes != last.Notes {
			t.Fatalf("notes %q, want %q", rows[1].Notes, last.Notes)
		}
	}
}

// TestLedgerSurvivesKill re-executes the test binary as a child that appends rows
// without pause; the parent SIGKILLs it mid-run and the file must still be whole CSV.
func TestLedgerSurvivesKill(t *testing.T) {
	if path := os.Getenv("PLANRUN_LEDGER_CHILD"); path != "" {
		l, err := OpenLedger(path)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		for i := 0; ; i++ {
			r := sampleRow("cell-"+strconv.Itoa(i), 1+i%16)
			r.Notes = strings.Repeat("x", i%300) // varying lengths
			if err := l.Append(r); err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			fmt.Println(i)
		}
	}
	path := filepath.Join(t.TempDir(), "killed.csv")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLedgerSurvivesKill$")
	cmd.Env = append(os.Environ(), "PLANRUN_LEDGER_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	acked := -1
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "error") {
			t.Fatal(sc.Text())
		}
		acked, _ = strconv.Atoi(sc.Text())
		if acked >= 200 {
			break
		}
	}
	cmd.Process.Kill() // SIGKILL while it keeps appending
	cmd.Wait()
	if acked < 200 {
		t.Fatalf("child stopped after %d rows", acked)
	}

	// Every acknowledged row is whole. The write in flight may have been cut (a SIGKILL
	// stops a regular-file write between pages): whatever follows the last whole record
	// must be a prefix of the next row, never anything else.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := wholeRecords(data)
	recs, err := csv.NewReader(bytes.NewReader(whole)).ReadAll()
	if err != nil {
		t.Fatalf("killed ledger's whole records are not valid CSV: %v", err)
	}
	rows, err := ReadLedger(path)
	if err != nil {
		t.Fatalf("ReadLedger: %v", err)
	}
	if len(recs) != len(rows)+1 || len(rows) < acked+1 {
		t.Fatalf("%d records, %d rows; child had acknowledged %d", len(recs), len(rows), acked+1)
	}
	if tail := data[len(whole):]; len(tail) > 0 {
		next := sampleRow("cell-"+strconv.Itoa(len(rows)), 1+len(rows)%16)
		next.Notes = strings.Repeat("x", len(rows)%300)
		if !strings.HasPrefix(string(encodeRecord(t, next)), string(tail[:min(len(tail), 40)])) {
			t.Fatalf("bytes after the last whole record are not the next row's start: %q", tail)
		}
		t.Logf("the kill cut a write: %d bytes of row %d on disk", len(tail), len(rows))
	}
	for i, r := range rows {
		if r.CellID != "cell-"+strconv.Itoa(i) || r.Notes != strings.Repeat("x", i%300) || r.Ended.IsZero() {
			t.Fatalf("row %d is not whole: cell %q, %d notes bytes", i, r.CellID, len(r.Notes))
		}
	}
	// And the ledger stays appendable after the kill.
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(sampleRow("after", 1)); err != nil {
		t.Fatal(err)
	}
}

// A ledger written by an earlier planrun (fewer columns, another order) is upgraded in
// place: every value kept, new columns empty, and appending goes on in the new columns.
func TestLedgerUpgradesEarlierColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	old := sampleRow("c1", 1)
	h, rec := Header(), old.Record()
	var oldHeader, oldRec []string
	for i := len(h) - 1; i >= 0; i-- { // reversed order, and without two later columns
		if h[i] == "goal" || h[i] == "client_cpu_pct" {
			continue
		}
		oldHeader, oldRec = append(oldHeader, h[i]), append(oldRec, rec[i])
	}
	f, _ := os.Create(path)
	w := csv.NewWriter(f)
	w.Write(oldHeader)
	w.Write(oldRec)
	w.Flush()
	f.Close()

	l, err := OpenLedger(path)
	if err != nil {
		t.Fatalf("an earlier ledger was refused: %v", err)
	}
	if err := l.Append(sampleRow("c2", 4)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	rows, err := ReadLedger(path)
	if err != nil || len(rows) != 2 {
		t.Fatalf("after upgrade: %d rows, %v", len(rows), err)
	}
	if rows[0].CellID != "c1" || rows[0].TTFT.P99 != 0.95 || rows[0].Notes != old.Notes || !math.IsNaN(rows[0].ClientCPUPct) {
		t.Fatalf("upgraded row lost or invented values: %+v", rows[0])
	}
	raw, _ := os.ReadFile(path)
	if first, _, _ := strings.Cut(string(raw), "\n"); first != strings.Join(Header(), ",") {
		t.Fatalf("header not upgraded: %s", first)
	}
}
