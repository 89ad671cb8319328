package ledger

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// Writers of separate opens of one ledger (as separate runs are: flock is held per open
// file) append at once, a new ledger's header decided under the lock; every row comes
// back whole and none is lost.
func TestLedgerConcurrentOpens(t *testing.T) {
	const writers, rows = 8, 50
	path := filepath.Join(t.TempDir(), "results.csv")
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := OpenLedger(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Close()
			for i := range rows {
				r := sampleRow(fmt.Sprintf("w%d-%d", w, i), 1)
				r.Notes = strings.Repeat("n", (w*rows+i)%700) // rows of many lengths
				if err := l.Append(r); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, err := ReadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range got {
		var w, i int
		fmt.Sscanf(r.CellID, "w%d-%d", &w, &i)
		if r.Notes != strings.Repeat("n", (w*rows+i)%700) || seen[r.CellID] {
			t.Fatalf("row %s is not whole or appears twice", r.CellID)
		}
		seen[r.CellID] = true
	}
	if len(got) != writers*rows {
		t.Fatalf("%d rows, want %d", len(got), writers*rows)
	}
}

// A ledger of earlier columns, opened by several runs at once: one upgrades it, the
// others find the path renamed under their lock and append to the upgraded file.
func TestLedgerConcurrentUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	h, rec := Header(), sampleRow("old", 1).Record()
	var oldHeader, oldRec []string
	for i := range h {
		if h[i] != "goal" {
			oldHeader, oldRec = append(oldHeader, h[i]), append(oldRec, rec[i])
		}
	}
	writeCSV(t, path, oldHeader, oldRec)
	ls := make([]*Ledger, 4)
	for i := range ls { // all opened before any appends
		ls[i] = &Ledger{path: path}
		if err := ls[i].open(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.Close()
			for j := range 20 {
				if err := l.Append(sampleRow(fmt.Sprintf("l%d-%d", i, j), 1)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	rows, err := ReadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+4*20 || rows[0].CellID != "old" {
		t.Fatalf("%d rows (first %q), want the old one and 80 appended", len(rows), rows[0].CellID)
	}
}

func writeCSV(t *testing.T, path string, recs ...[]string) {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(recs)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Several logs on one output "jsonl" flush at once: every line is whole. Lines longer
// than a write buffer are the case that splits.
func TestRequestLogConcurrentOpens(t *testing.T) {
	const writers, lines = 8, 100
	path := filepath.Join(t.TempDir(), "raw.jsonl")
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := OpenRequestLog(path)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range lines {
				s := backends.Sample{ID: fmt.Sprintf("w%d-%d", w, i), Err: &backends.Error{Message: strings.Repeat("m", 9000+i*37)}}
				if err := l.Write(RequestRecord{CellID: "c", Event: executor.Event{Sample: &s}}); err != nil {
					t.Error(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ReadRequests(f)
	if err != nil {
		t.Fatalf("interleaved lines: %v", err)
	}
	if len(recs) != writers*lines {
		t.Fatalf("%d lines, want %d", len(recs), writers*lines)
	}
}

// A run killed mid-flush leaves a torn last line; the next log to flush cuts it off.
func TestRequestLogCutsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.jsonl")
	os.WriteFile(path, []byte(`{"cell_id":"a"}`+"\n"+`{"cell_id":"to`), 0o644)
	l, err := OpenRequestLog(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Write(RequestRecord{CellID: "b"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	recs, err := ReadRequests(bytes.NewReader(data))
	if err != nil || len(recs) != 2 || recs[1].CellID != "b" {
		t.Fatalf("after a torn line: %v, %q", err, data)
	}
}

// BenchmarkLedgerAppend is the cost of one row: the lock, the look at what other runs
// appended and the fsync (-bench Ledger, against BenchmarkLedgerWriteUnlocked: the same
// write and fsync without the lock and the look).
func BenchmarkLedgerAppend(b *testing.B) {
	l, err := OpenLedger(filepath.Join(b.TempDir(), "results.csv"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := sampleRow("c", 1)
	for b.Loop() {
		if err := l.Append(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLedgerWriteUnlocked(b *testing.B) {
	l, err := OpenLedger(filepath.Join(b.TempDir(), "results.csv"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := sampleRow("c", 1).Record()
	for b.Loop() {
		if err := l.write(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLedgerLockOnly is what the lock adds to a row on its own: take it, look at
// what other runs appended (nothing here), let it go; no write and no fsync.
func BenchmarkLedgerLockOnly(b *testing.B) {
	l, err := OpenLedger(filepath.Join(b.TempDir(), "results.csv"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if err := l.locked(nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A header a kill cut short is written again; a file that is not a ledger's header is
// refused, never cut.
func TestLedgerTornHeader(t *testing.T) {
	dir := t.TempDir()
	torn, other := filepath.Join(dir, "torn.csv"), filepath.Join(dir, "other.csv")
	os.WriteFile(torn, []byte(strings.Join(Header()[:5], ",")[:30]), 0o644)
	os.WriteFile(other, []byte("notes without a newline"), 0o644)
	l, err := OpenLedger(torn)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(sampleRow("c", 1)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if rows, err := ReadLedger(torn); err != nil || len(rows) != 1 {
		t.Fatalf("after a torn header: %d rows, %v", len(rows), err)
	}
	if _, err := OpenLedger(other); err == nil {
		t.Fatal("a file that is not a ledger was taken as one")
	}
	if b, _ := os.ReadFile(other); string(b) != "notes without a newline" {
		t.Fatalf("a file that is not a ledger was changed: %q", b)
	}
}

// BenchmarkRequestLogWrite is the per-request cost of the raw log (a line, and every
// flushEvery lines a locked write to the file).
func BenchmarkRequestLogWrite(b *testing.B) {
	l, err := OpenRequestLog(filepath.Join(b.TempDir(), "raw.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := RequestRecord{CellID: "m/tiny/-/openai.mock/-/w", Concurrency: 4, Event: executor.Event{Sample: &backends.Sample{ID: "r", OutputTokens: 64, Chunks: 64}}}
	for b.Loop() {
		if err := l.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
}
