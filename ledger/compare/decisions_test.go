package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
)

// TestDecisionChanges pairs two runs' decisions by name: the same cell, level and
// outcome is unchanged; another cell, another level, another outcome or a decision one
// side lacks is a change.
func TestDecisionChanges(t *testing.T) {
	dec := func(name, outcome, cell string, conc int) ledger.Decision {
		d := ledger.Decision{DecisionSpec: ledger.DecisionSpec{Name: name}, Outcome: outcome}
		if cell != "" {
			d.Chosen = &ledger.Candidate{Cell: cell, Name: cell, Concurrency: conc}
		}
		return d
	}
	a := []ledger.Decision{dec("same", "sure", "q8", 4), dec("cell", "sure", "q8", 4), dec("level", "sure", "q8", 4),
		dec("outcome", "sure", "q8", 4), dec("gone", "none", "", 0)}
	b := []ledger.Decision{dec("same", "sure", "q8", 4), dec("cell", "sure", "q4", 4), dec("level", "sure", "q8", 1),
		dec("outcome", "indeterminate", "q8", 4), dec("new", "none", "", 0)}
	changed := map[string]bool{}
	for _, c := range DecisionChanges(a, b) {
		changed[c.Name] = c.Changed
	}
	want := map[string]bool{"same": false, "cell": true, "level": true, "outcome": true, "gone": true, "new": true}
	for name, w := range want {
		if got, ok := changed[name]; !ok || got != w {
			t.Errorf("%s: changed %v (present %v), want %v", name, got, ok, w)
		}
	}
	var buf bytes.Buffer
	if err := WriteDecisionChanges(&buf, DecisionChanges(a[1:2], b[1:2]), true); err != nil {
		t.Fatal(err)
	}
	if want := `- decision "cell" changed: A q8 at c4 (sure) → B q4 at c4 (sure)`; !strings.Contains(buf.String(), want) {
		t.Errorf("markdown %q lacks %q", buf.String(), want)
	}
}
