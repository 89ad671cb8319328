package apply

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/apply/capacity"
	"github.com/planrun/planrun/internal/procgroup"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/procmem"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The case: a level whose two runs' TPOT differ 4x (the server slowed between
// them) is not stable, though their TTFTs agree, and the verdict names TPOT.
func TestStabilityJudgesTPOTAcrossRuns(t *testing.T) {
	ms := time.Millisecond
	// A long TTFT keeps throughput's spread (E2E 175 ms against 400 ms: ±39%) below
	// TPOT's (5 against 20 ms: ±60%), so the verdict must name TPOT.
	cfg := mockserver.Config{TTFT: 100 * ms, TPOT: 5 * ms}
	// The measured runs are the last 8 requests (apply asks a few before them, to
	// calibrate the prompt): run 2 is the last 4, at TPOT 20 ms.
	before := int(runTwoRuns(t, cfg).Requests) - 8
	cfg.Phases = []mockserver.Phase{{From: uint64(before + 5), Timing: mockserver.Timing{TTFT: 100 * ms, TPOT: 20 * ms}}}
	r := runTwoRuns(t, cfg).row
	// TPOT's run medians are 5 and 20 ms: m = 12.5, spread 60% (more when the client's
	// own delays add to the short one), unstable.
	if r.Stability != "unstable" || r.StabilityFigure != "tpot" || r.TPOTSpread < 0.5 {
		t.Fatalf("stability %q of %q ±%.3f (TTFT ±%.3f, TPOT ±%.3f, throughput ±%.3f), want unstable on tpot ±0.6 or more",
			r.Stability, r.StabilityFigure, r.StabilitySpread, r.TTFTSpread, r.TPOTSpread, r.OutputSpread)
	}
}

type twoRuns struct {
	row ledger.Row
	mockserver.Stats
}

// runTwoRuns runs one level of 4 requests, twice, against a mock with cfg.
func runTwoRuns(t *testing.T, cfg mockserver.Config) twoRuns {
	t.Helper()
	mock := mockserver.New(cfg)
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 16
  concurrency   = 1
  requests      = 4
  warmup_runs   = 0
  repeat_runs   = 2
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
`, srv.URL)
	res, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Succeeded != 8 {
		t.Fatalf("rows %+v, want one of 8 successful requests", res.Rows)
	}
	return twoRuns{res.Rows[0], mock.Stats()}
}

// spin is the test binary as a busy loop (PLANRUN_TEST_SPIN=busy/idle durations): busy
// for the first, asleep for the second, forever.
func init() {
	spec := os.Getenv("PLANRUN_TEST_SPIN")
	if spec == "" {
		return
	}
	b, i, _ := strings.Cut(spec, "/")
	busy, err1 := time.ParseDuration(b)
	idle, err2 := time.ParseDuration(i)
	if err1 != nil || err2 != nil {
		os.Exit(2)
	}
	for {
		for end := time.Now().Add(busy); time.Now().Before(end); {
		}
		time.Sleep(idle)
	}
}

// contendedPlan runs one level against the mock as a server planrun starts, pinned to
// core; pidFile receives the server's PID.
func contendedPlan(t *testing.T, core int, pidFile string) string {
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
server "mock" {
  command = [%q, "-test.run=^$"]
  env = {
    PLANRUN_TEST_MOCK_SERVER = "127.0.0.1:%d"
    PLANRUN_TEST_PIDFILE     = %q
  }
  ready {
    url     = "http://127.0.0.1:%d/health"
    timeout = "20s"
  }
}
backend "openai" "mock" {
  url    = "http://127.0.0.1:%d/v1"
  server = server.mock
}
variable "url" { default = "" }
hardware "pinned" { cpus = "%d" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 20
  concurrency   = 1
  requests      = 40
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  hardware = [hardware.pinned]
  workload = [workload.w]
}
`, os.Args[0], port, pidFile, port, port, core)
}

// coreTicks is one core's busy and total ticks (/proc/stat), read by the test itself.
func coreTicks(t *testing.T, core int) (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 8 && f[0] == fmt.Sprintf("cpu%d", core) {
			v := make([]float64, 8)
			for i := range v {
				v[i], _ = strconv.ParseFloat(f[i+1], 64)
			}
			busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
			return busy, busy + v[3] + v[4]
		}
	}
	t.Fatalf("no cpu%d in /proc/stat", core)
	return 0, 0
}

// pidTicks is a process's utime + stime, read by the test itself.
func pidTicks(t *testing.T, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return u + s
}

// A level run while a busy loop is pinned to the server's core is contended, with the
// share of the core the loop took (measured from the loop's own ticks) within 10 points;
// without the loop the row's verdict follows its own share, which is what the test
// measures around the run from /proc itself (this machine is rarely quiet: other work
// may take the core, and the row must say so then, not claim zero).
func TestContendedRowsShowTheNeighboursShare(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.NumCPU() < 2 {
		t.Skip("needs Linux's /proc and two cores: the server on one, the rest of the machine on the other")
	}
	core := runtime.NumCPU() - 1
	for _, withLoop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", withLoop), func(t *testing.T) {
			var loop int
			if withLoop {
				// The loop runs real-time (SCHED_FIFO) for 45 ms of every 50: ahead of any
				// other work on the core (a build, another test's loops), so what else runs
				// there fits in the 5 ms it leaves, and the server still gets to answer.
				cmd := exec.Command("chrt", "-f", "1", os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "PLANRUN_TEST_SPIN=45ms/5ms", "GOMAXPROCS=1")
				g, err := procgroup.StartOn(cmd, []int{core})
				if err != nil {
					t.Skipf("a real-time loop needs chrt and root: %v", err)
				}
				t.Cleanup(func() { procgroup.Kill(cmd.Process.Pid); cmd.Wait(); g.Release() })
				loop = cmd.Process.Pid
				time.Sleep(200 * time.Millisecond)
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", loop)); len(b) == 0 || cmd.ProcessState != nil {
					t.Skip("the real-time loop did not start (chrt refused?)")
				}
			}
			pidFile := filepath.Join(t.TempDir(), "server.pid")
			p, cells := loadPlan(t, contendedPlan(t, core, pidFile), "")
			var busy0, total0, loop0, self0 float64
			var server int
			var busy1, total1, loop1, self1, srv float64
			opts := Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open()}
			opts.Progress = &windowProbe{start: func() {
				busy0, total0 = coreTicks(t, core)
				self0 = pidTicks(t, os.Getpid())
				if loop > 0 {
					loop0 = pidTicks(t, loop)
				}
			}, end: func() {
				busy1, total1 = coreTicks(t, core)
				self1 = pidTicks(t, os.Getpid())
				if loop > 0 {
					loop1 = pidTicks(t, loop)
				}
				b, _ := os.ReadFile(pidFile)
				server, _ = strconv.Atoi(string(b))
				srv = pidTicks(t, server)
			}}
			res, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Rows[0]
			if r.Status != ledger.StatusOK || r.CPUsAllowed != strconv.Itoa(core) {
				t.Fatalf("row %s on cores %q: %s", r.Status, r.CPUsAllowed, r.Notes)
			}
			total := total1 - total0
			if withLoop {
				share := 100 * (loop1 - loop0) / total
				t.Logf("loop %.1f%% of core %d, the row's neighbours %.1f%%, server %.1f%%", share, core, r.NeighbourCPUPct, r.ServerCPUPct)
				if r.Contention != ledger.ContentionContended || math.Abs(r.NeighbourCPUPct-share) > 10 {
					t.Fatalf("row %q with neighbours %.1f%%, want contended within 10 points of the loop's %.1f%% (notes: %s)",
						r.Contention, r.NeighbourCPUPct, share, r.Notes)
				}
				if !strings.Contains(r.Notes, fmt.Sprintf("contended: other processes used %.0f%% of the server's cores (%d)", r.NeighbourCPUPct, core)) {
					t.Errorf("notes %q lack the contended note", r.Notes)
				}
				return
			}
			// The server's own ticks since it started are an upper bound of its part of the
			// window; the client is on both cores, so half of it is counted on this one.
			others := 100 * (busy1 - busy0 - srv - (self1-self0)/float64(runtime.NumCPU())) / total
			t.Logf("the core's other work %.1f%% by the test (at least), the row's %.1f%% (%s)", others, r.NeighbourCPUPct, r.Contention)
			if want := r.NeighbourCPUPct > procmem.ContendedAbove; (r.Contention == ledger.ContentionContended) != want {
				t.Fatalf("row %q at neighbours %.1f%%", r.Contention, r.NeighbourCPUPct)
			}
			if r.NeighbourCPUPct < others-10 || r.NeighbourCPUPct > others+10+100*srv/total {
				t.Fatalf("row's neighbours %.1f%%, the test measured %.1f%% (server %.1f%%)", r.NeighbourCPUPct, others, 100*srv/total)
			}
		})
	}
}

// windowProbe calls start as a level begins and end as it ends.
type windowProbe struct {
	countingProgress
	start, end func()
}

func (w *windowProbe) StartLevel(*plan.Cell, plan.LoadLevel, int) { w.start() }
func (w *windowProbe) EndLevel(*plan.Cell, ledger.Row)            { w.end() }

// Against the mock's own record of when it wrote each token, a closed loop's steady
// throughput is within 1% of what the server really produced while every slot was busy,
// while the whole window's figure is lower by the share of the window's slot time that
// held no measured request: the ramp (the slots' first measured requests go out as their
// ramp requests end) and the drain (drawn lengths: the last requests end far apart).
func TestSteadyThroughputAgainstTheServersTruth(t *testing.T) {
	mock := mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 5 * time.Millisecond, RecordTruth: true})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = uniform(5, 150)
  concurrency   = 4
  ramp          = "400ms"
  requests      = 80
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
`, srv.URL)
	res, recs := runSamples(t, p, cells)
	r := res.Rows[0]
	var starts []time.Time
	for _, rec := range recs {
		if !rec.Ramp {
			starts = append(starts, rec.Start)
		}
	}
	// 80 requests make a window of about 7 s: a chunk read some tens of milliseconds late
	// at either end of the steady window moves its figure by a fraction of the 1% (with
	// 40, a 3.4 s window, one such delay on a quiet machine made 1.1%).
	if len(starts) != 80 || r.Succeeded != 80 {
		t.Fatalf("%d measured requests, %d succeeded", len(starts), r.Succeeded)
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	from, to := starts[3], starts[len(starts)-1] // the 4th start to the last
	var written int
	for _, tr := range mock.Truths() {
		for _, c := range tr.Chunks {
			if !c.Written.Before(from) && c.Written.Before(to) {
				written += c.Tokens
			}
		}
	}
	truth := float64(written) / to.Sub(from).Seconds()
	t.Logf("steady %.1f tok/s against the server's %.1f over %.2f s; whole window %.1f over %.2f s, ramp %.3f s",
		r.SteadyOutputTokS, truth, r.SteadySeconds, r.OutputTokS, r.WindowSeconds, r.RampSeconds)
	if math.Abs(r.SteadyOutputTokS-truth) > 0.01*truth || math.Abs(r.SteadySeconds-to.Sub(from).Seconds()) > 1e-6 {
		t.Fatalf("steady %.2f tok/s over %.4f s, the server wrote %.2f tok/s over %.4f s", r.SteadyOutputTokS, r.SteadySeconds,
			truth, to.Sub(from).Seconds())
	}
	// The share of the window's slot time (4 slots × the window) no measured request
	// held, from the records: the whole window's figure is lower by it.
	var busy float64
	for _, rec := range recs {
		if !rec.Ramp {
			busy += (rec.BodyEnd).Seconds()
		}
	}
	share := 1 - busy/(4*r.WindowSeconds)
	lower := 1 - r.OutputTokS/r.SteadyOutputTokS
	t.Logf("the whole window is %.1f%% below steady; %.1f%% of its slot time held no measured request", 100*lower, 100*share)
	// Within a quarter of it: a slot's time in a request's TTFT holds a request but
	// makes no token yet, and a loaded machine delays some requests more than others.
	if share < 0.03 || math.Abs(lower-share) > max(0.03, share/4) {
		t.Fatalf("the whole window's %.1f tok/s is %.1f%% below steady; %.1f%% of the slots' time was ramp and drain", r.OutputTokS, 100*lower, 100*share)
	}
}

// The timeline file of a run gives the row's steady figure back: per run, Σ the steady
// slices' tokens / Σ their length; the row's is the median across runs.
func TestTimelineFileRecomputesTheSteadyFigure(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 10 * time.Millisecond, TPOT: 2 * time.Millisecond}))
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = uniform(5, 40)
  concurrency   = [1, 3]
  requests      = 24
  warmup_runs   = 0
  repeat_runs   = 3
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
`, srv.URL)
	res, _ := runSamples(t, p, cells)
	if _, err := os.Stat(filepath.Join(res.RunDir, "timeline.svg")); err != nil {
		t.Errorf("no timeline chart: %v", err)
	}
	f, err := os.Open(filepath.Join(res.RunDir, TimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := csv.NewReader(f).ReadAll()
	if err != nil || len(lines) < 2 || !slices.Equal(lines[0], timelineHeader) {
		t.Fatalf("%d lines, err %v, header %v", len(lines), err, lines[0])
	}
	col := map[string]int{}
	for i, c := range lines[0] {
		col[c] = i
	}
	f64 := func(l []string, c string) float64 {
		v, err := strconv.ParseFloat(l[col[c]], 64)
		if err != nil {
			t.Fatalf("%s %q: %v", c, l[col[c]], err)
		}
		return v
	}
	type key struct{ conc, run string }
	tok, secs := map[key]float64{}, map[key]float64{}
	started := map[string]int{}
	for _, l := range lines[1:] {
		started[l[col["concurrency"]]] += int(f64(l, "started"))
		if l[col["steady"]] == "true" {
			k := key{l[col["concurrency"]], l[col["run"]]}
			tok[k] += f64(l, "output_tokens")
			secs[k] += f64(l, "to_s") - f64(l, "from_s")
		}
	}
	for _, r := range res.Rows {
		c := strconv.Itoa(r.Concurrency)
		var perRun []float64
		for run := range 3 {
			k := key{c, strconv.Itoa(run)}
			perRun = append(perRun, tok[k]/secs[k])
		}
		got := stats.Median(perRun)
		t.Logf("c=%s: runs %v → %.3f tok/s; the row's steady %.3f (whole window %.3f), slices' CV %.1f%%", c, perRun, got,
			r.SteadyOutputTokS, r.OutputTokS, r.SteadySliceCVPct)
		if math.IsNaN(got) || math.Abs(got-r.SteadyOutputTokS) > 1e-4*r.SteadyOutputTokS || started[c] != 72 {
			t.Fatalf("c=%s: the timeline gives %v tok/s from %d requests, the row %v from 72", c, got, started[c], r.SteadyOutputTokS)
		}
	}
}

// An open loop above the mock's capacity (4 queue slots, a request holding one for
// 20 ms + 19 × 5 ms: about 35 requests/s) queues without bound and is over-saturated;
// one well below it (a quarter: on a busy machine the mock's own timing slows too) is
// not.
func TestOverSaturatedOpenLoop(t *testing.T) {
	srv := httptest.NewServer(mockserver.New(mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 5 * time.Millisecond, QueueSlots: 4}))
	defer srv.Close()
	p, cells := loadPlan(t, `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
workload "w" {
  prompt_tokens = 8
  max_tokens    = 20
  concurrency   = 64
  request_rate  = [8, 80]
  arrival       = "constant"
  requests      = 40
  warmup_runs   = 0
  repeat_runs   = 1
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
}
`, srv.URL)
	res, _ := runSamples(t, p, cells)
	if len(res.Rows) != 2 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for _, r := range res.Rows {
		over := r.RequestRate > 35
		t.Logf("%g req/s: %q, TTFT slope %.3f s/s, in flight %.2f/s", r.RequestRate, r.Saturation, r.TTFTSlope, r.InFlightSlope)
		if (r.Saturation == ledger.SaturationOver) != over {
			t.Errorf("%g req/s: saturation %q, want over-saturated %v (notes: %s)", r.RequestRate, r.Saturation, over, r.Notes)
		}
		if over && !strings.Contains(r.Notes, "over-saturated: over the ") {
			t.Errorf("notes %q", r.Notes)
		}
	}
}

// An over-saturated level decides nothing in a capacity search: neither met nor missed,
// so the search bisects between the levels that did decide.
func TestCapacitySearchSkipsOverSaturatedLevels(t *testing.T) {
	w := &plan.Workload{Name: "w", Concurrency: []int{64}, RequestRates: []float64{1, 8, 16},
		Capacity: &plan.Capacity{TargetPct: 90, Resolution: 1}}
	cell := &plan.Cell{ID: "c", Workload: w}
	row := func(rate, attainmentPct float64, saturation string) ledger.Row {
		r := ledger.NewRow()
		r.CellID, r.Concurrency, r.RequestRate, r.SLOAttainmentPct, r.Status = "c", 64, rate, attainmentPct, ledger.StatusOK
		r.Saturation = saturation
		return r
	}
	tests := []struct {
		name string
		at8  string
		want float64
	}{
		{"8/s settled and missed: between 1 and 8", "", 4.5},
		{"8/s over-saturated: between 1 and 16", ledger.SaturationOver, 8.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := capacity.New(cell, []ledger.Row{row(1, 100, ""), row(8, 20, tt.at8), row(16, 20, "")})
			next, more := s.Next()
			if !more || next.RequestRate != tt.want {
				t.Fatalf("next = %+v, %v; want %v", next, more, tt.want)
			}
		})
	}
	// Every level above the met one over-saturated: the capacity is at least the met one.
	s := capacity.New(cell, []ledger.Row{row(1, 100, ""), row(8, 20, ledger.SaturationOver), row(16, 20, ledger.SaturationOver)})
	if _, more := s.Next(); more {
		t.Error("the search went on with nothing above to bound it")
	}
	if c := s.Answer(); c == nil || c.Bound != ledger.CapacityAtLeast || c.Value != 1 {
		t.Errorf("answer %+v, want at least 1", c)
	}
}
