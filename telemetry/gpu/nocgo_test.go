//go:build !cgo

package gpu

import "testing"

func TestOpenWithoutCgo(t *testing.T) {
	tel := Open()
	defer tel.Close()
	if tel.Available() || tel.Note() != NoteNoCgo {
		t.Fatalf("Available %v, Note %q; want the no-cgo note", tel.Available(), tel.Note())
	}
	if sum := tel.Start(0, nil).Stop(); sum.Note != NoteNoCgo {
		t.Errorf("Summary.Note = %q", sum.Note)
	}
}
