package history

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/ledger/compare"
	"github.com/planrun/planrun/stats"
)

// row is a measured row of run id, cell and plan with a TTFT p50, as apply writes one.
func row(plan, run, cell string, at time.Time, ttft float64) ledger.Row {
	r := ledger.NewRow()
	r.Plan, r.RunID, r.CellID, r.Model, r.Tool, r.Workload = plan, run, cell, "tiny", "openai.mock", "w"
	r.Concurrency, r.Status, r.Requests, r.Succeeded = 1, ledger.StatusOK, 40, 40
	r.TTFT.P50, r.Started, r.Ended = ttft, at, at.Add(time.Second)
	return r
}

func writeLedger(t *testing.T, path string, rows ...ledger.Row) {
	t.Helper()
	l, err := ledger.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func TestLoadBadInput(t *testing.T) {
	t.Run("older ledger with fewer columns", func(t *testing.T) {
		dir := t.TempDir()
		// The first ledger format: every column up to host (the p95/std columns and
		// everything after came later).
		n := 0
		for i, h := range ledger.Header() {
			if h == "host" {
				n = i + 1
			}
		}
		f, _ := os.Create(filepath.Join(dir, "results.csv"))
		w := csv.NewWriter(f)
		w.Write(ledger.Header()[:n])
		for i := range 3 {
			w.Write(row("p", "r"+string(rune('a'+i)), "m/x", t0.Add(time.Duration(i)*time.Hour), 0.1).Record()[:n])
		}
		w.Flush()
		f.Close()
		s, err := Load(dir)
		if err != nil || len(s.Runs) != 3 || s.Runs[2].Rows[0].TTFT.P50 != 0.1 || !math.IsNaN(s.Runs[0].Rows[0].TTFT.P95) {
			t.Fatalf("err %v, runs %+v", err, s)
		}
	})
	t.Run("torn last record", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "results.csv")
		writeLedger(t, p, row("p", "a", "m/x", t0, 0.1), row("p", "b", "m/x", t0.Add(time.Hour), 0.2))
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b[:len(b)-20], 0o644) // a kill cut the last record
		s, err := Load(dir)
		if err != nil || len(s.Runs) != 1 || s.Runs[0].ID != "a" {
			t.Fatalf("err %v, runs %d", err, len(s.Runs))
		}
	})
	t.Run("unrelated files", func(t *testing.T) {
		dir := t.TempDir()
		writeLedger(t, filepath.Join(dir, "results.csv"), row("p", "a", "m/x", t0, 0.1))
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
		os.WriteFile(filepath.Join(dir, "other.csv"), []byte("a,b\n1,2\n"), 0o644)
		os.MkdirAll(filepath.Join(dir, "plots", "old"), 0o755)
		os.WriteFile(filepath.Join(dir, "plots", "results.csv"), []byte("x,y\n"), 0o644)
		s, err := Load(dir)
		if err != nil || len(s.Runs) != 1 || len(s.Notes) != 0 {
			t.Fatalf("err %v, runs %d, notes %q", err, len(s.Runs), s.Notes)
		}
		if _, err := Load(filepath.Join(dir, "plots", "old")); err == nil || !strings.Contains(err.Error(), "holds no planrun results") {
			t.Errorf("a directory of no runs: %v", err)
		}
		if _, err := Load(filepath.Join(dir, "plots")); err == nil || !strings.Contains(err.Error(), "is not a planrun ledger") {
			t.Errorf("a results.csv that is not a ledger: %v", err)
		}
		if _, err := Load(filepath.Join(dir, "other.csv")); err == nil || !strings.Contains(err.Error(), "not a planrun ledger") {
			t.Errorf("a CSV that is not a ledger: %v", err)
		}
	})
	t.Run("a run directory's unreadable manifest", func(t *testing.T) {
		dir := t.TempDir()
		rd := filepath.Join(dir, "p-2026-11-01T10-00-00")
		os.MkdirAll(rd, 0o755)
		os.WriteFile(filepath.Join(rd, "manifest.json"), []byte("{not json"), 0o644)
		writeLedger(t, filepath.Join(rd, "results.csv"), row("p", "a", "m/x", t0, 0.1))
		s, err := Load(dir)
		if err != nil || len(s.Runs) != 1 || len(s.Runs[0].Rows) != 1 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "manifest.json") {
			t.Fatalf("err %v, set %+v", err, s)
		}
	})
	t.Run("two plans in one directory", func(t *testing.T) {
		dir := t.TempDir()
		writeLedger(t, filepath.Join(dir, "results.csv"),
			row("p", "a", "m/x", t0, 0.1), row("q", "b", "m/x", t0.Add(time.Hour), 0.5), row("p", "c", "m/x", t0.Add(2*time.Hour), 0.1))
		s, err := Load(dir)
		if err != nil || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "holds runs of 2 plans: p (2 runs), q (1 runs)") {
			t.Fatalf("err %v, notes %q", err, s.Notes)
		}
		series := Build(s, Options{})
		if len(series) != 2 || len(series[0].Points) != 2 || series[1].Key.Plan != "q" {
			t.Fatalf("one cell id in two plans must be two series: %+v", series)
		}
	})
	t.Run("renamed cell", func(t *testing.T) {
		dir := t.TempDir()
		writeLedger(t, filepath.Join(dir, "results.csv"),
			row("p", "a", "m/x", t0, 0.1), row("p", "b", "m/x", t0.Add(time.Hour), 0.1), row("p", "c", "n/x", t0.Add(2*time.Hour), 0.1))
		s, _ := Load(dir)
		series := Build(s, Options{})
		notes := Renamed(series)
		if len(series) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "cell n/x first appears in run c, after cell m/x") {
			t.Fatalf("series %d, notes %q", len(series), notes)
		}
		js, _ := Judge(s, "c", Baseline{N: 5})
		if len(js) == 0 || js[0].Verdict != Insufficient {
			t.Errorf("the renamed cell was judged against the old one's runs: %+v", js)
		}
	})
}

func TestTrendOf(t *testing.T) {
	noise := []float64{0.100, 0.102, 0.099, 0.101, 0.100, 0.098, 0.101, 0.102, 0.099, 0.100}
	step := append(append([]float64{}, noise...), 0.150, 0.151, 0.149, 0.152, 0.150, 0.148, 0.151, 0.150, 0.149, 0.150)
	for _, c := range []struct {
		field string
		vals  []float64
		want  string
	}{
		{"ttft_p50_s", noise, Flat},
		{"ttft_p50_s", step, Worse},
		{"output_tok_s", step, Better}, // a rise in throughput
		{"ttft_p50_s", step[:3], TooFewRuns},
	} {
		if got := TrendOf(c.field, c.vals); got.Verdict != c.want {
			t.Errorf("%s over %v: %+v, want %s", c.field, c.vals, got, c.want)
		}
	}
}

func TestNoiseBand(t *testing.T) {
	// One outlying run is left out of the spread: the band stays that of the others.
	steady := []float64{100, 101, 99, 100, 150}
	if b := noiseBand(steady, 100); b > 10 {
		t.Errorf("band %.2f: the outlying run widened it", b)
	}
	// A noisy baseline has a wider band than a steady one.
	noisy := []float64{80, 120, 100, 90, 110}
	if b := noiseBand(noisy, 100); b < 40 {
		t.Errorf("band %.2f of a ±20%% baseline", b)
	}
}

func TestExplain(t *testing.T) {
	a := Env{Tool: "openai.vllm", ServerVersion: "0.9.1", ModelDigest: "sha256:abc", PlanHash: "h"}
	b := a
	b.ServerVersion = "0.9.2"
	if got := Explain(a, b); got != "openai.vllm server 0.9.1 → 0.9.2, same weights" {
		t.Errorf("got %q", got)
	}
	b.ModelDigest, b.Variables, a.Variables = "sha256:def", map[string]string{"ctx": "8192"}, map[string]string{"ctx": "4096"}
	if got := Explain(a, b); got != "openai.vllm server 0.9.1 → 0.9.2, weights sha256:abc → sha256:def, var.ctx 4096 → 8192" {
		t.Errorf("got %q", got)
	}
	if got := Explain(a, a); got != "same environment" {
		t.Errorf("got %q", got)
	}

	// A rebuild of the same version is an environment change of its own.
	b = a
	b.ServerBuild, a.ServerBuild = "ollama CPU SSE3 AVX AVX2 (libggml-cpu-haswell.so)", "ollama CPU (no vector extension)"
	if got := Explain(a, b); got != "openai.vllm engine build ollama CPU (no vector extension) → ollama CPU SSE3 AVX AVX2 (libggml-cpu-haswell.so), same weights" {
		t.Errorf("a rebuild: %q", got)
	}
	a.ServerBuild = ""

	// The cell's settings are one phrase, after "same weights"; the variable that made
	// them is then not said again. A setting only one side has is a change to or from
	// nothing; a run that recorded no settings shows no setting change.
	b = a
	a.Settings = map[string]string{"max_tokens": "128", "seed": "1", "stream": "true"}
	b.Settings = map[string]string{"max_tokens": "256", "seed": "1", "temperature": "0.7", "stream": "true"}
	b.Variables = map[string]string{"ctx": "8192"}
	if got := Explain(a, b); got != "same weights, settings: max_tokens 128 → 256, temperature (none) → 0.7" {
		t.Errorf("got %q", got)
	}
	changes := Diff(a, b)
	if len(changes) != 3 || changes[0].Setting() != "max_tokens" || changes[2].Field != "var.ctx" || changes[2].Setting() != "" {
		t.Errorf("diff %+v", changes)
	}
	b.Settings = nil
	if got := Explain(a, b); got != "var.ctx 4096 → 8192, same weights" {
		t.Errorf("against a run without settings: %q", got)
	}
}

func TestSparkline(t *testing.T) {
	if got := Sparkline([]float64{1, 2, math.NaN(), 8}); got != "▁▂ █" {
		t.Errorf("got %q", got)
	}
}

// Judge's verdicts on a steady baseline of five runs: a rise past the band regresses
// a latency and improves nothing; a fall improves it; a small move is noise; a
// threshold the move does not cross is no regression.
func TestJudgeVerdicts(t *testing.T) {
	dir := t.TempDir()
	var rows []ledger.Row
	for i, v := range []float64{0.100, 0.101, 0.099, 0.100, 0.102} {
		rows = append(rows, row("p", fmt.Sprintf("r%d", i), "m/x", t0.Add(time.Duration(i)*time.Hour), v))
	}
	for i, v := range []float64{0.150, 0.070, 0.103} {
		rows = append(rows, row("p", fmt.Sprintf("z%d", i), "m/x", t0.Add(time.Duration(10+i)*time.Hour), v))
	}
	writeLedger(t, filepath.Join(dir, "results.csv"), rows...)
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Judge each z run against the r runs only: drop the other z runs from the set.
	for i, want := range []Verdict{Regressed, Improved, WithinNoise} {
		sub := &Set{Dir: dir, Runs: append(slices.Clone(s.Runs[:5]), s.Runs[5+i])}
		limit, _ := compare.ParseThreshold("ttft_p50_s>+60%")
		for _, b := range []Baseline{{N: 5}, {N: 5, Thresholds: []compare.Threshold{limit}}} {
			js, err := Judge(sub, fmt.Sprintf("z%d", i), b)
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if len(b.Thresholds) > 0 && want == Regressed {
				w = WithinNoise // +50% is beyond the band but not past +60%
			}
			if js[0].Field != "ttft_p50_s" || js[0].Verdict != w {
				t.Errorf("z%d %v: %+v, want %s", i, b.Thresholds, js[0], w)
			}
		}
	}
}

// A -cell glob matches a series' heading as history prints it ("m/x c=2") as well as the
// cell id: '*c=2*' selects the level, where it used to match nothing.
func TestCellGlobMatchesTheHeading(t *testing.T) {
	set := &Set{}
	for i, c := range []int{1, 2, 12} {
		r := row("p", "p-1", "m/x", t0.Add(time.Duration(i)*time.Minute), 0.1)
		r.Concurrency = c
		set.Runs = append(set.Runs, &Run{ID: fmt.Sprintf("p-%d", i), Rows: []ledger.Row{r}})
	}
	for _, c := range []struct {
		glob string
		want string
	}{
		{"*c=2", "m/x c=2"},
		{"*c=2*", "m/x c=2"},
		{"*c=1*", "m/x c=1 m/x c=12"},
		{"m/x c=1", "m/x c=1"},
		{"m/*", "m/x c=1 m/x c=2 m/x c=12"},
		{"*y*", ""},
	} {
		var got []string
		for _, s := range Build(set, Options{Cells: []string{c.glob}}) {
			got = append(got, s.Key.String())
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("-cell %q: series %q, want %q", c.glob, got, c.want)
		}
	}
}

// A p99 that moved in runs of 24 requests is not called worse: compare judges a p99
// only from 368 successful requests a side (what bounds it at 95%), and history holds
// it to the same count. A
// p50 of the same runs (20 suffice) is judged.
func TestTrendsNeedTheRequestsCompareNeeds(t *testing.T) {
	for _, c := range []struct {
		succeeded int
		p50, p99  string
	}{{24, Worse, TooFewRequests}, {400, Worse, Worse}, {19, TooFewRequests, TooFewRequests}} {
		var s Series
		for i := range 8 {
			r := row("p", fmt.Sprint(i), "m/x", t0.Add(time.Duration(i)*time.Hour), 0.1)
			r.TTFT.P99, r.Succeeded = 0.3, c.succeeded
			if i >= 4 {
				r.TTFT.P50, r.TTFT.P99 = 0.2, 0.6
			}
			s.Points = append(s.Points, Point{RunID: r.RunID, Row: r})
		}
		tr := s.Trends([]string{"ttft_p50_s", "ttft_p99_s"})
		if tr[0].Verdict != c.p50 || tr[1].Verdict != c.p99 {
			t.Errorf("%d requests a run: p50 %+v, p99 %+v; want %s and %s", c.succeeded, tr[0], tr[1], c.p50, c.p99)
		}
		if tr[1].Verdict == TooFewRequests && (tr[1].Need != 368 || tr[1].Have != c.succeeded ||
			!strings.Contains(tr[1].describe(), "ttft_p99_s needs 368 successful requests a row")) {
			t.Errorf("%d requests: %+v, %q", c.succeeded, tr[1], tr[1].describe())
		}
	}
}

// A run beyond the noise band whose own interval reaches back inside it is
// indeterminate, and says how many requests would settle it; one whose interval clears
// the band regressed. The intervals travel through the ledger's _lo/_hi columns.
func TestJudgeIndeterminateOnTheRunsOwnInterval(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   Verdict
	}{{0.145, 0.155, Regressed}, {0.095, 0.21, Indeterminate}} {
		dir := t.TempDir()
		var rows []ledger.Row
		for i, v := range []float64{0.100, 0.101, 0.099, 0.100, 0.102} {
			rows = append(rows, row("p", fmt.Sprintf("r%d", i), "m/x", t0.Add(time.Duration(i)*time.Hour), v))
		}
		z := row("p", "z", "m/x", t0.Add(10*time.Hour), 0.150)
		u := stats.Unbounded(368)
		z.TTFT.CI = &stats.DistCI{Confidence: 0.95, P50: stats.Interval{Lo: c.lo, Hi: c.hi}, P90: u, P95: u, P99: u, Mean: u}
		z.CI.Confidence = 0.95
		writeLedger(t, filepath.Join(dir, "results.csv"), append(rows, z)...)
		s, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		js, err := Judge(s, "z", Baseline{N: 5})
		if err != nil {
			t.Fatal(err)
		}
		if js[0].Verdict != c.want {
			t.Errorf("interval [%v, %v]: %s, want %s", c.lo, c.hi, js[0], c.want)
		}
		if c.want == Indeterminate && (len(Indeterminates(js)) == 0 ||
			!strings.Contains(js[0].String(), "this run's own 95% interval (0.095 s–0.21 s) reaches back inside it; about ")) {
			t.Errorf("indeterminate says %q", js[0])
		}
	}
}
