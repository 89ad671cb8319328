package index

import (
	"database/sql"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/history"
)

// addNew adds the runs that are new since the index was built, when that is all that
// changed: the ledger only grew (same header, same bytes before the mark) and by rows of
// runs the index does not have, and the run directories are only new ones. It reads
// just what is new, with history's own loader, from a staging directory that holds the
// ledger's header and new records and a copy of each new run directory's two files.
// added is false, with nothing written, when the index must be rebuilt instead.
func addNew(db *sql.DB, dir string, built state, srcs []source) (st Stats, added bool, err error) {
	ledgerPath := filepath.Join(dir, ledger.ResultsFile)
	newDirs, ok := onlyNewSources(built, srcs, ledgerPath)
	if !ok {
		return st, false, nil
	}
	stage, err := os.MkdirTemp("", "planrun-index-")
	if err != nil {
		return st, false, err
	}
	defer os.RemoveAll(stage)
	next, ok, err := stageNew(stage, ledgerPath, built, srcs, newDirs)
	if err != nil || !ok {
		return st, false, err
	}
	if len(newDirs) == 0 && next.Whole == built.ledger.Whole {
		// Only touched: nothing to read.
		st, err = addRuns(db, nil, built.notes, next, srcs)
		return st, err == nil, err
	}
	set, err := history.Load(stage)
	if err != nil {
		return st, false, nil // the rebuild says what is wrong with it
	}
	if ok, err := placeNewRuns(db, set, dir); err != nil || !ok {
		return st, false, err
	}
	notes, ok, err := notesAfter(db, built.notes, set, dir, stage)
	if err != nil || !ok {
		return st, false, err
	}
	st, err = addRuns(db, set.Runs, notes, next, srcs)
	return st, err == nil, err
}

// onlyNewSources says whether srcs differ from what the index was built from only by
// new run directories (returned) and a ledger that may have grown: no file the index
// read changed or went away.
func onlyNewSources(built state, srcs []source, ledgerPath string) (newDirs map[string]bool, ok bool) {
	newDirs = map[string]bool{}
	cur := map[string]bool{}
	for _, s := range srcs {
		cur[s.path] = true
		old, known := built.sources[s.path]
		switch {
		case s.path == ledgerPath:
			if !known || s.size < built.ledger.Whole {
				return nil, false
			}
		case !known && !built.hasDir(filepath.Dir(s.path)):
			newDirs[filepath.Dir(s.path)] = true
		case old != s:
			return nil, false // a run directory the index has read changed
		}
	}
	for p := range built.sources {
		if !cur[p] {
			return nil, false // removed
		}
	}
	return newDirs, true
}

// stageNew copies what is new into stage: the ledger's records after the mark (when the
// ledger changed) and the new run directories. next is the ledger's mark after them; ok
// is false when the ledger is not the one the index read.
func stageNew(stage, ledgerPath string, built state, srcs []source, newDirs map[string]bool) (next mark, ok bool, err error) {
	next = built.ledger
	for _, s := range srcs {
		if s.path == ledgerPath && s != built.sources[ledgerPath] {
			if next, ok, err = stageLedger(ledgerPath, s.size, built.ledger, filepath.Join(stage, ledger.ResultsFile)); err != nil || !ok {
				return next, false, err
			}
		}
	}
	for d := range newDirs {
		if err := stageRunDir(d, filepath.Join(stage, filepath.Base(d))); err != nil {
			return next, false, err
		}
	}
	return next, true, nil
}

// placeNewRuns checks that set holds only runs the index does not have, each started
// after its latest, and points their directories at dir's (not the staging copies).
// ok is false for a run the index has, one out of order, or one of no run id.
func placeNewRuns(db *sql.DB, set *history.Set, dir string) (ok bool, err error) {
	known, last, err := indexedRuns(db)
	if err != nil {
		return false, err
	}
	for _, r := range set.Runs {
		if known[r.ID] || !r.Started.After(last) || strings.HasPrefix(r.ID, "(no run id)") {
			return false, nil
		}
		if r.Dir != "" {
			r.Dir = filepath.Join(dir, filepath.Base(r.Dir))
		}
	}
	return true, nil
}

// notesAfter is the index's notes once set's runs are added: the plans note counted
// again over every run. ok is false when something new could not be read whole (a note
// beside the staged plans' own), which the rebuild then notes.
func notesAfter(db *sql.DB, notes []string, set *history.Set, dir, stage string) (after []string, ok bool, err error) {
	plans, err := planCounts(db)
	if err != nil {
		return nil, false, err
	}
	after = slices.DeleteFunc(slices.Clone(notes), func(n string) bool { return n == history.PlansNote(dir, plans) })
	for _, r := range set.Runs {
		plans[r.Plan()]++
	}
	if n := history.PlansNote(stage, countPlans(set)); len(set.Notes) > 0 && !(len(set.Notes) == 1 && set.Notes[0] == n) {
		return nil, false, nil
	}
	if n := history.PlansNote(dir, plans); n != "" {
		after = append(after, n)
	}
	return after, true, nil
}

// addRuns writes runs after those the index has, and its new state, in one transaction.
func addRuns(db *sql.DB, runs []*history.Run, notes []string, next mark, srcs []source) (st Stats, err error) {
	tx, err := db.Begin()
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	st.Added = true
	if len(runs) > 0 {
		w, err := newWriter(tx)
		if err != nil {
			return Stats{}, err
		}
		ord, err := maxOrd(tx)
		if err != nil {
			return Stats{}, err
		}
		for _, r := range runs {
			ord++
			if err := w.run(ord, r); err != nil {
				return Stats{}, err
			}
		}
		st.Runs, st.Rows = len(runs), w.rows
	}
	if err := writeState(tx, notes, next, srcs, true); err != nil {
		return st, err
	}
	return st, tx.Commit()
}

// stageLedger writes the ledger's header and the whole records after the mark to dst;
// ok is false when the ledger is not the one the mark was taken of.
func stageLedger(path string, size int64, m mark, dst string) (next mark, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return m, false, err
	}
	defer f.Close()
	head := make([]byte, min(int64(len(m.Header))+1, size))
	if _, err := f.ReadAt(head, 0); err != nil || string(head) != m.Header+"\n" {
		return m, false, nil // cut or rewritten since it was stated
	}
	from := max(m.Whole-tailBytes, 0)
	data := make([]byte, size-from)
	if _, err := f.ReadAt(data, from); err != nil {
		return m, false, nil
	}
	if tailHash(data[:m.Whole-from]) != m.Tail {
		return m, false, nil
	}
	added := wholeRecords(data[m.Whole-from:])
	next = mark{Whole: m.Whole + int64(len(added)), Header: m.Header}
	next.Tail = tailHash(data[:m.Whole-from+int64(len(added))])
	return next, true, os.WriteFile(dst, append([]byte(m.Header+"\n"), added...), 0o644)
}

// stageRunDir copies a new run directory's source files (runDirSources) to dst.
func stageRunDir(src, dst string) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	for _, name := range runDirSources {
		b, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// indexedRuns are the runs the index has, and the latest start among them.
func indexedRuns(db *sql.DB) (map[string]bool, time.Time, error) {
	rs, err := db.Query(`SELECT run_id, started_ns FROM run_data`)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer rs.Close()
	ids, last := map[string]bool{}, int64(math.MinInt64)
	for rs.Next() {
		var id string
		var ns int64
		if err := rs.Scan(&id, &ns); err != nil {
			return nil, time.Time{}, err
		}
		ids[id], last = true, max(last, ns)
	}
	return ids, time.Unix(0, last), rs.Err()
}

func planCounts(db *sql.DB) (map[string]int, error) {
	rs, err := db.Query(`SELECT coalesce(plan, ''), count(*) FROM run_data GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]int{}
	for rs.Next() {
		var p string
		var n int
		if err := rs.Scan(&p, &n); err != nil {
			return nil, err
		}
		out[p] = n
	}
	return out, rs.Err()
}

func countPlans(set *history.Set) map[string]int {
	out := map[string]int{}
	for _, r := range set.Runs {
		out[r.Plan()]++
	}
	return out
}

func maxOrd(tx *sql.Tx) (int, error) {
	var ord sql.NullInt64
	err := tx.QueryRow(`SELECT max(ord) FROM run_data`).Scan(&ord)
	if !ord.Valid {
		return -1, err
	}
	return int(ord.Int64), err
}
