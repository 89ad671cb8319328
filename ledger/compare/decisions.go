package compare

import (
	"fmt"
	"io"
	"strings"

	"github.com/planrun/planrun/ledger"
)

// DecisionChange is one decision block's answer in the two result sets compared: A's
// and B's (nil where that side's run has no such decision), and whether it changed.
type DecisionChange struct {
	Name    string
	A, B    *ledger.Decision
	Changed bool
}

// DecisionChanges pairs the decisions of two runs by name, in A's order then B's own.
func DecisionChanges(a, b []ledger.Decision) []DecisionChange {
	var out []DecisionChange
	find := func(ds []ledger.Decision, name string) *ledger.Decision {
		for i := range ds {
			if ds[i].Name == name {
				return &ds[i]
			}
		}
		return nil
	}
	for i := range a {
		c := DecisionChange{Name: a[i].Name, A: &a[i], B: find(b, a[i].Name)}
		c.Changed = c.B == nil || !ledger.SameAnswer(*c.A, *c.B)
		out = append(out, c)
	}
	for i := range b {
		if find(a, b[i].Name) == nil {
			out = append(out, DecisionChange{Name: b[i].Name, B: &b[i], Changed: true})
		}
	}
	return out
}

func (c DecisionChange) String() string {
	answer := func(d *ledger.Decision) string {
		if d == nil {
			return "not asked"
		}
		return d.Answer()
	}
	if !c.Changed {
		return fmt.Sprintf("decision %q: unchanged, %s", c.Name, answer(c.A))
	}
	s := fmt.Sprintf("decision %q changed: A %s → B %s", c.Name, answer(c.A), answer(c.B))
	if c.B != nil && c.B.Reason != "" {
		s += "; B: " + c.B.Reason
	}
	return s
}

// WriteDecisionChanges writes the decisions of the two sides under a comparison, one
// line each (a Markdown list with markdown); nothing when neither side has any.
func WriteDecisionChanges(w io.Writer, changes []DecisionChange, markdown bool) error {
	if len(changes) == 0 {
		return nil
	}
	var b strings.Builder
	if markdown {
		b.WriteString("\n**Decisions**\n\n")
	} else {
		b.WriteString("\nDecisions:\n")
	}
	for _, c := range changes {
		if markdown {
			b.WriteString("- " + strings.ReplaceAll(c.String(), "|", `\|`) + "\n")
		} else {
			b.WriteString("  " + c.String() + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
