package index

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/history"
)

// Load updates dir's index and reads from it the runs and rows that o selects (cell
// globs, since), as history.Load would read them from the files. The set holds only
// the selected cells' rows, each with its environment (Run.Envs): enough for history
// and the site, not for a run's other cells. Runs have their manifest only when o
// selects every cell (the site's run index counts each run's cells): a query of some
// cells over 10,000 runs would spend most of its time decoding manifests it needs
// nothing more from.
func Load(dir string, o history.Options) (*history.Set, Stats, error) {
	st, err := Update(dir)
	if err != nil {
		return nil, st, err
	}
	db, err := open(dir)
	if err != nil {
		return nil, st, err
	}
	defer db.Close()
	set := &history.Set{Dir: dir}
	var notes string
	if db.QueryRow(`SELECT value FROM meta WHERE key = 'notes'`).Scan(&notes) == nil {
		json.Unmarshal([]byte(notes), &set.Notes)
	}
	cache := &jsonCache{}
	runs, err := loadRuns(db, o.Since, len(o.Cells) == 0, cache)
	if err != nil {
		return nil, st, err
	}
	if err := loadRows(db, dir, o.Cells, runs, cache); err != nil {
		return nil, st, err
	}
	for _, ord := range slices.Sorted(maps.Keys(runs)) {
		set.Runs = append(set.Runs, runs[ord].Run)
	}
	return set, st, nil
}

// cellFilter is the rows query's condition on cells: cell_id matches one of the globs,
// or nothing when there are none or one is a glob of the heading ("*c=2*"), which Build
// matches on every row.
func cellFilter(cells []string) (where string, args []any) {
	var or []string
	for _, g := range cells {
		if history.HeadingGlob(g) {
			return "1", nil
		}
		or = append(or, "cell_id GLOB ?") // GLOB's * also spans '/': Build applies the glob itself
		args = append(args, g)
	}
	if or == nil {
		return "1", nil
	}
	return "(" + strings.Join(or, " OR ") + ")", args
}

// loadRows reads the rows of the cells matching the globs into their runs, each with its
// environment.
func loadRows(db *sql.DB, dir string, cells []string, runs map[int64]run, cache *jsonCache) error {
	where, args := cellFilter(cells)
	cols := columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = strconv.Quote(c.Name)
	}
	q := `SELECT ord, ` + strings.Join(names, ",") + `, settings FROM rows WHERE ` + where + ` ORDER BY ord`
	rs, err := db.Query(q, args...)
	if err != nil {
		return fmt.Errorf("index %s: %w", filepath.Join(dir, File), err)
	}
	defer rs.Close()
	vals := make([]any, len(cols)+2)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cols))
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return err
		}
		r, ok := runs[vals[0].(int64)]
		if !ok {
			continue // before -since
		}
		for i := range cols {
			rec[i] = field(vals[i+1])
		}
		row, err := ledger.ParseRecord(rec)
		var settings map[string]string
		if err == nil {
			settings, err = cache.settings(field(vals[len(cols)+1]))
		}
		if err != nil {
			return fmt.Errorf("index %s: %w", filepath.Join(dir, File), err)
		}
		env := history.EnvOf(row, r.env)
		env.Settings = settings
		r.Rows, r.Envs = append(r.Rows, row), append(r.Envs, env)
	}
	return rs.Err()
}

// run is a run as a query reads it, with the manifest part its rows' environment is
// read from.
type run struct {
	*history.Run
	env *ledger.Manifest
}

// loadRuns reads the runs started since (zero: all), by their order, with their whole
// manifests when withManifests.
func loadRuns(db *sql.DB, since time.Time, withManifests bool, cache *jsonCache) (map[int64]run, error) {
	var min int64 = -1 << 63
	if !since.IsZero() {
		min = since.UnixNano()
	}
	man := "NULL"
	if withManifests {
		man = "manifest"
	}
	rs, err := db.Query(`SELECT ord, run_id, dir, started, env, `+man+` FROM runs WHERE started_ns >= ?`, min)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[int64]run{}
	for rs.Next() {
		var ord int64
		var id, dir, started string
		var env, man sql.NullString
		if err := rs.Scan(&ord, &id, &dir, &started, &env, &man); err != nil {
			return nil, err
		}
		r := run{Run: &history.Run{ID: id, Dir: dir}}
		r.Started, _ = time.Parse(time.RFC3339Nano, started)
		if man.Valid {
			r.Manifest = &ledger.Manifest{}
			if err := json.Unmarshal([]byte(man.String), r.Manifest); err != nil {
				return nil, err
			}
		}
		if env.Valid {
			if r.env, err = cache.manifest(env.String); err != nil {
				return nil, err
			}
		}
		out[ord] = r
	}
	return out, rs.Err()
}

// field is an SQL value as its CSV field.
func field(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// jsonCache decodes each distinct run environment and cell settings once: the runs of
// a results directory mostly share them (one host, one server version until an
// upgrade), and decoding 10,000 equal JSON objects was most of a query's time. What it
// returns is shared, and nothing changes it.
type jsonCache struct {
	envs map[string]*ledger.Manifest
	sets map[string]map[string]string
}

func (c *jsonCache) manifest(s string) (*ledger.Manifest, error) {
	if m, ok := c.envs[s]; ok {
		return m, nil
	}
	m := &ledger.Manifest{}
	if err := json.Unmarshal([]byte(s), m); err != nil {
		return nil, err
	}
	setIn(&c.envs, s, m)
	return m, nil
}

func (c *jsonCache) settings(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	if m, ok := c.sets[s]; ok {
		return m, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	setIn(&c.sets, s, m)
	return m, nil
}

func setIn[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}
