// Package history reads results across time: the runs a results directory (or a
// ledger) holds, each cell's series of measured rows with the environment each row was
// measured in, a trend per figure judged against its run-to-run noise, and a rolling
// baseline that judges one run against the same cell's previous runs.
package history

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
)

// Run is one run of a plan: its rows, and its run directory's manifest when the
// directory is there.
type Run struct {
	ID       string
	Dir      string           // its run directory; "" when only a ledger names the run
	Manifest *ledger.Manifest // nil without a readable manifest.json
	Started  time.Time
	Rows     []ledger.Row
	// Envs are the rows' environments where the loader read them whole (the index);
	// nil: Env reads them from the row and the manifest.
	Envs []Env
	// order is where the run first appears (ledger order, then run directories), which
	// breaks ties of Started (ledger times have whole seconds).
	order int
}

// Plan is the run's plan name (from its rows).
func (r *Run) Plan() string {
	for _, row := range r.Rows {
		if row.Plan != "" {
			return row.Plan
		}
	}
	return ""
}

// Env is the environment of the run's i-th row.
func (r *Run) Env(i int) Env {
	if r.Envs != nil {
		return r.Envs[i]
	}
	return EnvOf(r.Rows[i], r.Manifest)
}

// Set is the runs found at a path, oldest first, and what was passed over on the way.
type Set struct {
	// Dir is the results directory: the ledger's directory, beside the run directories.
	Dir  string
	Runs []*Run
	// Notes say what was skipped or could be read only in part, so nothing is dropped
	// without a word: unreadable files, torn records, runs of several plans.
	Notes []string
}

// Load reads the runs at path: a results directory (its results.csv ledger and every
// run directory in it), a run directory (then its results directory, so the runs
// before it are there too), a CSV ledger (with the run directories beside it), or a
// plan file (the results directory beside it). Files and directories that are neither
// ledger nor run are left alone.
func Load(path string) (*Set, error) {
	dir, ledgerPath, err := resolve(path)
	if err != nil {
		return nil, err
	}
	s := &Set{Dir: dir}
	l := loader{set: s, runs: map[string]*Run{}, seen: map[rowKey]bool{}}
	if ledgerPath != "" {
		rows, err := ledger.ReadLedger(ledgerPath)
		if err != nil && len(rows) == 0 && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.note("%v (the %d rows before it are kept)", err, len(rows))
		}
		l.add(rows, "")
	}
	if err := l.runDirs(dir); err != nil {
		return nil, err
	}
	if len(l.runs) == 0 {
		return nil, fmt.Errorf("%s holds no planrun results (no results.csv ledger, no run directory with a manifest.json)", path)
	}
	for _, r := range l.runs {
		s.Runs = append(s.Runs, r)
	}
	for _, r := range s.Runs {
		r.Started = runStart(r)
	}
	sort.SliceStable(s.Runs, func(i, j int) bool {
		a, b := s.Runs[i], s.Runs[j]
		if !a.Started.Equal(b.Started) {
			return a.Started.Before(b.Started)
		}
		return a.order < b.order
	})
	s.notePlans()
	return s, nil
}

// resolve finds the results directory and its ledger for path.
func resolve(path string) (dir, ledgerPath string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	switch {
	case !st.IsDir() && strings.HasSuffix(path, ".hcl"):
		dir = filepath.Join(filepath.Dir(path), "results")
	case !st.IsDir():
		return filepath.Dir(path), path, nil
	case isFile(filepath.Join(path, ledger.ManifestFile)):
		dir = filepath.Dir(filepath.Clean(path)) // a run directory: its results directory
	default:
		dir = path
	}
	ledgerPath = filepath.Join(dir, ledger.ResultsFile)
	if !isFile(ledgerPath) {
		ledgerPath = ""
	}
	return dir, ledgerPath, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

type rowKey struct {
	run, cell string
	conc      int
	rate      float64
	started   time.Time
}

type loader struct {
	set  *Set
	runs map[string]*Run
	seen map[rowKey]bool
	// anon numbers the runs of rows without a run id (ledgers from before run ids).
	anon int
	last string
}

// add files rows under their runs; a row already read (the ledger and its run
// directory hold the same rows) is kept once.
func (l *loader) add(rows []ledger.Row, dir string) {
	for _, row := range rows {
		id := row.RunID
		if id == "" {
			id = l.anonRun(row)
		}
		k := rowKey{id, row.CellID, row.Concurrency, row.RequestRate, row.Started}
		if l.seen[k] {
			continue
		}
		l.seen[k] = true
		r := l.run(id)
		if dir != "" && r.Dir == "" {
			r.Dir = dir
		}
		r.Rows = append(r.Rows, row)
	}
}

// anonRun names the run of a row without a run id: consecutive rows of one plan hash
// and planrun version are one run until a cell and level repeats.
func (l *loader) anonRun(row ledger.Row) string {
	if r, ok := l.runs[l.last]; ok && strings.HasPrefix(l.last, "(no run id)") {
		prev := r.Rows[len(r.Rows)-1]
		repeated := slices.ContainsFunc(r.Rows, func(x ledger.Row) bool {
			return x.CellID == row.CellID && x.Concurrency == row.Concurrency && x.RequestRate == row.RequestRate
		})
		if prev.PlanHash == row.PlanHash && prev.Version == row.Version && !repeated {
			return l.last
		}
	}
	l.anon++
	l.last = fmt.Sprintf("(no run id) %d", l.anon)
	return l.last
}

func (l *loader) run(id string) *Run {
	r, ok := l.runs[id]
	if !ok {
		r = &Run{ID: id, order: len(l.runs)}
		l.runs[id] = r
	}
	return r
}

// runDirs reads every directory of dir that holds a manifest.json: its manifest, and
// its results.csv for rows the ledger lacks (a run with an output "csv" elsewhere).
func (l *loader) runDirs(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && len(l.runs) > 0 {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		rd := filepath.Join(dir, e.Name())
		mp := filepath.Join(rd, ledger.ManifestFile)
		if !isFile(mp) {
			continue // not a run directory: left alone
		}
		m, err := ledger.ReadManifest(mp)
		var man *ledger.Manifest
		if err != nil {
			l.set.note("%s: %v (the run's rows are kept, without its environment)", mp, err)
		} else {
			man = &m
		}
		rows, err := ledger.ReadLedger(filepath.Join(rd, ledger.ResultsFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.set.note("%v (the %d rows before it are kept)", err, len(rows))
		}
		l.add(rows, rd)
		id := cmp.Or(m.RunID, runIDOf(rows))
		if id == "" {
			continue
		}
		r := l.run(id)
		r.Dir, r.Manifest = rd, man
	}
	return nil
}

func runIDOf(rows []ledger.Row) string {
	for _, r := range rows {
		if r.RunID != "" {
			return r.RunID
		}
	}
	return ""
}

// runStart is the manifest's start, else the earliest row start.
func runStart(r *Run) time.Time {
	if r.Manifest != nil && !r.Manifest.Started.IsZero() {
		return r.Manifest.Started
	}
	var t time.Time
	for _, row := range r.Rows {
		if !row.Started.IsZero() && (t.IsZero() || row.Started.Before(t)) {
			t = row.Started
		}
	}
	return t
}

func (s *Set) note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// notePlans says when the runs are of several plans: their cells are kept apart.
func (s *Set) notePlans() {
	count := map[string]int{}
	for _, r := range s.Runs {
		count[r.Plan()]++
	}
	if n := PlansNote(s.Dir, count); n != "" {
		s.Notes = append(s.Notes, n)
	}
}

// PlansNote is the note a set of runs of several plans carries, from its runs by plan
// name; "" for one plan. (The index keeps it up to date as runs are added.)
func PlansNote(dir string, count map[string]int) string {
	if len(count) < 2 {
		return ""
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(count)) {
		parts = append(parts, fmt.Sprintf("%s (%d runs)", cmp.Or(p, "(unnamed)"), count[p]))
	}
	return fmt.Sprintf("%s holds runs of %d plans: %s; each cell's series stays within its plan", dir, len(count), strings.Join(parts, ", "))
}

// Run returns the run with the given id, or nil.
func (s *Set) Run(id string) *Run {
	for _, r := range s.Runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// RunAt is the run path names: the run directory's own run when path is one, else the
// latest run of the set.
func (s *Set) RunAt(path string) (*Run, error) {
	if isFile(filepath.Join(path, ledger.ManifestFile)) {
		abs, _ := filepath.Abs(path)
		for _, r := range s.Runs {
			if d, _ := filepath.Abs(r.Dir); r.Dir != "" && d == abs {
				return r, nil
			}
		}
		return nil, fmt.Errorf("%s: its run is not among the runs of %s", path, s.Dir)
	}
	return s.Runs[len(s.Runs)-1], nil
}
