package apply

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/connect"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/selfbench"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/stats"
)

// mockBackend starts an in-process mock server and the real OpenAI client against it.
func mockBackend(b *testing.B, cfg mockserver.Config) (*mockserver.Server, backends.Backend) {
	srv := mockserver.New(cfg)
	url, stop, err := srv.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)
	be, err := connect.New(backends.Config{Kind: "openai", Name: "openai.bench", URL: url + "/v1", EngineExtensions: true,
		Timeouts: backends.Timeouts{Connect: 10 * time.Second, Idle: time.Minute}})
	if err != nil {
		b.Fatal(err)
	}
	return srv, be
}

// BenchmarkSlowSink shows that side work on finished requests cannot delay a request's
// timing: the level's sink (raw log, statistics) plus a 1 ms sleep per record (a slow
// disk; it falls behind the ~1,000 requests/s here, so the queue fills and workers wait
// between requests) against no sleep. The mock is scripted at TTFT 20 ms, TPOT 2 ms;
// the client's TTFT and TPOT errors against the times the mock wrote its chunks must
// stay the same.
//
//	go test -run '^$' -bench SlowSink -benchtime 1x ./apply/
func BenchmarkSlowSink(b *testing.B) {
	const tokens = 20
	srv, be := mockBackend(b, mockserver.Config{TTFT: 20 * time.Millisecond, TPOT: 2 * time.Millisecond,
		OutputTokens: tokens, TokensPerChunk: 1, RecordTruth: true})
	for _, sleep := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprintf("sink-sleep=%s", sleep), func(b *testing.B) {
			prompts := &executor.Prompts{Words: 4, Salt: "slow-sink-" + sleep.String()}
			lv := executor.LevelSpec{Concurrency: 64, Requests: 2000, RepeatRuns: 1, Prompts: prompts,
				Request: backends.Request{Model: "mock", MaxTokens: tokens, ForceMaxTokens: true}}
			var an selfbench.LevelReport
			var sum stats.Runs
			for b.Loop() {
				srv.Summaries(true)
				sink := newLevelSink(ledger.NewRequestLog(io.Discard), ledger.RequestRecord{}, stats.Target{MaxTokens: tokens},
					func(executor.Event) { time.Sleep(sleep) })
				res := executor.RunLevel(context.Background(), be, lv, executor.Options{OnRequest: sink.add})
				run := res.Runs[0]
				an = selfbench.Analyze(run.Samples, srv.Summaries(true), prompts, run.Window())
				sum = stats.SummarizeRuns(sink.statsRuns(res), sink.target)
			}
			if an.Failed > 0 || an.Matched != an.Requests {
				b.Fatalf("%d failed, %d of %d matched to the truth", an.Failed, an.Matched, an.Requests)
			}
			b.ReportMetric(sum.Pooled.TTFT.Mean*1000, "ttft-mean-ms")
			b.ReportMetric(sum.Pooled.TPOT.Mean*1000, "tpot-mean-ms")
			b.ReportMetric(float64(an.TTFT.P50)/1e3, "ttft-err-p50-µs")
			b.ReportMetric(float64(an.TTFT.P99)/1e3, "ttft-err-p99-µs")
			b.ReportMetric(float64(an.TPOT.P50)/1e3, "tpot-err-p50-µs")
			b.ReportMetric(an.Window.Seconds(), "window-s")
		})
	}
}

var (
	soakRequests = flag.Int("soak.requests", 1_000_000, "requests BenchmarkSoakRSS sends")
	soakTokens   = flag.Int("soak.tokens", 512, "output tokens of each BenchmarkSoakRSS request")
)

// BenchmarkSoakRSS runs one measured run of -soak.requests requests of -soak.tokens
// tokens through the level's real sink (JSON lines encoded, then discarded; statistics
// accumulated) against an instant mock, and reports the process's peak RSS, with the
// RSS curve at every 10% of the requests in the log: it must stay flat after warm-up.
//
//	go test -run '^$' -bench SoakRSS -benchtime 1x -timeout 1h ./apply/
func BenchmarkSoakRSS(b *testing.B) {
	n, tokens := *soakRequests, *soakTokens
	_, be := mockBackend(b, mockserver.Config{OutputTokens: tokens, TokensPerChunk: 1})
	lv := executor.LevelSpec{Concurrency: 64, Requests: n, RepeatRuns: 1, Prompts: &executor.Prompts{Words: 4},
		Request: backends.Request{Model: "mock", MaxTokens: tokens, ForceMaxTokens: true}}
	for b.Loop() {
		var done int
		var curve []string
		sink := newLevelSink(ledger.NewRequestLog(io.Discard), ledger.RequestRecord{}, stats.Target{MaxTokens: tokens},
			func(executor.Event) {
				if done++; done%max(n/10, 1) == 0 {
					curve = append(curve, fmt.Sprintf("%d%%: %d MB", done*100/n, procStatusKB(b, "VmRSS")/1024))
				}
			})
		res := executor.RunLevel(context.Background(), be, lv, executor.Options{OnRequest: sink.add, DropSamples: true})
		sum := stats.SummarizeRuns(sink.statsRuns(res), sink.target)
		if sum.Pooled.Succeeded != n || sum.Pooled.OutputTokens != n*tokens {
			b.Fatalf("%d of %d succeeded, %d tokens", sum.Pooled.Succeeded, n, sum.Pooled.OutputTokens)
		}
		b.Logf("RSS at %s; ITL p50 %.1fµs over %d gaps", strings.Join(curve, ", "), sum.Pooled.ITL.P50*1e6, sum.Pooled.ITL.N)
	}
	b.ReportMetric(float64(procStatusKB(b, "VmHWM"))/1024, "peak-rss-MB")
	b.ReportMetric(float64(n), "requests")
}

// procStatusKB reads one "Name: N kB" line of /proc/self/status.
func procStatusKB(b *testing.B, name string) int {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	b.Fatalf("no %s in /proc/self/status", name)
	return 0
}
