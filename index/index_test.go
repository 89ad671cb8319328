package index

import (
	"bufio"
	"cmp"
	"database/sql"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/planrun/planrun/history"
	"github.com/planrun/planrun/ledger"
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
		m := ledger.Manifest{RunID: fmt.Sprintf("p-%05d", n), Started: t0.Add(time.Duration(n) * time.Hour),
			Environment: ledger.Environment{Host: "bench-1", OS: "linux", Arch: "amd64", Kernel: "6.8.0", CPU: "Xeon", CPUs: 64,
				GPUs: []string{"NVIDIA H200 (143 GB)"}, Driver: "570.1", CUDA: "12.8", ServerVersions: map[string]string{"openai.vllm": "0.9.1"},
				PlanrunVersion: "0.1.0", PlanPath: "/plans/p.hcl", PlanHash: "sha256:abc"},
			PlanFiles: []string{"plan/p.hcl"}, Variables: map[string]string{"url": "http://127.0.0.1:8000"},
			Command: []string{"planrun", "apply", "p.hcl"},
			Servers: map[string]ledger.ServerRun{"vllm": {Command: []string{"vllm", "serve", "--model", "/models/m", "--port", "8000"}, Version: "0.9.1"}}}
		if n >= runs/2 {
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

// The index gives history the same series as the files, is rebuilt when the ledger
// grows and only then, and answers SQL of its documented schema.
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
	l, _ := ledger.OpenLedger(filepath.Join(dir, "results.csv"))
	l.Append(ledgerRow(12, 1))
	l.Close()
	set, st, err = Load(dir, opts)
	if err != nil || !st.Rebuilt || len(history.Build(set, opts)[0].Points) != 13 {
		t.Fatalf("after an append: %+v, %v", st, err)
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
// each, and answers a history query of one cell over all of them, reporting both. With
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
	b.ReportMetric(build.Seconds()/float64(b.N), "build-s")
	b.ReportMetric(query.Seconds()/float64(b.N), "query-s")
	// CPU time too: on a shared machine the wall time is mostly waiting for a core.
	b.ReportMetric(queryCPU.Seconds()/float64(b.N), "query-cpu-s")
}
