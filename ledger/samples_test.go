package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

func TestRequestLogLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	l, err := OpenRequestLog(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for i := range 100 { // concurrent writers, as the requests of one level are
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := backends.Sample{ID: "r", Start: start, FirstToken: 5 * time.Millisecond, End: 9 * time.Millisecond,
				ChunkArrivals: []time.Duration{5 * time.Millisecond, 9 * time.Millisecond}, OutputTokens: 3, Chunks: 2}
			if i%10 == 0 {
				s.Err = &backends.Error{Class: backends.ErrTimeout, Phase: "idle", Message: "no chunk for 30s"}
			}
			if err := l.Write(RequestRecord{CellID: "c1", Concurrency: 4, Event: executor.Event{Run: i % 3, Sample: &s}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Flushed regularly: most lines are in the file before Close.
	if data, _ := os.ReadFile(path); bytes.Count(data, []byte("\n")) < 96 {
		t.Errorf("only %d lines on disk before Close; want flushes every %d", bytes.Count(data, []byte("\n")), flushEvery)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 100 {
		t.Fatalf("%d lines, want 100", len(lines))
	}
	for _, key := range []string{`"cell_id":"c1"`, `"warmup":false`, `"concurrency":4`, `"first_token_ns":5000000`,
		`"chunk_arrivals_ns":[5000000,9000000]`, `"start":"2026-12-01T10:00:00Z"`} {
		if !strings.Contains(lines[0], key) {
			t.Errorf("line lacks %s: %s", key, lines[0])
		}
	}
	recs, err := ReadRequests(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, r := range recs {
		if !r.OK() {
			failed++
		}
		if r.End != 9*time.Millisecond || !r.Start.Equal(start) {
			t.Fatalf("record lost its timestamps: %+v", r)
		}
	}
	if failed != 10 {
		t.Errorf("%d failed records, want 10", failed)
	}
}

// manifestEnv is a full environment (report's tests render the same one).
func manifestEnv() Environment {
	return Environment{Host: "bench-1", OS: "linux", Arch: "amd64", Kernel: "6.8.0", CPU: "AMD EPYC 9654", CPUs: 16,
		GPUs: []string{"NVIDIA GeForce RTX 4060 (8 GB)"}, Driver: "580.65", CUDA: "13.0",
		ServerVersions: map[string]string{"ollama.local": "0.6.5", "openai.vllm": "0.11.0"},
		ModelDigests:   map[string]string{"ollama.local qwen2.5:7b": "sha256:845dbda0ea48"},
		PlanrunVersion: "v0.1.0", PlanPath: "plans/qwen.hcl", PlanHash: "sha256:abc123"}
}

func TestManifest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifest.json")
	m := Manifest{Environment: manifestEnv(), Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Cells: []CellStatus{{ID: "c1", Status: StatusOK}, {ID: "c2", Status: StatusInterrupted, Notes: "Ctrl-C"}}}
	if err := WriteManifest(path, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.PlanHash != m.PlanHash || len(got.Cells) != 2 || got.Cells[1].Status != StatusInterrupted ||
		got.ServerVersions["ollama.local"] != "0.6.5" || !got.Ended.IsZero() {
		t.Errorf("manifest round trip: %+v", got)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), `"ended"`) {
		t.Errorf("an unfinished run should not claim an end time:\n%s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("manifest mode %v, want 0644", fi.Mode().Perm())
	}
}

func TestCPUModel(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n", "AMD EPYC 9654 96-Core Processor"},
		{"arm", "processor\t: 0\nBogoMIPS\t: 48.00\n\nHardware\t: BCM2835\nModel\t: Raspberry Pi 4\n", "BCM2835"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := cpuModel(strings.NewReader(tt.in)); got != tt.want {
			t.Errorf("%s: cpuModel = %q, want %q", tt.name, got, tt.want)
		}
	}
	if h := CollectHost(); h.OS == "" || h.Arch == "" || h.CPUs < 1 {
		t.Errorf("CollectHost = %+v", h)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// apply checks the log once per level, at Flush: a failed write must still be there.
func TestRequestLogFailureIsSticky(t *testing.T) {
	l := NewRequestLog(failingWriter{})
	for i := 0; i < flushEvery+1; i++ {
		l.Write(RequestRecord{CellID: "c"})
	}
	if err := l.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Flush after a failed write: %v", err)
	}
	if err := l.Write(RequestRecord{CellID: "c"}); err == nil {
		t.Fatal("a failed log accepted another record")
	}
}

// The log holds records until it has flushEvery of them, then writes them in one go.
func TestRequestLogFlushesEveryFlushEveryRecords(t *testing.T) {
	var out bytes.Buffer
	l := NewRequestLog(&out)
	for i := range flushEvery - 1 {
		if err := l.Write(RequestRecord{CellID: "c", Event: executor.Event{Run: i}}); err != nil {
			t.Fatal(err)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("%d bytes written after %d records, want none before the %dth", out.Len(), flushEvery-1, flushEvery)
	}
	if err := l.Write(RequestRecord{CellID: "c"}); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out.Bytes(), []byte("\n")); n != flushEvery {
		t.Fatalf("%d lines written at the %dth record, want all %d", n, flushEvery, flushEvery)
	}
}

// The log also flushes when its buffer reaches 64 KiB, whatever the count: a line of
// exactly 64 KiB goes out at once, one a byte shorter waits.
func TestRequestLogFlushesAt64KiB(t *testing.T) {
	base, err := json.Marshal(RequestRecord{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lineLen int // with its newline
		flushed bool
	}{{64 << 10, true}, {64<<10 - 1, false}} {
		rec := RequestRecord{CellID: strings.Repeat("x", c.lineLen-1-len(base))}
		if line, _ := json.Marshal(rec); len(line)+1 != c.lineLen {
			t.Fatalf("the record's line is %d bytes, want %d", len(line)+1, c.lineLen)
		}
		var out bytes.Buffer
		l := NewRequestLog(&out)
		if err := l.Write(rec); err != nil {
			t.Fatal(err)
		}
		if got := out.Len() == c.lineLen; got != c.flushed {
			t.Errorf("a %d-byte line: %d bytes written at once, want flushed %v", c.lineLen, out.Len(), c.flushed)
		}
	}
}

// A torn last line is cut back to the last newline however far back it is: more than a
// read chunk, exactly at a chunk's first byte, or nowhere (the whole file is torn).
func TestRequestLogCutsTornLineOfAnyLength(t *testing.T) {
	const chunk = 4 << 10 // cutTornLine's read size
	a, b := `{"cell_id":"a"}`+"\n", `{"cell_id":"b"}`+"\n"
	torn := func(n int) string { return `{"cell_id":"` + strings.Repeat("x", n-len(`{"cell_id":"`)) }
	for _, c := range []struct {
		name, file string
		want       []string
	}{
		{"torn line longer than a chunk", a + torn(chunk+1000), []string{"a", "new"}},
		// The newline before the torn line is the first byte of the last chunk read.
		{"newline at a chunk's start", a + b + torn(chunk-1), []string{"a", "b", "new"}},
		{"no newline at all", torn(100), []string{"new"}},
	} {
		path := filepath.Join(t.TempDir(), "raw.jsonl")
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := OpenRequestLog(path)
		if err != nil {
			t.Fatal(err)
		}
		l.Write(RequestRecord{CellID: "new"})
		if err := l.Close(); err != nil {
			t.Fatalf("%s: Close: %v", c.name, err)
		}
		data, _ := os.ReadFile(path)
		recs, err := ReadRequests(bytes.NewReader(data))
		var got []string
		for _, r := range recs {
			got = append(got, r.CellID)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: records %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// Closing a log on a plain writer flushes it and succeeds: there is no file to sync.
func TestRequestLogCloseOnAWriter(t *testing.T) {
	var out bytes.Buffer
	l := NewRequestLog(&out)
	l.Write(RequestRecord{CellID: "c"})
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if recs, err := ReadRequests(&out); err != nil || len(recs) != 1 || recs[0].CellID != "c" {
		t.Fatalf("after Close: %+v, %v", recs, err)
	}
}
