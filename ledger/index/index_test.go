package index

import (
	"bufio"
	"bytes"
	"cmp"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/history"
)

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

// ledgerRow is a measured row of run n and cell c.
func ledgerRow(n, c int) ledger.Row {
	r := ledger.NewRow()
	r.Plan, r.RunID, r.CellID = "p", fmt.Sprintf("p-%05d", n), fmt.Sprintf("m/model%02d/-/openai.vllm/-/w", c)
	r.Model, r.Tool, r.Workload, r.Concurrency = fmt.Sprintf("model%02d", c), "openai.vllm", "w", 4
	r.ModelID = r.Model
	r.Status, r.Requests, r.Succeeded, r.PlanHash, r.Version = ledger.StatusOK, 200, 200, "sha256:abc", "0.1.0"
	r.Started, r.Ended = t0.Add(time.Duration(n)*time.Hour), t0.Add(time.Duration(n)*time.Hour+time.Minute)
	r.TTFT.P50, r.TTFT.P99, r.OutputTokS = 0.1+float64(n%7)/1000, 0.3, 500+float64(c)
	return r
}

// writeResults writes a ledger of runs × cells rows, in the ledger's format but in one
// buffered write (Append's fsync a row would make a 500,000-row ledger take an hour).
func writeResults(tb testing.TB, dir string, runs, cells int) {
	tb.Helper()
	f, err := os.Create(filepath.Join(dir, "results.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := csv.NewWriter(bw)
	w.Write(ledger.Header())
	for n := range runs {
		for c := range cells {
			w.Write(ledgerRow(n, c).Record())
		}
	}
	w.Flush()
	if err := cmp.Or(w.Error(), bw.Flush(), f.Close()); err != nil {
		tb.Fatal(err)
	}
}

// writeRunDirs writes each run's directory with a manifest.json as apply writes one:
// the environment, a plan-managed vLLM, and each cell's settings (20 of them). The
// server is upgraded at the middle run.
func writeRunDirs(tb testing.TB, dir string, runs, cells int) {
	tb.Helper()
	for n := range runs {
		writeRunDir(tb, dir, n, runs/2, cells)
	}
}

// writeRunDir writes run n's directory, with the server upgraded from run upgrade on.
func writeRunDir(tb testing.TB, dir string, n, upgrade, cells int) {
	tb.Helper()
	{
		m := ledger.Manifest{RunID: fmt.Sprintf("p-%05d", n), Started: t0.Add(time.Duration(n) * time.Hour),
			Environment: ledger.Environment{Host: "bench-1", OS: "linux", Arch: "amd64", Kernel: "6.8.0", CPU: "Xeon", CPUs: 64,
				GPUs: []string{"NVIDIA H200 (143 GB)"}, Driver: "570.1", CUDA: "12.8", ServerVersions: map[string]string{"openai.vllm": "0.9.1"},
				PlanrunVersion: "0.1.0", PlanPath: "/plans/p.hcl", PlanHash: "sha256:abc"},
			PlanFiles: []string{"plan/p.hcl"}, Variables: map[string]string{"url": "http://127.0.0.1:8000"},
			Command: []string{"planrun", "apply", "p.hcl"},
			Servers: map[string]ledger.ServerRun{"vllm": {Command: []string{"vllm", "serve", "--model", "/models/m", "--port", "8000"}, Version: "0.9.1"}}}
		if n >= upgrade {
			m.ServerVersions["openai.vllm"] = "0.9.2"
		}
		for c := range cells {
			model := fmt.Sprintf("model%02d", c)
			setIn(&m.ModelDigests, "openai.vllm "+model, fmt.Sprintf("sha256:%064d", c))
			setIn(&m.ModelRoots, "openai.vllm "+model, "/models/"+model)
			st := ledger.CellStatus{ID: ledgerRow(n, c).CellID, Status: ledger.StatusOK, Settings: map[string]string{}}
			for i := range 19 {
				st.Settings[fmt.Sprintf("setting_%02d", i)] = strconv.Itoa(i * 100)
			}
			st.Settings["max_tokens"] = strconv.Itoa(128 + 128*(n%2))
			m.Cells = append(m.Cells, st)
		}
		rd := filepath.Join(dir, m.RunID)
		if err := cmp.Or(os.MkdirAll(rd, 0o755), ledger.WriteManifest(filepath.Join(rd, "manifest.json"), m)); err != nil {
			tb.Fatal(err)
		}
	}
}

// With run directories, the index gives each row the environment the files give it:
// the server version from the manifest, the cell's settings; SQL reads the settings.
func TestIndexEnvironment(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, dir, 6, 3)
	writeRunDirs(t, dir, 6, 3)
	opts := history.Options{Cells: []string{"m/model01/*"}}
	set, _, err := Load(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	files, err := history.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, want := history.Build(set, opts), history.Build(files, opts)
	if len(got) != 1 || len(got[0].Points) != 6 || len(want) != 1 {
		t.Fatalf("series: %+v", got)
	}
	for i, p := range got[0].Points {
		w := want[0].Points[i]
		if !reflect.DeepEqual(p.Env, w.Env) || !reflect.DeepEqual(p.Changes, w.Changes) {
			t.Errorf("point %d: index env %+v, changes %+v\nfiles env %+v, changes %+v", i, p.Env, p.Changes, w.Env, w.Changes)
		}
	}
	if p := got[0].Points[3]; p.Env.ServerVersion != "0.9.2" || p.Env.Settings["max_tokens"] != "256" ||
		p.Env.ModelRoot != "/models/model01" || len(p.Changes) != 2 {
		t.Errorf("run 4: %+v, changes %+v", p.Env, p.Changes)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT count(*) FROM rows WHERE cell_id = ? AND json_extract(settings, '$.max_tokens') = '256' AND model_root = '/models/model01'`,
		"m/model01/-/openai.vllm/-/w").Scan(&n)
	if err != nil || n != 3 {
		t.Errorf("SQL over the settings: %d rows, %v", n, err)
	}
}

// The index gives history the same series as the files, adds the run appended to the
// ledger, is rebuilt when its columns differ, and answers SQL of its documented schema.
func TestIndex(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, dir, 12, 3)
	opts := history.Options{Cells: []string{"m/model01/*"}}
	set, st, err := Load(dir, opts)
	if err != nil || !st.Rebuilt || st.Runs != 12 || st.Rows != 36 {
		t.Fatalf("first load: %+v, %v", st, err)
	}
	files, err := history.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, want := history.Build(set, opts), history.Build(files, opts)
	if len(got) != 1 || len(got[0].Points) != 12 ||
		!reflect.DeepEqual(got[0].Values("ttft_p50_s"), want[0].Values("ttft_p50_s")) ||
		!reflect.DeepEqual(got[0].Values("output_tok_s"), want[0].Values("output_tok_s")) {
		t.Fatalf("index series %+v\nfiles %+v", got, want)
	}
	if _, st, _ := Load(dir, opts); st.Rebuilt {
		t.Error("rebuilt although nothing changed")
	}
	// A glob of the heading (cell and level), which SQL cannot filter on, still selects.
	heading := history.Options{Cells: []string{"*model01* c=4"}}
	if set, _, err := Load(dir, heading); err != nil || len(history.Build(set, heading)) != 1 {
		t.Errorf("-cell %q over the index: %v", heading.Cells, err)
	}
	l, _ := ledger.OpenLedger(filepath.Join(dir, "results.csv"))
	l.Append(ledgerRow(12, 1))
	l.Close()
	set, st, err = Load(dir, opts)
	if err != nil || st.Rebuilt || !st.Added || st.Runs != 1 || st.Rows != 1 || len(history.Build(set, opts)[0].Points) != 13 {
		t.Fatalf("after an append: %+v, %v; want the one new run added", st, err)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// An index built by a planrun whose ledger had other columns is rebuilt.
	if _, err := db.Exec(`UPDATE meta SET value = 'cell_id,ttft_p50_s' WHERE key = 'columns'`); err != nil {
		t.Fatal(err)
	}
	if _, st, err := Load(dir, opts); err != nil || !st.Rebuilt {
		t.Errorf("an index of other columns: %+v, %v; want it rebuilt", st, err)
	}
	var n int
	var p50 float64
	err = db.QueryRow(`SELECT count(*), max(ttft_p50_s) FROM rows JOIN runs USING (run_id) WHERE cell_id = ? AND status = 'ok'`,
		"m/model01/-/openai.vllm/-/w").Scan(&n, &p50)
	if err != nil || n != 13 || p50 != 0.106 {
		t.Errorf("SQL over the documented schema: %d rows, max %v, %v", n, p50, err)
	}
}

// BenchmarkIndex builds the index of PLANRUN_INDEX_RUNS runs (default 200) of 50 rows
// each, and answers a history query of one cell over all of them, reporting both, the
// index's size a run, and the time to add one more run. With
// PLANRUN_INDEX_RUNDIRS set, each run also has its run directory with a manifest.json
// (environment, 50 cells' settings), as apply writes them.
func BenchmarkIndex(b *testing.B) {
	runs := 200
	if s := os.Getenv("PLANRUN_INDEX_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	// PLANRUN_INDEX_DIR keeps the results and their index in that directory: written
	// and built once, so later runs time the query alone (build-s is then 0).
	dir, keep := os.Getenv("PLANRUN_INDEX_DIR"), true
	if dir == "" {
		dir, keep = b.TempDir(), false
	}
	if _, err := os.Stat(filepath.Join(dir, "results.csv")); err != nil {
		writeResults(b, dir, runs, 50)
		if os.Getenv("PLANRUN_INDEX_RUNDIRS") != "" {
			writeRunDirs(b, dir, runs, 50)
		}
	}
	opts := history.Options{Cells: []string{"m/model07/-/openai.vllm/-/w"}}
	var build, query, queryCPU time.Duration
	for b.Loop() {
		if !keep {
			os.Remove(filepath.Join(dir, File))
		}
		start := time.Now()
		st, err := Update(dir)
		if err != nil {
			b.Fatal(err)
		}
		if st.Rebuilt {
			build += time.Since(start)
		}
		start, cpu := time.Now(), cpuTime()
		set, st, err := Load(dir, opts)
		if err != nil || st.Rebuilt {
			b.Fatal(err, st)
		}
		series := history.Build(set, opts)
		if len(series) != 1 || len(series[0].Points) != runs {
			b.Fatalf("%d series", len(series))
		}
		series[0].Trends(history.DefaultFields)
		query, queryCPU = query+time.Since(start), queryCPU+cpuTime()-cpu
	}
	// The index's size a run, and the update that adds one more run (its ledger rows
	// and run directory) to it.
	if st, err := os.Stat(filepath.Join(dir, File)); err == nil {
		b.ReportMetric(float64(st.Size())/float64(runs)/1000, "index-kB/run")
	}
	if !keep {
		l, err := ledger.OpenLedger(filepath.Join(dir, "results.csv"))
		if err != nil {
			b.Fatal(err)
		}
		for c := range 50 {
			l.Append(ledgerRow(runs, c))
		}
		l.Close()
		if os.Getenv("PLANRUN_INDEX_RUNDIRS") != "" {
			writeRunDir(b, dir, runs, runs/2, 50)
		}
		start := time.Now()
		if st, err := Update(dir); err != nil || !st.Added || st.Runs != 1 {
			b.Fatal(st, err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "add-run-s")
	}
	b.ReportMetric(build.Seconds()/float64(b.N), "build-s")
	b.ReportMetric(query.Seconds()/float64(b.N), "query-s")
	// CPU time too: on a shared machine the wall time is mostly waiting for a core.
	b.ReportMetric(queryCPU.Seconds()/float64(b.N), "query-cpu-s")
}

// appendRuns appends runs from..to−1 of cells cells to the ledger, as apply does.
func appendRuns(t *testing.T, dir string, from, to, cells int) {
	t.Helper()
	l, err := ledger.OpenLedger(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for n := from; n < to; n++ {
		for c := range cells {
			if err := l.Append(ledgerRow(n, c)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// loadAll is everything a query of all cells reads from dir's index, and what its
// update did.
func loadAll(t *testing.T, dir string) (*history.Set, Stats) {
	t.Helper()
	set, st, err := Load(dir, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return set, st
}

// rebuilt is what a query of all cells reads from an index built anew from dir's files.
func rebuilt(t *testing.T, dir string) *history.Set {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(dir, File+suffix))
	}
	set, st := loadAll(t, dir)
	if !st.Rebuilt {
		t.Fatalf("a new index: %+v, want it built", st)
	}
	return set
}

// New runs are added to the index without reading the others, and the index then reads
// back as one built anew from the files; anything else that changed rebuilds it.
func TestIndexAddsOnlyNewRuns(t *testing.T) {
	const cells = 3
	dir := t.TempDir()
	writeResults(t, dir, 4, cells)
	for n := range 4 {
		writeRunDir(t, dir, n, 5, cells)
	}
	if _, st := loadAll(t, dir); !st.Rebuilt || st.Runs != 4 {
		t.Fatalf("first update: %+v", st)
	}
	same := func(what string, st Stats, added int) {
		t.Helper()
		if st.Rebuilt || !st.Added || st.Runs != added {
			t.Fatalf("%s: %+v, want %d runs added and nothing rebuilt", what, st, added)
		}
		got, _ := loadAll(t, dir)
		if want := rebuilt(t, dir); !sameSet(got, want) {
			t.Fatalf("%s: the index read back\n%s\nbuilt anew it reads\n%s", what, describe(got), describe(want))
		}
	}

	// An old run's manifest spoilt, its size and time kept: an update that read it
	// would note it (the rebuilds below do, once it is put back).
	old := filepath.Join(dir, "p-00001", "manifest.json")
	good, _ := os.ReadFile(old)
	info, _ := os.Stat(old)
	spoil := func(b []byte) {
		if err := cmp.Or(os.WriteFile(old, b, 0o644), os.Chtimes(old, info.ModTime(), info.ModTime())); err != nil {
			t.Fatal(err)
		}
	}
	spoil(bytes.Repeat([]byte("x"), len(good)))
	appendRuns(t, dir, 4, 6, cells)
	writeRunDir(t, dir, 4, 5, cells)
	writeRunDir(t, dir, 5, 5, cells) // the upgrade: an environment change
	_, st := loadAll(t, dir)
	if st.Rebuilt || !st.Added || st.Runs != 2 || st.Rows != 2*cells {
		t.Fatalf("two runs appended: %+v, want them added", st)
	}
	if set, _ := loadAll(t, dir); len(set.Notes) != 0 || set.Runs[1].Manifest == nil {
		t.Fatalf("the spoilt manifest was read: notes %q", set.Notes)
	}
	spoil(good)
	appendRuns(t, dir, 6, 7, cells)
	writeRunDir(t, dir, 6, 5, cells)
	same("a run appended", must(Update(dir)), 1)

	// A run with only its run directory (its csv output elsewhere), and a torn record.
	rd := filepath.Join(dir, "p-00007")
	writeRunDir(t, dir, 7, 5, cells)
	l, _ := ledger.OpenLedger(filepath.Join(rd, "results.csv"))
	l.Append(ledgerRow(7, 0))
	l.Close()
	f, _ := os.OpenFile(filepath.Join(dir, "results.csv"), os.O_APPEND|os.O_WRONLY, 0)
	rec := ledgerRow(8, 0).Record()
	f.WriteString(`p,p-00008,"half a record`)
	f.Close()
	same("a run directory alone, a torn record after", must(Update(dir)), 1)
	ledgerBytes, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(rec)
	w.Flush()
	os.WriteFile(filepath.Join(dir, "results.csv"), append(ledgerBytes[:bytes.LastIndexByte(ledgerBytes, '\n')+1], b.Bytes()...), 0o644)
	same("the torn record made whole", must(Update(dir)), 1)

	// A second plan: the note on several plans follows the count.
	r := ledgerRow(9, 0)
	r.Plan, r.RunID = "q", "q-00009"
	l, _ = ledger.OpenLedger(filepath.Join(dir, "results.csv"))
	l.Append(r)
	l.Close()
	same("a run of another plan", must(Update(dir)), 1)
	if set, _ := loadAll(t, dir); len(set.Notes) != 1 || !strings.Contains(set.Notes[0], "p (9 runs), q (1 runs)") {
		t.Fatalf("notes %q", set.Notes)
	}

	for _, c := range []struct {
		what   string
		change func()
	}{
		{"an indexed run's manifest rewritten", func() { writeRunDir(t, dir, 2, 1, cells) }},
		{"a row appended to an indexed run (a resume)", func() { appendRuns(t, dir, 3, 4, cells) }},
		{"a run directory removed", func() { os.RemoveAll(rd) }},
		{"the ledger rewritten", func() { writeResults(t, dir, 9, cells) }},
		{"a run that started before the latest", func() {
			r := ledgerRow(1, 0)
			r.RunID = "p-early"
			appendRows(t, dir, r)
		}},
	} {
		c.change()
		st := must(Update(dir))
		if !st.Rebuilt {
			t.Fatalf("%s: %+v, want the index rebuilt", c.what, st)
		}
		got, _ := loadAll(t, dir)
		if want := rebuilt(t, dir); !sameSet(got, want) {
			t.Fatalf("%s: the index read back\n%s\nbuilt anew\n%s", c.what, describe(got), describe(want))
		}
	}
}

func appendRows(t *testing.T, dir string, rows ...ledger.Row) {
	t.Helper()
	l, err := ledger.OpenLedger(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		l.Append(r)
	}
	l.Close()
}

func must(st Stats, err error) Stats {
	if err != nil {
		panic(err)
	}
	return st
}

// sameSet compares what a query read: the runs, their rows and environments, the notes.
func sameSet(a, b *history.Set) bool {
	if len(a.Runs) != len(b.Runs) || !reflect.DeepEqual(a.Notes, b.Notes) {
		return false
	}
	for i, r := range a.Runs {
		o := b.Runs[i]
		if r.ID != o.ID || r.Dir != o.Dir || !r.Started.Equal(o.Started) || !reflect.DeepEqual(r.Manifest, o.Manifest) ||
			!reflect.DeepEqual(records(r.Rows), records(o.Rows)) || !reflect.DeepEqual(r.Envs, o.Envs) {
			return false
		}
	}
	return true
}

// records are rows as the ledger writes them (a row's NaNs would never DeepEqual).
func records(rows []ledger.Row) [][]string {
	var out [][]string
	for _, r := range rows {
		out = append(out, r.Record())
	}
	return out
}

func describe(s *history.Set) string {
	var b strings.Builder
	fmt.Fprintf(&b, "notes %q\n", s.Notes)
	for _, r := range s.Runs {
		fmt.Fprintf(&b, "  %s dir %q started %s manifest %v, %d rows\n", r.ID, filepath.Base(r.Dir), r.Started.Format(time.RFC3339), r.Manifest != nil, len(r.Rows))
	}
	return b.String()
}
