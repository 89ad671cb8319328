package history

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
)

// DecisionRun is one run's answers of its plan's decision blocks.
type DecisionRun struct {
	RunID     string
	Started   time.Time
	Decisions []ledger.Decision
}

// Decisions are the decisions of each run of s that has a run directory whose
// summary.json holds any, in the runs' order (oldest first).
func Decisions(s *Set) []DecisionRun {
	var out []DecisionRun
	for _, r := range s.Runs {
		if r.Dir == "" {
			continue
		}
		f, err := os.Open(filepath.Join(r.Dir, ledger.SummaryFile))
		if err != nil {
			continue
		}
		sum, err := ledger.ReadSummary(f)
		f.Close()
		if err == nil && len(sum.Decisions) > 0 {
			out = append(out, DecisionRun{RunID: r.ID, Started: r.Started, Decisions: sum.Decisions})
		}
	}
	return out
}

// WriteDecisions lists, for each decision name, every run's answer, oldest first, and
// marks the runs where it changed from the run before; nothing when no run decided.
func WriteDecisions(w io.Writer, runs []DecisionRun) error {
	if len(runs) == 0 {
		return nil
	}
	var names []string
	for _, r := range runs {
		for _, d := range r.Decisions {
			if !slices.Contains(names, d.Name) {
				names = append(names, d.Name)
			}
		}
	}
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "\ndecision %q across runs:\n", name)
		var prev *ledger.Decision
		for _, r := range runs {
			var d *ledger.Decision
			for i := range r.Decisions {
				if r.Decisions[i].Name == name {
					d = &r.Decisions[i]
				}
			}
			if d == nil {
				continue
			}
			mark := ""
			if prev != nil && !ledger.SameAnswer(*prev, *d) {
				mark = "  ← changed"
			}
			fmt.Fprintf(&b, "  %s  %s  %s%s\n", r.Started.UTC().Format("2006-01-02 15:04"), r.RunID, d.Answer(), mark)
			prev = d
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
