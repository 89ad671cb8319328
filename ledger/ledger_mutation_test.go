package ledger

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
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
