package apply

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
)

// newRunDir creates the run's directory, named for the run (the plan's file name, or
// -name) and its start time, as <name>-2006-01-02T15-04-05; a second run in the same
// second gets a suffix rather than mixing its files with the first's.
func newRunDir(parent, name string, started time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(parent, name+"-"+started.UTC().Format(RunTimeLayout))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// RunTimeLayout is the start time in a run directory's name.
const RunTimeLayout = "2006-01-02T15-04-05"

// CheckRunName says why name cannot name run directories (apply -name): it must be a
// plain file name, so the run directory stays inside the results directory.
func CheckRunName(name string) error {
	switch {
	case name == "":
		return errors.New("the run name is empty")
	case len(name) > 64:
		return fmt.Errorf("the run name %q is longer than 64 characters", name)
	case name[0] == '.' || name[0] == '-':
		return fmt.Errorf("the run name %q starts with %q: use a letter or digit first", name, name[:1])
	}
	for _, r := range name {
		if !safeNameRune(r) {
			return fmt.Errorf("the run name %q holds %q: use letters, digits, '.', '_' and '-' only", name, r)
		}
	}
	return nil
}

func safeNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

// runName is the name part of the run's directory: Options.Name, or the plan's file
// name with any character unsafe in a file name replaced by '-'.
func (a *applier) runName() string {
	if a.o.Name != "" {
		return a.o.Name
	}
	name := strings.TrimLeft(strings.Map(func(r rune) rune {
		if safeNameRune(r) {
			return r
		}
		return '-'
	}, planName(a.o.Plan)), ".-")
	if len(name) > 64 {
		name = name[:64]
	}
	return cmp.Or(name, "run")
}

func planName(p *plan.Plan) string {
	base := filepath.Base(p.Path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// sortRows orders rows by cell (plan order) then concurrency, for a stable report.
func sortRows(rows []ledger.Row, cells []*plan.Cell) {
	order := map[string]int{}
	for i, c := range cells {
		order[c.ID] = i
	}
	sort.SliceStable(rows, func(i, j int) bool {
		oi, oj := order[rows[i].CellID], order[rows[j].CellID]
		if oi != oj {
			return oi < oj
		}
		return rows[i].Concurrency < rows[j].Concurrency
	})
}

func (a *applier) writeManifest() error {
	for i := range a.manifest.Cells {
		for _, c := range a.o.Cells {
			if c.ID == a.manifest.Cells[i].ID {
				a.manifest.Cells[i].Settings = cellSettings(c)
			}
		}
	}
	return ledger.WriteManifest(filepath.Join(a.res.RunDir, ledger.ManifestFile), a.manifest)
}

// writeReport re-renders every report of report.Outputs (Markdown, HTML, summary.json)
// and the charts from every row so far: each kind's file in the run directory, and
// each path the plan's output blocks of that kind name.
func (a *applier) writeReport() error {
	rows := latestRows(a.res.Rows)
	sortRows(rows, a.o.Cells)
	charts, err := report.WriteCharts(a.res.RunDir, rows, a.vram)
	if err != nil {
		a.note("charts: %v", err)
	}
	r := report.Report{Title: planName(a.o.Plan), Rows: rows, Env: a.manifest.Environment, Charts: charts,
		Run: a.manifest.RunID, Started: a.manifest.Started, Summary: a.summary(rows)}
	r.Language, r.Percentiles = reportChoices(a.o.Plan.Outputs)
	for _, c := range a.manifest.Cells {
		if c.Capacity != nil {
			r.Capacities = append(r.Capacities, *c.Capacity)
		}
	}
	for _, out := range report.Outputs {
		if out.Write == nil {
			continue // appended to as the run goes
		}
		paths := a.declared[out.Name]
		if out.RunFile != "" {
			paths = append([]string{filepath.Join(a.res.RunDir, out.RunFile)}, paths...)
		}
		for _, p := range paths {
			if err := ledger.WriteFileAtomic(p, func(w io.Writer) error { return out.Write(w, r) }); err != nil {
				return fmt.Errorf("writing %s: %w", p, err)
			}
		}
	}
	return nil
}

// reportChoices are the reports' language and percentiles: the choice of the last
// output block whose kind takes the option (all reports of a run show the same).
func reportChoices(outs []*plan.Output) (language string, percentiles []int) {
	for _, out := range outs {
		k, _ := ledger.LookupOutput(out.Kind)
		if slices.Contains(k.Options, ledger.OptionLanguage) && out.Language != "" {
			language = out.Language
		}
		if slices.Contains(k.Options, ledger.OptionPercentiles) {
			percentiles = out.Percentiles
		}
	}
	return language, percentiles
}

// latestRows keeps, per cell and level, the last row: an interrupted level that was run
// again on resume shows once, with its complete figures.
func latestRows(rows []ledger.Row) []ledger.Row {
	idx := map[levelKey]int{}
	var out []ledger.Row
	for _, r := range rows {
		k := rowKey(r)
		if i, ok := idx[k]; ok {
			out[i] = r
			continue
		}
		idx[k] = len(out)
		out = append(out, r)
	}
	return out
}

// summary is summary.json's document: the run's plan, environment, cells and rows.
func (a *applier) summary(rows []ledger.Row) ledger.Summary {
	s := ledger.NewSummary(planName(a.o.Plan), a.manifest, rows)
	s.Outcome = a.outcome()
	for _, f := range a.res.ExpectFailures {
		s.ExpectFailures = append(s.ExpectFailures, f.String())
	}
	return s
}

// outcome is the run's outcome so far, as summary.json states it.
func (a *applier) outcome() string {
	if a.res.Interrupted {
		return ledger.OutcomeInterrupted
	}
	failed := len(a.res.ExpectFailures) > 0
	for _, c := range a.manifest.Cells {
		switch c.Status {
		case ledger.StatusInterrupted:
			return ledger.OutcomeInterrupted
		case ledger.StatusFailed:
			failed = true
		case "pending":
			return ledger.OutcomeRunning
		}
	}
	switch {
	case failed:
		return ledger.OutcomeFailed
	case a.manifest.Ended.IsZero():
		return ledger.OutcomeRunning
	}
	return ledger.OutcomeComplete
}
