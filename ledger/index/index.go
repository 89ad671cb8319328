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
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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
	mark, err := ledgerMark(filepath.Join(dir, "results.csv"), srcs)
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

// state is what an index records of how it was built.
type state struct {
	sources map[string]source
	ledger  mark
	notes   []string
}

// mark is how far the index has read the ledger: to the end of its last whole record,
// and a hash of the bytes before that end, so that a ledger which only grew is told
// from one rewritten (an upgrade, an edit) without reading it again.
type mark struct {
	Whole  int64  `json:"whole"`
	Tail   string `json:"tail"`
	Header string `json:"header"` // the ledger's header line
}

// tailBytes is how much of the ledger before the mark its hash covers.
const tailBytes = 4096

// builtFrom reads what the index was built from; ok is false when it was built by
// another schema or ledger column set (or not at all), so it must be rebuilt. The
// sources are read in one query: one a file would be 20,000 round trips for 10,000 runs.
func builtFrom(db *sql.DB) (st state, ok bool) {
	meta := map[string]string{}
	rs, err := db.Query(`SELECT key, value FROM meta`)
	if err != nil {
		return st, false
	}
	for rs.Next() {
		var k, v string
		if rs.Scan(&k, &v) == nil {
			meta[k] = v
		}
	}
	rs.Close()
	// The rows have a column for each ledger column, and a newer planrun has more.
	if meta["schema_version"] != strconv.Itoa(SchemaVersion) || meta["columns"] != columnList() {
		return st, false
	}
	if json.Unmarshal([]byte(meta["ledger"]), &st.ledger) != nil || json.Unmarshal([]byte(meta["notes"]), &st.notes) != nil {
		return st, false
	}
	rs, err = db.Query(`SELECT path, size, mtime_ns FROM sources`)
	if err != nil {
		return st, false
	}
	defer rs.Close()
	st.sources = map[string]source{}
	for rs.Next() {
		var s source
		if rs.Scan(&s.path, &s.size, &s.mtime) != nil {
			return st, false
		}
		st.sources[s.path] = s
	}
	return st, rs.Err() == nil
}

func sameSources(built map[string]source, srcs []source) bool {
	if len(built) != len(srcs) {
		return false
	}
	for _, s := range srcs {
		if built[s.path] != s {
			return false
		}
	}
	return true
}

// ledgerMark is the mark of the ledger at path as srcs found it (its size then, so
// records appended since are read by the next update, not skipped).
func ledgerMark(path string, srcs []source) (mark, error) {
	size := int64(-1)
	for _, s := range srcs {
		if s.path == path {
			size = s.size
		}
	}
	if size < 0 {
		return mark{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return mark{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, size))
	if err != nil {
		return mark{}, err
	}
	whole := wholeRecords(data)
	header, _, _ := bytes.Cut(data, []byte("\n"))
	return mark{Whole: int64(len(whole)), Tail: tailHash(whole), Header: string(header)}, nil
}

func tailHash(whole []byte) string {
	sum := sha256.Sum256(whole[max(len(whole)-tailBytes, 0):])
	return hex.EncodeToString(sum[:])
}

// wholeRecords is data up to the end of its last whole CSV record: a newline outside
// quotes (the ledger's writer doubles quotes inside fields, so their count tells).
func wholeRecords(data []byte) []byte {
	end, quoted := 0, false
	for i, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\n' && !quoted:
			end = i + 1
		}
	}
	return data[:end]
}

// addNew adds the runs that are new since the index was built, when that is all that
// changed: the ledger only grew (same header, same bytes before the mark) and by rows of
// runs the index does not have, and the run directories are only new ones. It reads
// just what is new, with history's own loader, from a staging directory that holds the
// ledger's header and new records and a copy of each new run directory's two files.
// added is false, with nothing written, when the index must be rebuilt instead.
func addNew(db *sql.DB, dir string, built state, srcs []source) (st Stats, added bool, err error) {
	ledgerPath := filepath.Join(dir, "results.csv")
	newDirs := map[string]bool{}
	cur := map[string]source{}
	for _, s := range srcs {
		cur[s.path] = s
		old, known := built.sources[s.path]
		switch {
		case s.path == ledgerPath:
			if !known || s.size < built.ledger.Whole {
				return st, false, nil
			}
		case !known && !built.hasDir(filepath.Dir(s.path)):
			newDirs[filepath.Dir(s.path)] = true
		case old != s:
			return st, false, nil // a run directory the index has read changed
		}
	}
	for p := range built.sources {
		if _, ok := cur[p]; !ok {
			return st, false, nil // removed
		}
	}
	stage, err := os.MkdirTemp("", "planrun-index-")
	if err != nil {
		return st, false, err
	}
	defer os.RemoveAll(stage)
	next := built.ledger
	if s := cur[ledgerPath]; s != built.sources[ledgerPath] {
		var ok bool
		if next, ok, err = stageLedger(ledgerPath, s.size, built.ledger, filepath.Join(stage, "results.csv")); err != nil || !ok {
			return st, false, err
		}
	}
	for d := range newDirs {
		if err := stageRunDir(d, filepath.Join(stage, filepath.Base(d))); err != nil {
			return st, false, err
		}
	}
	if len(newDirs) == 0 && next.Whole == built.ledger.Whole {
		// Only touched: nothing to read.
		tx, err := db.Begin()
		if err != nil {
			return st, false, err
		}
		defer tx.Rollback()
		if err := writeState(tx, built.notes, next, srcs, true); err != nil {
			return st, false, err
		}
		return Stats{Added: true}, true, tx.Commit()
	}
	set, err := history.Load(stage)
	if err != nil {
		return st, false, nil // the rebuild says what is wrong with it
	}
	known, last, err := indexedRuns(db)
	if err != nil {
		return st, false, err
	}
	for _, r := range set.Runs {
		if known[r.ID] || !r.Started.After(last) || strings.HasPrefix(r.ID, "(no run id)") {
			return st, false, nil // a run the index has, one out of order, or one of no run id
		}
		if r.Dir != "" {
			r.Dir = filepath.Join(dir, filepath.Base(r.Dir))
		}
	}
	plans, err := planCounts(db)
	if err != nil {
		return st, false, err
	}
	notes := slices.DeleteFunc(slices.Clone(built.notes), func(n string) bool { return n == history.PlansNote(dir, plans) })
	for _, r := range set.Runs {
		plans[r.Plan()]++
	}
	if n := history.PlansNote(stage, countPlans(set)); len(set.Notes) > 0 && !(len(set.Notes) == 1 && set.Notes[0] == n) {
		return st, false, nil // something new could not be read whole: the rebuild notes it
	}
	if n := history.PlansNote(dir, plans); n != "" {
		notes = append(notes, n)
	}

	tx, err := db.Begin()
	if err != nil {
		return st, false, err
	}
	defer tx.Rollback()
	w, err := newWriter(tx)
	if err != nil {
		return st, false, err
	}
	ord, err := maxOrd(tx)
	if err != nil {
		return st, false, err
	}
	for _, r := range set.Runs {
		ord++
		if err := w.run(ord, r); err != nil {
			return st, false, err
		}
	}
	st = Stats{Added: true, Runs: len(set.Runs), Rows: w.rows}
	if err := writeState(tx, notes, next, srcs, true); err != nil {
		return st, false, err
	}
	return st, true, tx.Commit()
}

func (s state) hasDir(d string) bool {
	_, m := s.sources[filepath.Join(d, "manifest.json")]
	_, c := s.sources[filepath.Join(d, "results.csv")]
	return m || c
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

// stageRunDir copies a new run directory's manifest.json and results.csv to dst.
func stageRunDir(src, dst string) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"manifest.json", "results.csv"} {
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

// runRest is the run's manifest without what its env holds (the keys whose values are
// the same), its cells' settings left to the rows: the runs view joins the two again
// with json_patch.
func runRest(m *ledger.Manifest, env []byte) []byte {
	if m == nil {
		return nil
	}
	c := *m
	c.Cells = slices.Clone(c.Cells)
	for i := range c.Cells {
		c.Cells[i].Settings = nil // in the rows' settings, once: they were most of a manifest
	}
	whole, _ := json.Marshal(c)
	var mine, shared map[string]json.RawMessage
	if json.Unmarshal(whole, &mine) != nil || json.Unmarshal(env, &shared) != nil {
		return whole
	}
	for k, v := range shared {
		if bytes.Equal(mine[k], v) {
			delete(mine, k)
		}
	}
	b, _ := json.Marshal(mine)
	return b
}

// schema creates the tables and views (see docs/index.md). Environments, and each
// row's environment columns, are kept once for all the runs and rows that share them
// (runs of one host and server mostly do): the views runs and rows join them back, so
// a query reads the columns as if every row held its own.
func schema() string {
	var cols, sel []string
	for _, c := range columns() {
		cols = append(cols, fmt.Sprintf("%q %s", c.Name, sqlType(c.Type)))
		sel = append(sel, fmt.Sprintf("d.%q AS %[1]q", c.Name))
	}
	var envCols []string
	for _, c := range envColumns {
		envCols = append(envCols, fmt.Sprintf("%q TEXT", c))
		sel = append(sel, fmt.Sprintf("x.%q AS %[1]q", c))
	}
	return `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE sources (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
CREATE TABLE envs (id INTEGER PRIMARY KEY, json TEXT NOT NULL UNIQUE);
CREATE TABLE run_data (run_id TEXT PRIMARY KEY, ord INTEGER, dir TEXT, plan TEXT, started TEXT, started_ns INTEGER, rest TEXT, env_id INTEGER);
CREATE VIEW runs AS SELECT run_id, ord, dir, plan, started, started_ns,
  CASE WHEN rest IS NULL THEN NULL WHEN e.json IS NULL THEN rest ELSE json_patch(e.json, rest) END AS manifest, e.json AS env
  FROM run_data LEFT JOIN envs e ON e.id = env_id;
CREATE TABLE row_envs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, ` + strings.Join(envCols, ", ") + `);
CREATE TABLE row_data (ord INTEGER, ` + strings.Join(cols, ", ") + `, row_env INTEGER);
CREATE VIEW rows AS SELECT d.ord AS ord, ` + strings.Join(sel, ", ") + ` FROM row_data d LEFT JOIN row_envs x ON x.id = d.row_env;
CREATE INDEX rows_cell ON row_data (cell_id, ord);
CREATE INDEX rows_run ON row_data (run_id);
`
}

// dropAll drops every table and view (an index of any schema), views first.
func dropAll(tx *sql.Tx) error {
	rs, err := tx.Query(`SELECT type, name FROM sqlite_schema WHERE type IN ('view', 'table') AND name NOT LIKE 'sqlite_%' ORDER BY type DESC`)
	if err != nil {
		return err
	}
	var drops []string
	for rs.Next() {
		var kind, name string
		if err := rs.Scan(&kind, &name); err != nil {
			rs.Close()
			return err
		}
		drops = append(drops, fmt.Sprintf("DROP %s %q;", strings.ToUpper(kind), name))
	}
	rs.Close()
	if len(drops) == 0 {
		return nil
	}
	_, err = tx.Exec(strings.Join(drops, " "))
	return err
}

// writer inserts runs and their rows, each distinct environment once.
type writer struct {
	tx             *sql.Tx
	insRow, insRun *sql.Stmt
	envs, rowEnvs  map[string]int64
	args           []any
	rows           int
}

func newWriter(tx *sql.Tx) (*writer, error) {
	w := &writer{tx: tx, envs: map[string]int64{}, rowEnvs: map[string]int64{}}
	for _, q := range []struct {
		sql string
		m   map[string]int64
	}{{`SELECT json, id FROM envs`, w.envs}, {`SELECT key, id FROM row_envs`, w.rowEnvs}} {
		rs, err := tx.Query(q.sql)
		if err != nil {
			return nil, err
		}
		for rs.Next() {
			var k string
			var id int64
			if err := rs.Scan(&k, &id); err != nil {
				rs.Close()
				return nil, err
			}
			q.m[k] = id
		}
		rs.Close()
	}
	cols := columns()
	names := []string{"ord"}
	for _, c := range cols {
		names = append(names, strconv.Quote(c.Name))
	}
	names = append(names, "row_env")
	var err error
	if w.insRow, err = tx.Prepare(`INSERT INTO row_data (` + strings.Join(names, ",") + `) VALUES (?` + strings.Repeat(",?", len(names)-1) + `)`); err != nil {
		return nil, err
	}
	if w.insRun, err = tx.Prepare(`INSERT INTO run_data VALUES (?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
		return nil, err
	}
	w.args = make([]any, len(names))
	return w, nil
}

// intern is the id of the row holding key in table, inserted when new.
func (w *writer) intern(m map[string]int64, key string, insert func() (sql.Result, error)) (int64, error) {
	if id, ok := m[key]; ok {
		return id, nil
	}
	res, err := insert()
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	m[key] = id
	return id, err
}

func (w *writer) run(ord int, r *history.Run) error {
	env := runEnv(r.Manifest)
	var envID any
	if env != nil {
		id, err := w.intern(w.envs, string(env), func() (sql.Result, error) {
			return w.tx.Exec(`INSERT INTO envs (json) VALUES (?)`, string(env))
		})
		if err != nil {
			return err
		}
		envID = id
	}
	if _, err := w.insRun.Exec(r.ID, ord, r.Dir, r.Plan(), r.Started.Format(time.RFC3339Nano), r.Started.UnixNano(),
		nullBytes(runRest(r.Manifest, env)), envID); err != nil {
		return err
	}
	cols := columns()
	for _, row := range r.Rows {
		vals := envValues(history.EnvOf(row, r.Manifest))
		key := rowEnvKey(vals)
		id, err := w.intern(w.rowEnvs, key, func() (sql.Result, error) {
			return w.tx.Exec(`INSERT INTO row_envs (key, `+strings.Join(quoted(envColumns), ",")+`) VALUES (?`+strings.Repeat(",?", len(vals))+`)`,
				append([]any{key}, vals...)...)
		})
		if err != nil {
			return err
		}
		rec := row.Record()
		w.args[0] = ord
		for i, c := range cols {
			w.args[i+1] = typed(rec[i], c.Type)
		}
		w.args[len(w.args)-1] = id
		if _, err := w.insRow.Exec(w.args...); err != nil {
			return err
		}
		w.rows++
	}
	return nil
}

// rowEnvKey tells row environments apart: their values, NULL apart from "".
func rowEnvKey(vals []any) string {
	var b strings.Builder
	for _, v := range vals {
		if s, ok := v.(string); ok {
			b.WriteByte('=')
			b.WriteString(strconv.Quote(s))
		}
		b.WriteByte(';')
	}
	return b.String()
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

// build writes the whole index in one transaction.
func build(db *sql.DB, set *history.Set, srcs []source, m mark) (Stats, error) {
	st := Stats{Rebuilt: true, Runs: len(set.Runs)}
	tx, err := db.Begin()
	if err != nil {
		return st, err
	}
	defer tx.Rollback()
	if err := dropAll(tx); err != nil {
		return st, fmt.Errorf("index schema: %w", err)
	}
	if _, err := tx.Exec(schema()); err != nil {
		return st, fmt.Errorf("index schema: %w", err)
	}
	w, err := newWriter(tx)
	if err != nil {
		return st, err
	}
	for ord, r := range set.Runs {
		if err := w.run(ord, r); err != nil {
			return st, err
		}
	}
	st.Rows = w.rows
	if err := writeState(tx, set.Notes, m, srcs, false); err != nil {
		return st, err
	}
	return st, tx.Commit()
}

// writeState records what the index now holds: meta and its sources.
func writeState(tx *sql.Tx, notes []string, m mark, srcs []source, added bool) error {
	nb, _ := json.Marshal(notes)
	mb, _ := json.Marshal(m)
	now := time.Now().UTC().Format(time.RFC3339)
	meta := map[string]string{"schema_version": strconv.Itoa(SchemaVersion), "columns": columnList(),
		"notes": string(nb), "ledger": string(mb), "updated": now}
	if !added {
		meta["built"] = now
	}
	for k, v := range meta {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO meta VALUES (?, ?)`, k, v); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(`DELETE FROM sources`); err != nil {
		return err
	}
	ins, err := tx.Prepare(`INSERT INTO sources VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		if _, err := ins.Exec(s.path, s.size, s.mtime); err != nil {
			return err
		}
	}
	return nil
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
