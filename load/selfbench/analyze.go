package selfbench

import (
	"math"
	"slices"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

// LevelReport is what one concurrency level measured.
type LevelReport struct {
	Streams int
	// Agents is how many load agents sent the level (1: this process).
	Agents   int
	Requests int // sent in the measured run
	Failed   int // samples with an error
	Matched  int // successful samples found in the server's truth
	Tokens   int // output tokens of successful requests (the server's count)
	// Window is first request start to last request end; TokensPerSec is Tokens over it.
	Window       time.Duration
	TokensPerSec float64
	// IdealTokensPerSec is what the schedule allows: streams × tokens / (TTFT + (tokens−1)·TPOT).
	IdealTokensPerSec float64
	// CPU is the process's user+system CPU time during the measured run (with load
	// agents, theirs too); CPUIncludesServer says the mock shared the process.
	CPU               time.Duration
	CPUPer1kTokens    time.Duration
	CPUIncludesServer bool
	// TTFT and TPOT are the client's errors against the truth, per matched request:
	// client-measured − server-emitted. The TTFT truth is the first chunk's write (after
	// its flush) less the client's own request start, so the error is how late the
	// client stamped the chunk; the TPOT truth is the server's (last − first write) /
	// (tokens − 1).
	TTFT, TPOT Error
	// SendP50 and SendP99 are request start (client) to the server's receipt of the
	// request: the client's writing plus the server's accepting, part of every TTFT.
	SendP50, SendP99 time.Duration
	// WriteP50 and WriteP99 are the client's part of it: request start to the request
	// fully written (Sample.SendDelay, the rows' send_delay: building the HTTP request,
	// taking a pooled connection, the transport's write goroutine getting a core and
	// writing). NewConnections counts the requests that dialled instead of reusing one.
	WriteP50, WriteP99 time.Duration
	NewConnections     int
	// ConnectP50 and ConnectMax are the set-up time (dial, TLS) of those requests: inside
	// their TTFT and their send.
	ConnectP50, ConnectMax time.Duration
	// HandlerP50 and HandlerP99 are the rest of send: the request fully written (client)
	// to the server's handler entered, per request: the kernel's delivery and the
	// server's accepting, reading and parsing, none of it the client's.
	HandlerP50, HandlerP99 time.Duration
	// TTFTLate and TTFTEarly split the TTFTs outside Tolerance by sign. Late: the client
	// stamped the first chunk after the server wrote it by more than the tolerance. On
	// loopback that is the client's: its reader was not reading when the chunk came, and
	// the read that took it took the chunks queued meanwhile too, under one receive stamp,
	// the newest one's. Early: the server's write stamp was late (its goroutine lost the core
	// between the write and reading its clock), the server's.
	TTFTLate, TTFTEarly int
	// GCCycles, GCCPU and AssistCPU are the client process's garbage collections during
	// the measured run, their CPU and the part of it charged to allocating goroutines
	// (runtime/metrics); AllocsPerToken and BytesPerToken its heap allocations per
	// streamed token. SchedLagP99 is the p99 of how long its goroutines waited, runnable,
	// before running (selfcheck). All are the client's alone unless CPUIncludesServer.
	GCCycles                      int
	GCCPU, AssistCPU              time.Duration
	AllocsPerToken, BytesPerToken float64
	SchedLagP99                   time.Duration
	// Procs is the client's GOMAXPROCS during the run (executor.LevelProcs of the process's
	// own, unless the environment set it).
	Procs int
	// ServerLate is the server's own emission error against its schedule: the median of
	// per-request median lateness, and the 99th percentile of per-request worst lateness.
	ServerLateP50, ServerLateMaxP99 time.Duration
}

// Error is the distribution of a client measurement's error against the truth.
type Error struct {
	P50    time.Duration // median signed error
	P99    time.Duration // 99th percentile of the absolute error
	P50Pct float64       // median signed error, % of the truth
	P99Pct float64       // 99th percentile of the absolute error, % of the truth
	// Within is the fraction of requests within Tolerance of the truth.
	Within float64
}

// Tolerance is the error allowed a measurement of true value d: 2% of it, or 0.5 ms when
// that is larger (loopback delivery alone takes tens of microseconds).
func Tolerance(d time.Duration) time.Duration {
	return max(d/50, 500*time.Microsecond)
}

// KeptUp reports whether the client measured faithfully at this level: no failed
// request, every sample found in the truth, and 99% of TTFTs and TPOTs within Tolerance.
func (l LevelReport) KeptUp() bool {
	return l.Failed == 0 && l.Matched == l.Requests && l.Requests > 0 &&
		l.TTFT.Within >= 0.99 && l.TPOT.Within >= 0.99
}

// promptKeyLen is the length of the unique prefix executor.Prompts puts first.
const promptKeyLen = len("[0123456789abcdef]")

func promptKey(s string) string {
	if len(s) < promptKeyLen {
		return s
	}
	return s[:promptKeyLen]
}

// Analyze holds samples against the server's summaries, matched by the unique prompt
// prefix prompts gave each request.
func Analyze(samples []backends.Sample, sums []mockserver.Summary, prompts *executor.Prompts, window time.Duration) LevelReport {
	l := LevelReport{Requests: len(samples), Window: window}
	byKey := make(map[string]*mockserver.Summary, len(sums))
	for i := range sums {
		byKey[promptKey(sums[i].Prompt)] = &sums[i]
	}
	var ttft, tpot errs
	var late50, lateMax, send, write, conn, handler []time.Duration
	for i := range samples {
		s := &samples[i]
		if !s.OK() {
			l.Failed++
			continue
		}
		l.Tokens += s.OutputTokens
		if d, ok := s.SendDelay(); ok {
			write = append(write, d)
		}
		if s.Connect > 0 {
			l.NewConnections++
			conn = append(conn, s.Connect)
		}
		t, ok := byKey[promptKey(prompts.For(s.ID))]
		if !ok || !t.Complete {
			continue
		}
		l.Matched++
		late50 = append(late50, t.LateP50)
		lateMax = append(lateMax, t.LateMax)
		send = append(send, t.Received.Sub(s.Start))
		if s.Wrote > 0 {
			handler = append(handler, t.Received.Sub(s.Start)-s.Wrote)
		}
		l.againstTruth(s, t, &ttft, &tpot)
	}
	if window > 0 {
		l.TokensPerSec = float64(l.Tokens) / window.Seconds()
	}
	l.TTFT, l.TPOT = ttft.summary(), tpot.summary()
	l.ServerLateP50 = quantile(late50, 0.5)
	l.ServerLateMaxP99 = quantile(lateMax, 0.99)
	l.SendP50, l.SendP99 = quantile(send, 0.5), quantile(send, 0.99)
	l.WriteP50, l.WriteP99 = quantile(write, 0.5), quantile(write, 0.99)
	l.ConnectP50, l.ConnectMax = quantile(conn, 0.5), quantile(conn, 1)
	l.HandlerP50, l.HandlerP99 = quantile(handler, 0.5), quantile(handler, 0.99)
	return l
}

// againstTruth adds a request's TTFT and TPOT errors against the times the mock wrote
// its chunks (t), counting a TTFT outside tolerance as late or early.
func (l *LevelReport) againstTruth(s *backends.Sample, t *mockserver.Summary, ttft, tpot *errs) {
	if got, ok := s.TTFT(); ok && !t.FirstWritten.IsZero() {
		truth := t.FirstWritten.Sub(s.Start)
		ttft.add(got, truth)
		if d := got - truth; d > Tolerance(max(truth, 0)) {
			l.TTFTLate++
		} else if -d > Tolerance(max(truth, 0)) {
			l.TTFTEarly++
		}
	}
	if got, ok := s.TPOT(); ok && t.TPOT > 0 {
		tpot.add(got, t.TPOT)
	}
}

// setRuntime records the client process's runtime figures over the measured run.
func (l *LevelReport) setRuntime(rt runtimeStats, self selfcheck.Report) {
	l.GCCycles, l.GCCPU, l.AssistCPU = int(rt.gcCycles), rt.gcCPU, rt.assist
	if l.Tokens > 0 {
		l.AllocsPerToken = float64(rt.allocs) / float64(l.Tokens)
		l.BytesPerToken = float64(rt.allocB) / float64(l.Tokens)
	}
	l.SchedLagP99 = self.LagP99
}

// errs collects signed errors, absolute errors and relative errors.
type errs struct {
	signed, abs []time.Duration
	pct, absPct []float64
	within      int
}

func (e *errs) add(got, truth time.Duration) {
	d := got - truth
	a := d
	if a < 0 {
		a = -a
	}
	p := 100 * float64(d) / float64(truth)
	e.signed, e.abs = append(e.signed, d), append(e.abs, a)
	e.pct, e.absPct = append(e.pct, p), append(e.absPct, math.Abs(p))
	if a <= Tolerance(max(truth, 0)) {
		e.within++
	}
}

func (e *errs) summary() Error {
	if len(e.signed) == 0 {
		return Error{}
	}
	return Error{P50: quantile(e.signed, 0.5), P99: quantile(e.abs, 0.99),
		P50Pct: quantile(e.pct, 0.5), P99Pct: quantile(e.absPct, 0.99),
		Within: float64(e.within) / float64(len(e.signed))}
}

// quantile is the nearest-rank quantile q of xs (sorted in place); zero when empty.
func quantile[T time.Duration | float64](xs []T, q float64) T {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
