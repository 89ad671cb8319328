package executor

import (
	"slices"
	"strings"
	"testing"
)

// The filler prompt walks the word list seven words at a time and, once round it, one
// word further, so its second round is not its first again. The words are pinned: a
// change changes every filler prompt sent, and what it counts.
func TestFillerWords(t *testing.T) {
	n := len(filler)
	w := strings.Fields((&Prompts{}).words(n+3, 0))
	if n != 139 || len(w) != n+3 {
		t.Fatalf("%d filler words, a prompt of %d; want 139 and %d", n, len(w), n+3)
	}
	if want := []string{"the", "for", "on", "from", "you", "we", "been", "out", "time", "any", "man", "did"}; !slices.Equal(w[:12], want) {
		t.Errorf("first words %v, want %v", w[:12], want)
	}
	if want := []string{"us", "against", "of", "it", "not"}; !slices.Equal(w[n-2:], want) {
		t.Errorf("words %d on %v, want %v", n-2, w[n-2:], want)
	}
	if (&Prompts{}).words(0, 0) != "" || (&Prompts{}).words(1, 5) != "the" {
		t.Error("no words, or one from any start: the filler starts at its first word")
	}
}
