// Package index keeps an SQLite database beside a results directory's CSV ledger and
// run directories, so that history over many runs is a query instead of a read of every
// file. The CSVs and manifests stay the source of truth: new runs are added to the index
// as they appear (only their records and run directories read), and it is rebuilt from
// the files when anything else changed. Its schema (docs/index.md) is meant for other
// tools too: the sqlite3 shell, DuckDB, Grafana.
//
// The driver is modernc.org/sqlite, SQLite translated to Go: no cgo and no system
// library, so the binary still cross-compiles and runs where SQLite is not installed.
package index

import (
	"database/sql"
	"fmt"
	"path/filepath"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/history"
)

// File is the index's name in a results directory.
const File = "index.sqlite"

// SchemaVersion changes whenever the tables do; an index of another version is rebuilt.
const SchemaVersion = 3

// Stats say what Update did.
type Stats struct {
	// Rebuilt: the whole index was built again from every source. Added: the runs that
	// were new since the last update were read and added, and nothing else was read.
	Rebuilt, Added bool
	Runs           int // runs read: all of them when Rebuilt, the new ones when Added
	Rows           int // rows written
}

// Update brings dir's index up to date. When the only change since the last update is
// new runs (records appended to the ledger, new run directories), it reads just those
// and adds them; when anything else changed (a run already indexed, a file removed or
// rewritten, another schema), it rebuilds the index from the ledger and run directories.
func Update(dir string) (Stats, error) {
	srcs, err := sources(dir)
	if err != nil {
		return Stats{}, err
	}
	db, err := open(dir)
	if err != nil {
		return Stats{}, err
	}
	defer db.Close()
	built, ok := builtFrom(db)
	if ok && sameSources(built.sources, srcs) {
		return Stats{}, nil
	}
	if ok {
		if st, added, err := addNew(db, dir, built, srcs); err != nil || added {
			return st, err
		}
	}
	mark, err := ledgerMark(filepath.Join(dir, ledger.ResultsFile), srcs)
	if err != nil {
		return Stats{}, err
	}
	set, err := history.Load(dir)
	if err != nil {
		return Stats{}, err
	}
	return build(db, set, srcs, mark)
}

func open(dir string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", filepath.Join(dir, File))
	if err != nil {
		return nil, err
	}
	// One writer; the pragmas make a rebuild one fast transaction.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL`); err != nil {
		db.Close()
		return nil, fmt.Errorf("index %s: %w", filepath.Join(dir, File), err)
	}
	return db, nil
}
