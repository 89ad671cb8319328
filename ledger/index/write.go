package index

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/history"
)

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
