package apply

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/dataset"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/gpu"
)

// seededTrace is a Mooncake trace of n rows, Poisson arrivals at rate per second of
// trace time, with lognormal prompt lengths and varied output lengths.
func seededTrace(n int, rate float64, seed uint64) (string, []dataset.Row) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	var rows []dataset.Row
	var t float64
	for i := range n {
		t += rng.ExpFloat64() * 1000 / rate
		r := dataset.Row{Timestamp: time.Duration(int64(t)) * time.Millisecond, InputLength: min(3000, max(20, int(math.Exp(rng.NormFloat64()*0.7+math.Log(250))))),
			OutputLength: 2 + rng.IntN(40)}
		fmt.Fprintf(&b, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%d, %d]}\n",
			r.Timestamp.Milliseconds(), r.InputLength, r.OutputLength, i%5, 100+i)
		rows = append(rows, r)
	}
	return b.String(), rows
}

const replayPlan = `
variable "url" { type = string }
backend "openai" "mock" { url = "${var.url}/v1" }
dataset "trace" {
  format = "mooncake"
  path   = "trace.jsonl"
}
workload "w" {
  dataset     = dataset.trace
  temperature = 0
  replay {
    speedup = 10
  }
}
matrix "m" {
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}
`

// arrivalServer is where a replay is sent and how its requests' arrival is known.
type arrivalServer struct {
	url string
	// arrived is when the server took request r (by its X-Request-Id).
	arrived func(r ledger.RequestRecord) (time.Time, bool)
	// check holds r to its trace row on the server's own counts; nil skips it.
	check func(t testing.TB, r ledger.RequestRecord, row dataset.Row)
}

// inProcessMock is the mock in this process, whose Truth also gives each request's
// prompt and output tokens by the server's own count.
func inProcessMock(t testing.TB) arrivalServer {
	mock := mockserver.New(mockserver.Config{RecordTruth: true})
	srv := httptest.NewServer(mock)
	t.Cleanup(srv.Close)
	return arrivalServer{
		url: srv.URL,
		arrived: func(r ledger.RequestRecord) (time.Time, bool) {
			truth, ok := mock.Truth(r.RequestID)
			return truth.Received, ok
		},
		check: func(t testing.TB, r ledger.RequestRecord, row dataset.Row) {
			truth, _ := mock.Truth(r.RequestID)
			if d := math.Abs(float64(truth.PromptTokens - row.InputLength)); d > 0.03*float64(row.InputLength) {
				t.Fatalf("%s: %d prompt tokens by the server's count, the trace says %d", r.ID, truth.PromptTokens, row.InputLength)
			}
			if truth.OutputTokens != row.OutputLength || r.OutputTokens != row.OutputLength {
				t.Fatalf("%s: %d output tokens (client %d), the trace says %d", r.ID, truth.OutputTokens, r.OutputTokens, row.OutputLength)
			}
		},
	}
}

// replayArrivals replays a seeded trace of 300 rows (20 s of trace time) at speedup 10
// to srv and checks what must hold exactly: each request scheduled at its row's
// timestamp over 10, and srv's check. It returns how far arrivals at the server were off
// the trace: offsets from the first arrival, less their median shift (the first
// request's own delay moves them all alike), as sorted absolute errors, and the row.
func replayArrivals(t testing.TB, srv arrivalServer) ([]time.Duration, ledger.Row) {
	data, rows := seededTrace(300, 15, 11)
	p, cells := loadPlan(t, replayPlan, srv.url, "trace.jsonl", data)
	res, recs := runSamples(t, p, cells)
	if len(res.Rows) != 1 || res.Rows[0].Status != ledger.StatusOK || len(recs) != len(rows) {
		t.Fatalf("%d rows (%+v), %d requests for %d trace rows", len(res.Rows), res.Rows, len(recs), len(rows))
	}
	shifts := make([]time.Duration, len(recs)) // arrival − schedule, aligned below
	for _, r := range recs {
		n := requestIndex(t, r.ID)
		row := rows[n]
		at, ok := srv.arrived(r)
		if !ok || !r.Paced {
			t.Fatalf("%s: no arrival (%v) or no schedule on its record", r.ID, ok)
		}
		want := row.Timestamp / 10
		if got := r.Scheduled; got != want {
			t.Fatalf("%s: scheduled at %v, the trace says %v", r.ID, got, want)
		}
		if srv.check != nil {
			srv.check(t, r, row)
		}
		shifts[n] = time.Duration(at.UnixNano()) - want
	}
	base := shifts[0]
	for i := range shifts {
		shifts[i] -= base
	}
	median := slices.Clone(shifts)
	slices.Sort(median)
	errs := make([]time.Duration, len(shifts))
	for i, s := range shifts {
		errs[i] = max(s-median[len(median)/2], median[len(median)/2]-s)
	}
	slices.Sort(errs)
	return errs, res.Rows[0]
}

// A replay sends every row at its timestamp over the speedup. How close arrivals come
// is a timing figure, measured by BenchmarkReplayArrivals; this test holds them to a
// bound no scheduling hiccup reaches but a wrong schedule does (a speedup ignored or
// applied twice would miss by seconds), holds a row whose arrivals missed by more than
// 100 ms to a verdict other than ok, and checks the send lag is reported.
func TestReplayArrivesOnTheTrace(t *testing.T) {
	errs, row := replayArrivals(t, inProcessMock(t))
	p99 := errs[len(errs)*99/100]
	t.Logf("arrivals off the trace by %v at p99 (max %v); send lag p99 %v", p99, errs[len(errs)-1], time.Duration(row.SendLag.P99*1e9))
	// A wrong schedule misses by seconds; a loaded machine can miss by more than 100 ms
	// too, and then the row must say so itself (its send lag saw it): never ok.
	if p99 > time.Second || p99 > 100*time.Millisecond && row.Fidelity == ledger.FidelityOK {
		t.Fatalf("arrivals off the trace by %v at p99, and the row's fidelity is %q (notes %q)", p99, row.Fidelity, row.Notes)
	}
	if math.IsNaN(row.SendLag.P99) || math.IsNaN(row.SendLag.Max) || row.SendLag.Max < row.SendLag.P99 {
		t.Fatalf("send lag p99 %v s, max %v s", row.SendLag.P99, row.SendLag.Max)
	}
}

// BenchmarkReplayArrivals reports how far a replay's arrivals at the server land off the
// trace's timestamps (300 rows at speedup 10, about 150 requests/s) and the client's own
// send lag, against the mock in this process (which competes with the client for the
// CPU within one Go runtime) and the mock as a process of its own (as a server under
// test runs; TTFT 20 ms, TPOT 2 ms). Run it with -benchtime 1x -count N.
func BenchmarkReplayArrivals(b *testing.B) {
	for _, srv := range []struct {
		name  string
		start func(testing.TB) arrivalServer
	}{{"in-process", inProcessMock}, {"own-process", ownProcessMock}} {
		b.Run(srv.name, func(b *testing.B) {
			for range b.N {
				errs, row := replayArrivals(b, srv.start(b))
				ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
				b.ReportMetric(ms(errs[len(errs)/2]), "arrival-err-p50-ms")
				b.ReportMetric(ms(errs[len(errs)*99/100]), "arrival-err-p99-ms")
				b.ReportMetric(ms(errs[len(errs)-1]), "arrival-err-max-ms")
				b.ReportMetric(row.SendLag.P99*1e3, "send-lag-p99-ms")
				b.ReportMetric(float64(row.NewConnections), "dialed-requests") // connected at their send time
			}
		})
	}
}

// ownProcessMock starts this test binary as the mock server (serveMockChild), which
// names every generation request it takes and writes when it took it to a file.
func ownProcessMock(t testing.TB) arrivalServer {
	log := filepath.Join(t.TempDir(), "arrivals")
	url := mockProcess(t, "PLANRUN_TEST_ARRIVALS="+log)
	return arrivalServer{url: url, arrived: func(r ledger.RequestRecord) (time.Time, bool) {
		b, err := os.ReadFile(log)
		if err != nil {
			return time.Time{}, false
		}
		for _, line := range strings.Split(string(b), "\n") {
			if id, ns, ok := strings.Cut(line, " "); ok && id == r.RequestID {
				n, err := strconv.ParseInt(ns, 10, 64)
				return time.Unix(0, n), err == nil
			}
		}
		return time.Time{}, false
	}}
}

// mockProcess starts this test binary as the mock server (serveMockChild) on a free
// port, with env on top of this process's environment, and returns its URL once it
// listens; the process ends with the test.
func mockProcess(t testing.TB, env ...string) string {
	t.Helper()
	port, err := servers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "PLANRUN_TEST_MOCK_SERVER="+addr), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		} else if i == 300 {
			t.Fatalf("the mock process did not listen on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "http://" + addr
}

// examples/trace-replay.hcl against the mock: its window (the sample trace's first 30 s)
// is replayed row by row and the rest is cut, with a note saying where.
func TestApplyTraceReplayExample(t *testing.T) {
	// The "model" stops by itself after 2 tokens: only the example's engine extensions
	// (ignore_eos, min_tokens) give each row its output_length.
	srv := httptest.NewServer(mockserver.New(mockserver.Config{EOSAt: 2}))
	defer srv.Close()
	p, cells := loadPlanFile(t, "../examples/trace-replay.hcl", "url="+srv.URL+"/v1", "model=mock", "speedup=20")
	var window []dataset.Row
	total := 0
	if _, err := dataset.Scan(p.Datasets[0].Spec, func(r dataset.Row) error {
		total++
		if r.Timestamp < 30*time.Second {
			window = append(window, r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, recs := runSamples(t, p, cells)
	row := res.Rows[0]
	if row.Status != ledger.StatusOK || len(recs) != len(window) || row.Succeeded != len(window) {
		t.Fatalf("status %s, %d/%d requests for a window of %d rows", row.Status, row.Succeeded, len(recs), len(window))
	}
	cut := fmt.Sprintf(": %d of %d rows replayed", len(window), total)
	if !strings.Contains(row.Notes, "trace cut at ") || !strings.Contains(row.Notes, cut) {
		t.Fatalf("notes %q, want the cut %q", row.Notes, cut)
	}
	asked := 0
	for _, r := range recs {
		want := window[requestIndex(t, r.ID)]
		if r.OutputTokens != want.OutputLength || math.Abs(float64(r.PromptTokens-want.InputLength)) > 0.03*float64(want.InputLength) {
			t.Fatalf("%s: %d prompt and %d output tokens, the trace says %d and %d", r.ID, r.PromptTokens, r.OutputTokens, want.InputLength, want.OutputLength)
		}
		if r.PromptTokensAsked != want.InputLength {
			t.Fatalf("%s: asked %d prompt tokens, the trace says %d", r.ID, r.PromptTokensAsked, want.InputLength)
		}
		asked += want.InputLength
	}
	// The row's "asked" is the trace's, not the workload's prompt_tokens (128).
	if want := int(math.Round(float64(asked) / float64(len(recs)))); row.PromptTokensRequested != want {
		t.Errorf("prompt tokens asked %d, want the trace's mean %d", row.PromptTokensRequested, want)
	}
}

// A replay that cannot run as asked stops before the server sees a request: a window
// that starts past the trace's end, or an out-of-order trace (file:line).
func TestReplayRefusesBeforeSending(t *testing.T) {
	data, _ := seededTrace(20, 15, 3) // about 1.3 s of trace time
	for _, tc := range []struct {
		name, start, data, want string
	}{
		{"window past the end", "1m", data, "holds none of the trace's rows"},
		{"out of order", "0s", "{\"timestamp\": 5, \"input_length\": 9, \"output_length\": 2, \"hash_ids\": []}\n" +
			"{\"timestamp\": 4, \"input_length\": 9, \"output_length\": 2, \"hash_ids\": []}\n", "trace.jsonl:2: timestamp 4 is before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mock := mockserver.New(mockserver.Config{})
			srv := httptest.NewServer(mock)
			defer srv.Close()
			src := strings.Replace(replayPlan, "speedup = 10", "speedup = 10\n    start = \""+tc.start+"\"", 1)
			// The plan is loaded with a good trace and the case's written after: validate
			// refuses a trace out of order itself (plan/datasetscan.go), and apply's own
			// check is for a file changed since, or too large for validate to read.
			p, cells := loadPlan(t, src, srv.URL, "trace.jsonl", data)
			if err := os.WriteFile(p.Datasets[0].Spec.Path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), Options{Plan: p, Cells: cells, NewBackend: newBackend, GPU: gpu.Open(), Quiet: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if n := mock.Stats().Requests; n != 0 {
				t.Fatalf("the server got %d requests", n)
			}
		})
	}
}

// The workload's requests cap the rows replayed, and the note says where the trace
// was cut.
func TestReplayCutByRequests(t *testing.T) {
	data, _ := seededTrace(40, 15, 5)
	srv := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer srv.Close()
	src := strings.Replace(replayPlan, "temperature = 0", "temperature = 0\n  requests = 25", 1)
	p, cells := loadPlan(t, src, srv.URL, "trace.jsonl", data)
	res, recs := runSamples(t, p, cells)
	if len(recs) != 25 || !strings.Contains(res.Rows[0].Notes, ": 25 of 40 rows replayed") {
		t.Fatalf("%d requests, notes %q", len(recs), res.Rows[0].Notes)
	}
}

// A short trace replayed on the real Ollama's /v1: every row is sent at its time with
// its own prompt length, on the server's own count.
func TestRealOllamaReplay(t *testing.T) {
	s := realOllama(t)
	var trace strings.Builder
	ins := []int{160, 240, 320, 200, 280, 400}
	for i, in := range ins {
		fmt.Fprintf(&trace, "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%d]}\n", i*150, in, 4+i, i)
	}
	src := strings.NewReplacer(`["mock"]`, `["tiny"]`, `model_id = "mock"`, `model_id = "tiny"`,
		"speedup = 10", "speedup = 1").Replace(replayPlan)
	p, cells := loadPlan(t, src, strings.TrimSuffix(s.URL, "/"), "trace.jsonl", trace.String())
	res, recs := runSamples(t, p, cells)
	if r := res.Rows[0]; r.Status != ledger.StatusOK || r.Succeeded != len(ins) || len(recs) != len(ins) {
		t.Fatalf("status %s, %d/%d ok, %d records", r.Status, r.Succeeded, r.Requests, len(recs))
	}
	for _, r := range recs {
		n := requestIndex(t, r.ID)
		if !r.Paced || r.Scheduled != time.Duration(n)*150*time.Millisecond {
			t.Fatalf("%s: scheduled %v, want %v", r.ID, r.Scheduled, time.Duration(n)*150*time.Millisecond)
		}
		// The tiny model's byte vocabulary makes a filler word about 4 tokens: a prompt
		// can only land within a word of its length.
		if d := math.Abs(float64(r.PromptTokens - ins[n])); d > 0.05*float64(ins[n])+5 {
			t.Errorf("%s: %d prompt tokens on Ollama's count, the trace says %d", r.ID, r.PromptTokens, ins[n])
		}
	}
}

// A replay under CPU contention goes out late, and its row says so: the rate it
// delivered still matches the trace's, which is all the verdict saw before
// fidelity_lag_ms. The default limit (1 ms) is the one judged. The server's own arrival
// times (its handler's reading, so its own delays are in them too) are logged beside
// the client's send lag.
//
// The contention is a busy loop per core in processes of their own and, in the client's
// own process, a spinning goroutine per P: a load generator busy with other work. The
// processes alone do not make the replay reliably late (the kernel favours a thread
// that wakes from sleep over a loop that has run its share: send lag p99 was 0.86 ms in
// one run of three under them), but a pacing timer that falls due while every P spins
// waits for the Go scheduler to preempt one (sysmon, every 10 ms or so). The mock runs
// in a process of its own, so its clock is the contended client's only through the sends.
func TestReplayUnderContentionIsLate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a replay against busy loops")
	}
	for range max(2, runtime.NumCPU()) {
		busy := exec.Command("sh", "-c", "while :; do :; done")
		if err := busy.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { busy.Process.Kill(); busy.Wait() })
	}
	var stop atomic.Bool
	var spinning sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		spinning.Go(func() {
			for !stop.Load() {
			}
		})
	}
	t.Cleanup(func() { stop.Store(true); spinning.Wait() })
	errs, row := replayArrivals(t, ownProcessMock(t))
	p99 := errs[len(errs)*99/100]
	t.Logf("arrivals off the trace by %v at p99 (max %v); send lag p99 %.3f ms (max %.3f); fidelity %s; notes %q",
		p99, errs[len(errs)-1], row.SendLag.P99*1e3, row.SendLag.Max*1e3, row.Fidelity, row.Notes)
	limit := plan.DefaultFidelityLag.Seconds()
	if !(row.SendLag.P99 > limit) {
		t.Fatalf("send lag p99 %.3f ms under a busy loop per core: the contention did not make the replay late, so this test judged nothing", row.SendLag.P99*1e3)
	}
	lateNote := "late: send lag p99 "
	switch row.Fidelity {
	case ledger.FidelityLate:
	case ledger.FidelityClientBound, ledger.FidelityShort:
		lateNote = "; and late: send lag p99 " // a shortfall outranks lateness and says both
	default:
		t.Fatalf("fidelity %q with send lag p99 %.3f ms above the default %v (notes %q)", row.Fidelity, row.SendLag.P99*1e3, plan.DefaultFidelityLag, row.Notes)
	}
	if !strings.Contains(row.Notes, lateNote) || !strings.Contains(row.Notes, "above fidelity_lag_ms 1") {
		t.Fatalf("fidelity %q, notes %q lack the send lag figures", row.Fidelity, row.Notes)
	}
}
