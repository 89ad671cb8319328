package executor

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// The probes are spread evenly over the span: on a server whose count is a line, the
// probes after the first two land on their aim exactly (lo + (hi-lo)·i/3).
func TestFitTokensSpreadsItsProbes(t *testing.T) {
	var asked []int
	fb := &fakeBackend{promptTokens: func(prompt string) int {
		n := 10 + 2*len(strings.Fields(prompt))
		asked = append(asked, n)
		return n
	}}
	FitTokens(context.Background(), fb, backends.Request{}, &Prompts{Shared: true}, 100, 400)
	if len(asked) != 4 || asked[2] != 300 || asked[3] != 400 {
		t.Fatalf("probes counted %v, want 4 ending ..., 300, 400", asked)
	}
}

// A probe the server rejects (vLLM's 400 past its context) is retried at two thirds of
// its words, three times at most; then the fit gives up and says why.
func TestFitTokensRetriesARejectedProbeThrice(t *testing.T) {
	var words []int
	fb := &fakeBackend{promptTokens: func(prompt string) int {
		words = append(words, len(strings.Fields(prompt)))
		return -1 // every probe rejected
	}}
	f := FitTokens(context.Background(), fb, backends.Request{}, &Prompts{Shared: true}, 100, 400)
	if want := []int{75, 50, 33, 22}; !slices.Equal(words, want) || f.Probes != 4 {
		t.Fatalf("probe words %v (%d probes), want %v", words, f.Probes, want)
	}
	if f.TokensPerWord != 0 || !strings.Contains(f.Note, "400 Bad Request") {
		t.Fatalf("fit %+v, want none, with the rejection as its note", f)
	}
}

// No fit from a server that counts nothing (given up at the first probe) or the same
// for every prompt; each says why.
func TestFitTokensWithoutAFit(t *testing.T) {
	for _, c := range []struct {
		count  func(string) int
		probes int
		note   string
	}{
		{func(string) int { return 0 }, 1, "the server reports no prompt token count"},
		{func(string) int { return 50 }, 4, "the server's counts do not grow with the prompt"},
	} {
		f := FitTokens(context.Background(), &fakeBackend{promptTokens: c.count}, backends.Request{}, &Prompts{Shared: true}, 100, 400)
		if f.TokensPerWord != 0 || f.Probes != c.probes || f.Note != c.note {
			t.Errorf("fit %+v, want none after %d probes: %q", f, c.probes, c.note)
		}
	}
}

// A rejected probe is cut to fewer words, never to none: a one-word probe rejected is
// not retried (it cannot be shorter), and a retry that would repeat a probed word count
// stops at one word rather than stepping below it.
func TestFitTokensNeverProbesWithoutWords(t *testing.T) {
	for _, c := range []struct {
		name     string
		lo, hi   int
		accept   int // the most words the server takes; more is rejected (400)
		wantSeen []int
		perWord  float64 // the fit's slope; 0: none
	}{
		{"one word rejected", 1, 1, 0, []int{1}, 0},
		{"retries down to the one word probed", 1, 4, 1, []int{1, 2, 1, 2, 1, 3, 2, 1}, 0},
		// 3 words rejected: two thirds of it is 2, probed already, so 1.
		{"a retry steps below the words probed", 1, 4, 2, []int{1, 2, 3, 1, 3, 1}, 1},
	} {
		var seen []int
		fb := &fakeBackend{promptTokens: func(prompt string) int {
			n := len(strings.Fields(prompt))
			seen = append(seen, n)
			if n > c.accept {
				return -1
			}
			return 10 + n
		}}
		f := FitTokens(context.Background(), fb, backends.Request{}, &Prompts{Shared: true}, c.lo, c.hi)
		if !slices.Equal(seen, c.wantSeen) || f.Probes != len(c.wantSeen) || f.TokensPerWord != c.perWord {
			t.Errorf("%s: probes of %v words (%d probes), fit %+v; want %v, %v tokens a word", c.name, seen, f.Probes, f, c.wantSeen, c.perWord)
		}
	}
}
