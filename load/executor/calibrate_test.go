package executor

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

// Calibrate's search, probe by probe, on servers whose count is a known line: it starts
// at half a word a token, steps in proportion to the body's share of the miss (at least
// a word), stops on the exact count or on a length it has probed, and keeps the closest.
func TestCalibrateSearch(t *testing.T) {
	for _, c := range []struct {
		name          string
		perWord, over int
		target        int
		probes        []int // words of each probe
		words, actual int
		note          string
	}{
		// 50 words count 110: 10 over, 10·50/110 = 4 words fewer; 46 count 102: 2·46/102
		// is 0, so one word fewer; 45 count 100.
		{"exact", 2, 10, 100, []int{50, 46, 45}, 45, 100, ""},
		// Odd counts of an even target: 45 and 44 count 101 and 99, and 45 again (probed)
		// ends it; the first of the two closest is kept.
		{"one off", 2, 11, 100, []int{50, 46, 45, 44}, 45, 101, "closest prompt is 1 tokens off the requested 100"},
		// Under the target: one word more at a time once the step rounds to 0.
		{"from below", 1, 0, 41, []int{20, 41}, 41, 41, ""},
		{"a small target", 1, 3, 5, []int{2}, 2, 5, ""},
		// A template of 1,000 tokens: each step closes about a third of the body's miss,
		// and the eighth probe is the last.
		{"eight probes at most", 1, 1000, 1010, []int{505, 339, 256, 206, 173, 149, 131, 117}, 117, 1117,
			"closest prompt is 107 tokens off the requested 1010"},
	} {
		var probes []int
		fb := &fakeBackend{promptTokens: func(p string) int {
			n := len(strings.Fields(p)) - 1 // the prompt's own marker is not a word
			probes = append(probes, n)
			return c.perWord*n + c.over
		}}
		p := &Prompts{Salt: "x"}
		cal := Calibrate(context.Background(), fb, backends.Request{}, p, c.target)
		if !slices.Equal(probes, c.probes) || cal.Words != c.words || p.Words != c.words || cal.Actual != c.actual ||
			cal.Note != c.note || cal.Probes != len(c.probes) || cal.Requested != c.target {
			t.Errorf("%s: probes %v, calibration %+v (prompt words %d); want probes %v, %d words counting %d, note %q",
				c.name, probes, cal, p.Words, c.probes, c.words, c.actual, c.note)
		}
	}
}

// Without a target length (0) or with the plan's own text there is nothing to calibrate:
// one request measures what the prompt counts.
func TestCalibrateNothingToMatch(t *testing.T) {
	for _, c := range []struct {
		text   string
		target int
	}{{"", 0}, {"the plan's prompt", 50}} {
		fb := &fakeBackend{promptTokens: func(string) int { return 17 }}
		cal := Calibrate(context.Background(), fb, backends.Request{}, &Prompts{Text: c.text, Words: 3}, c.target)
		if cal.Probes != 1 || cal.Actual != 17 || cal.Note != "fixed prompt text: not calibrated" {
			t.Errorf("text %q, target %d: %+v, want one probe counting 17, not calibrated", c.text, c.target, cal)
		}
	}
}

// A one-word probe the server rejects is not retried (it cannot be shorter): the
// calibration gives up at once with the rejection as its note.
func TestCalibrateOneWordRejected(t *testing.T) {
	fb := &fakeBackend{promptTokens: func(string) int { return -1 }}
	p := &Prompts{Salt: "x"}
	cal := Calibrate(context.Background(), fb, backends.Request{}, p, 1)
	if cal.Probes != 1 || cal.Actual != 0 || p.Words != roughWords(1) || !strings.Contains(cal.Note, "400 Bad Request") {
		t.Fatalf("%+v (prompt words %d): want one probe, the rough words, the rejection as the note", cal, p.Words)
	}
}
