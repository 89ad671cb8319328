package ledger

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A ledger of unknown columns is refused with what differs: the first column that does,
// or the count.
func TestOpenLedgerNamesTheHeaderDifference(t *testing.T) {
	h := Header()
	renamed := append([]string(nil), h...)
	renamed[2] = "bogus"
	for _, c := range []struct {
		header []string
		diff   string
	}{
		{renamed, fmt.Sprintf("(column 3 is %q, want %q)", "bogus", h[2])},
		{append(append([]string(nil), h...), "bogus"), fmt.Sprintf("(%d columns, want %d)", len(h)+1, len(h))},
	} {
		path := filepath.Join(t.TempDir(), "results.csv")
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.Write(c.header)
		w.Flush()
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenLedger(path)
		if err == nil || !strings.Contains(err.Error(), c.diff) {
			t.Fatalf("OpenLedger: %v, want the difference %s", err, c.diff)
		}
	}
}

func TestAppendToAClosedLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(NewRow()); err == nil || err.Error() != "append to closed ledger "+path {
		t.Fatalf("Append after Close: %v", err)
	}
}

// A bad line is named by its number, and the records before it are kept.
func TestReadRequestsNamesTheBadLine(t *testing.T) {
	got, err := ReadRequests(strings.NewReader("{\"cell_id\":\"a\"}\n{\"cell_id\":\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "raw sample 2: ") || len(got) != 1 || got[0].CellID != "a" {
		t.Fatalf("ReadRequests: %v, %+v; want the first record and an error naming sample 2", err, got)
	}
}

// wholeRecords ends at the last newline outside quotes, and says torn only when bytes
// follow it.
func TestWholeRecords(t *testing.T) {
	for _, c := range []struct {
		data, whole string
		torn        bool
	}{
		{"", "", false},
		{"h\n", "h\n", false},
		{"h\nab", "h\n", true},
		{"h\n\"a\nb\",c\n", "h\n\"a\nb\",c\n", false}, // a newline inside a quoted field
		{"h\n\"a\n", "h\n", true},                     // cut just after it
		{"h\n\"say \"\"hi\"\"\"\n", "h\n\"say \"\"hi\"\"\"\n", false},
	} {
		whole, torn := wholeRecords([]byte(c.data))
		if string(whole) != c.whole || torn != c.torn {
			t.Errorf("wholeRecords(%q) = %q, %v; want %q, %v", c.data, whole, torn, c.whole, c.torn)
		}
	}
}

// ReadLedger keeps, of one run's rows for one cell and level, the last appended (a
// resumed run measured it again), and every row without a run id; ReadLedgerAll keeps all.
func TestReadLedgerDropsSupersededRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	row := func(run, notes string, conc int) Row {
		r := sampleRow("c1", conc)
		r.RunID, r.Notes = run, notes
		return r
	}
	for _, r := range []Row{
		row("r1", "interrupted", 1),
		row("", "old ledger A", 1),
		row("r1", "level 2", 2),
		row("", "old ledger B", 1),
		row("r1", "measured again", 1),
		row("r2", "another run", 1),
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	notes := func(rows []Row) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.Notes)
		}
		return out
	}
	rows, err := ReadLedger(path)
	if want := []string{"old ledger A", "level 2", "old ledger B", "measured again", "another run"}; err != nil || !slices.Equal(notes(rows), want) {
		t.Errorf("ReadLedger: %q, %v; want %q", notes(rows), err, want)
	}
	all, err := ReadLedgerAll(path)
	if err != nil || len(all) != 6 || all[0].Notes != "interrupted" {
		t.Errorf("ReadLedgerAll: %q, %v; want all 6 rows", notes(all), err)
	}
}

// An earlier version's ledger is read by column name, and a record shorter than its
// header reads as the columns it has: the rest are not measured.
func TestReadLedgerOfEarlierColumnsWithAShortRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	writeCSV(t, path, []string{"concurrency", "cell_id", "output_tok_s", "notes"}, []string{"4", "c1", "35.5"})
	rows, err := ReadLedger(path)
	if err != nil || len(rows) != 1 {
		t.Fatalf("ReadLedger: %d rows, %v", len(rows), err)
	}
	if r := rows[0]; r.CellID != "c1" || r.Concurrency != 4 || r.OutputTokS != 35.5 || r.Notes != "" || !math.IsNaN(r.TTFT.P50) {
		t.Errorf("row %+v", r)
	}
}

// A ledger cut by hand below what this Ledger last wrote is checked again from the start
// before the next append: the torn record is cut off, the earlier rows kept.
func TestLedgerCutByHandWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.csv")
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(sampleRow("a", 1)); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if err := l.Append(sampleRow("b", 1)); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()+10); err != nil { // into b's record
		t.Fatal(err)
	}
	if err := l.Append(sampleRow("c", 1)); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadLedgerAll(path)
	var cells []string
	for _, r := range rows {
		cells = append(cells, r.CellID)
	}
	if want := []string{"a", "c"}; err != nil || !slices.Equal(cells, want) {
		t.Fatalf("rows %q, %v; want %q", cells, err, want)
	}
}
