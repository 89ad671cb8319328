// Package index keeps an SQLite database beside a results directory's CSV ledger and
// run directories, so that history over many runs is a query instead of a read of every
// file. The CSVs and manifests stay the source of truth: the index is rebuilt from them
// whenever it is stale (a source file added, removed, grown or touched), and its schema
// (docs/commands.md, "The results index") is meant for other tools too: the sqlite3 shell,
// DuckDB, Grafana.
//
// The driver is modernc.org/sqlite, SQLite translated to Go: no cgo and no system
// library, so the binary still cross-compiles and runs where SQLite is not installed.
package index

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/planrun/planrun/history"
	"github.com/planrun/planrun/ledger"
)

// File is the index's name in a results directory.
const File = "index.sqlite"

// SchemaVersion changes whenever the tables do; an index of another version is rebuilt.
const SchemaVersion = 2

// Stats say what Update did.
type Stats struct {
	Rebuilt bool
	Runs    int
	Rows    int
}

// Update brings dir's index up to date: it rebuilds it from the ledger and run
// directories when any source differs from what it was built from.
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
	if fresh(db, srcs) {
		return Stats{}, nil
	}
	set, err := history.Load(dir)
	if err != nil {
		return Stats{}, err
	}
	return build(db, set, srcs)
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

// source is a file the index is built from, as it was then.
type source struct {
	path  string
	size  int64
	mtime int64
}

// sources are the ledger and every run directory's manifest.json and results.csv.
func sources(dir string) ([]source, error) {
	paths := []string{filepath.Join(dir, ledger.ResultsFile)}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			paths = append(paths, filepath.Join(dir, e.Name(), "manifest.json"), filepath.Join(dir, e.Name(), "results.csv"))
		}
	}
	var out []source
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, source{p, st.Size(), st.ModTime().UnixNano()})
	}
	return out, nil
}

// fresh reports whether the index was built, by this schema, from exactly srcs. The
// sources are read in one query: one a file would be 20,000 round trips for 10,000 runs.
func fresh(db *sql.DB, srcs []source) bool {
	var v string
	if db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v) != nil || v != strconv.Itoa(SchemaVersion) {
		return false
	}
	// The rows table has a column for each ledger column, and a newer planrun has more.
	if db.QueryRow(`SELECT value FROM meta WHERE key = 'columns'`).Scan(&v) != nil || v != columnList() {
		return false
	}
	rs, err := db.Query(`SELECT path, size, mtime_ns FROM sources`)
	if err != nil {
		return false
	}
	defer rs.Close()
	built := make(map[string]source, len(srcs))
	for rs.Next() {
		var s source
		if rs.Scan(&s.path, &s.size, &s.mtime) != nil {
			return false
		}
		built[s.path] = s
	}
	if rs.Err() != nil || len(built) != len(srcs) {
		return false
	}
	for _, s := range srcs {
		if built[s.path] != s {
			return false
		}
	}
	return true
}

// columns are the rows table's ledger columns: every CSV column, by its header name.
func columns() []ledger.SummaryColumn {
	return ledger.NewSummary("", ledger.Manifest{}, nil).Columns
}

// columnList names the rows table's ledger columns, as meta records them.
func columnList() string {
	var names []string
	for _, c := range columns() {
		names = append(names, c.Name)
	}
	return strings.Join(names, ",")
}

func sqlType(t string) string {
	switch t {
	case "integer":
		return "INTEGER"
	case "number":
		return "REAL"
	}
	return "TEXT"
}

// envColumns are the rows table's environment columns beside the ledger's, from the
// row's run's manifest; settings is the cell's settings as a JSON object.
var envColumns = []string{"server_version", "model_digest", "model_root", "driver", "cuda", "dataset", "server_command", "settings"}

// envValues are a row's envColumns values.
func envValues(e history.Env) []any {
	var settings []byte
	if e.Settings != nil {
		settings, _ = json.Marshal(e.Settings)
	}
	return []any{nullString(e.ServerVersion), nullString(e.ModelDigest), nullString(e.ModelRoot), nullString(e.Driver),
		nullString(e.CUDA), nullString(e.Dataset), nullString(e.ServerCommand), nullBytes(settings)}
}

// runEnv is the part of a run's manifest its rows' environment is read from (history's
// EnvOf), without the cells (their settings are in the rows), the run id and the times:
// what a history query decodes, once for each distinct value, since runs mostly share it.
func runEnv(m *ledger.Manifest) []byte {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(ledger.Manifest{Environment: m.Environment, Variables: m.Variables, Command: m.Command,
		Servers: m.Servers, Datasets: m.Datasets})
	return b
}

// schema creates the tables (see docs/commands.md, "The results index").
func schema() string {
	var cols []string
	for _, c := range columns() {
		cols = append(cols, fmt.Sprintf("%q %s", c.Name, sqlType(c.Type)))
	}
	for _, c := range envColumns {
		cols = append(cols, fmt.Sprintf("%q TEXT", c))
	}
	return `
DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS sources; DROP TABLE IF EXISTS runs; DROP TABLE IF EXISTS rows;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE sources (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
CREATE TABLE runs (run_id TEXT PRIMARY KEY, ord INTEGER, dir TEXT, plan TEXT, started TEXT, started_ns INTEGER, manifest TEXT, env TEXT);
CREATE TABLE rows (ord INTEGER, ` + strings.Join(cols, ", ") + `);
CREATE INDEX rows_cell ON rows (cell_id, ord);
CREATE INDEX rows_run ON rows (run_id);
`
}

// build writes the whole index in one transaction.
func build(db *sql.DB, set *history.Set, srcs []source) (Stats, error) {
	st := Stats{Rebuilt: true, Runs: len(set.Runs)}
	tx, err := db.Begin()
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema()); err != nil {
		return st, fmt.Errorf("index schema: %w", err)
	}
	cols := columns()
	names := make([]string, 0, len(cols)+len(envColumns)+1)
	names = append(names, "ord")
	for _, c := range cols {
		names = append(names, strconv.Quote(c.Name))
	}
	for _, c := range envColumns {
		names = append(names, strconv.Quote(c))
	}
	insRow, err := tx.Prepare(`INSERT INTO rows (` + strings.Join(names, ",") + `) VALUES (?` + strings.Repeat(",?", len(names)-1) + `)`)
	if err != nil {
		return st, err
	}
	insRun, err := tx.Prepare(`INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return st, err
	}
	args := make([]any, len(names))
	for ord, r := range set.Runs {
		var man []byte
		if r.Manifest != nil {
			m := *r.Manifest
			m.Cells = slices.Clone(m.Cells)
			for i := range m.Cells {
				m.Cells[i].Settings = nil // in the rows' settings, once: they were most of a manifest
			}
			man, _ = json.Marshal(m)
		}
		if _, err := insRun.Exec(r.ID, ord, r.Dir, r.Plan(), r.Started.Format(time.RFC3339Nano), r.Started.UnixNano(), nullBytes(man), nullBytes(runEnv(r.Manifest))); err != nil {
			return st, err
		}
		for _, row := range r.Rows {
			rec := row.Record()
			args[0] = ord
			for i, c := range cols {
				args[i+1] = typed(rec[i], c.Type)
			}
			copy(args[1+len(cols):], envValues(history.EnvOf(row, r.Manifest)))
			if _, err := insRow.Exec(args...); err != nil {
				return st, err
			}
			st.Rows++
		}
	}
	notes, _ := json.Marshal(set.Notes)
	for k, v := range map[string]string{"schema_version": strconv.Itoa(SchemaVersion), "columns": columnList(),
		"notes": string(notes), "built": time.Now().UTC().Format(time.RFC3339)} {
		if _, err := tx.Exec(`INSERT INTO meta VALUES (?, ?)`, k, v); err != nil {
			return st, err
		}
	}
	for _, s := range srcs {
		if _, err := tx.Exec(`INSERT INTO sources VALUES (?, ?, ?)`, s.path, s.size, s.mtime); err != nil {
			return st, err
		}
	}
	return st, tx.Commit()
}

// typed is a CSV field as the column's SQL value: NULL when empty (not measured).
func typed(s, kind string) any {
	if s == "" {
		return nil
	}
	switch kind {
	case "integer":
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return v
		}
	case "number":
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v
		}
	}
	return s
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
