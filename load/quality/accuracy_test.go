package quality

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		scorer, answer string
		choices        []string
		output         string
		want           bool
	}{
		{"exact", "Paris", nil, "  paris\n", true},
		{"exact", "Paris", nil, "Paris, France", false},
		{"regex", `\b4\b`, nil, "2+2 is 4.", true},
		{"regex", `^4$`, nil, "2+2 is 4.", false},
		{"choice", "B", []string{"A", "B", "C"}, "The answer is B, not C", true},
		{"choice", "B", []string{"A", "B", "C"}, "C, then B", false},
		{"choice", "Lyon", []string{"Paris", "Lyon"}, "nothing named", false},
		// The longer of two choices that start at one place is the one named.
		{"choice", "New York", []string{"New", "New York"}, "new york", true},
		{"fuzzy", "x", nil, "x", false},
	} {
		it := Item{Answer: tc.answer, Choices: tc.choices}
		if got := Score(tc.scorer, it, tc.output); got != tc.want {
			t.Errorf("%s %q on %q: %v, want %v", tc.scorer, tc.answer, tc.output, got, tc.want)
		}
	}
}

func TestReadItems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := write("good.jsonl", `{"prompt":"Capital of France?","answer":"Paris","choices":["Paris","Lyon"]}`+"\n\n"+`{"prompt":"2+2","answer":"B","choices":["A","B"]}`+"\n")
	items, err := ReadItems(good, "choice")
	if err != nil || len(items) != 2 || items[1].Line != 3 {
		t.Fatalf("%+v, %v", items, err)
	}
	for _, tc := range []struct{ name, body, scorer, want string }{
		{"broken.jsonl", "{\"prompt\":\"x\"", "exact", "broken.jsonl:1"},
		{"noanswer.jsonl", `{"prompt":"x"}`, "exact", `noanswer.jsonl:1: a line needs a "prompt" and an "answer"`},
		{"badre.jsonl", `{"prompt":"x","answer":"("}`, "regex", "badre.jsonl:1: answer is not a regular expression"},
		{"nochoice.jsonl", `{"prompt":"x","answer":"C","choices":["A","B"]}`, "choice", "nochoice.jsonl:1: the answer \"C\" is not one of its choices"},
		{"empty.jsonl", "\n", "exact", "no items"},
	} {
		if _, err := ReadItems(write(tc.name, tc.body), tc.scorer); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// answering is a server that answers every prompt with its table's text.
type answering struct {
	fake
	answers map[string]string
}

func (a *answering) Do(_ context.Context, req backends.Request) backends.Sample {
	return backends.Sample{Text: a.answers[req.Prompt], OutputTokens: 1}
}

func TestAccuracy(t *testing.T) {
	b := &answering{answers: map[string]string{"q1": "Paris", "q2": "Rome", "q3": "paris"}}
	items := []Item{{Prompt: "q1", Answer: "Paris"}, {Prompt: "q2", Answer: "Paris"}, {Prompt: "q3", Answer: "Paris"}}
	correct, n, err := Accuracy(context.Background(), b, "m", items, "exact", 8, 1)
	if err != nil || correct != 2 || n != 3 {
		t.Errorf("%d of %d, %v", correct, n, err)
	}
}
