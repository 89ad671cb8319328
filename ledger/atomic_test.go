package ledger

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "report.md")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteFileAtomic(path, write("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, write("second")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v: results files must be readable by the team", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); string(b) != "second" {
		t.Errorf("content %q", b)
	}
	// A failed write leaves the previous file and no temporary behind.
	if err := WriteFileAtomic(path, func(io.Writer) error { return errors.New("boom") }); err == nil {
		t.Fatal("the writer's error was lost")
	}
	if b, _ := os.ReadFile(path); string(b) != "second" {
		t.Errorf("a failed write changed the file: %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}
