package apply

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/load/fleet"
	"github.com/planrun/planrun/stats"
)

var (
	leadRequests = flag.Int("lead.requests", 1_000_000, "requests BenchmarkLeadRSS merges")
	leadAgents   = flag.Int("lead.agents", 4, "agents BenchmarkLeadRSS merges from")
	leadTokens   = flag.Int("lead.tokens", 16, "output tokens (chunks) of each BenchmarkLeadRSS request")
)

// instant answers every request at once with a stream of tokens chunks 1 µs apart: an
// agent that sends as fast as its process can make records, so that the lead,
// not a server, sets the pace of BenchmarkLeadRSS. (Test code: the agents of
// this benchmark are this test binary with PLANRUN_TEST_AGENT_BACKEND=instant.)
type instant struct {
	backends.Backend
	tokens int
}

func (b instant) Do(_ context.Context, req backends.Request) backends.Sample {
	s := backends.Sample{ID: req.ID, Start: time.Now(), OutputTokens: b.tokens, Chunks: b.tokens, PromptTokens: 16,
		TokenSource: backends.TokensUsage, FinishReason: "length"}
	s.ChunkArrivals = make([]time.Duration, b.tokens)
	for i := range s.ChunkArrivals {
		s.ChunkArrivals[i] = time.Duration(100+i) * time.Microsecond
	}
	s.FirstToken, s.FirstAnswer = s.ChunkArrivals[0], s.ChunkArrivals[0]
	s.End = s.ChunkArrivals[b.tokens-1]
	s.BodyEnd = s.End
	return s
}

// BenchmarkLeadRSS measures what a lead holds while it merges the records
// of -lead.requests requests from -lead.agents agents (processes: this
// test binary in its agent mode, answering at once): the real fleet reading and moving
// every record, and the level's real sink (each record encoded as a requests.jsonl line,
// then discarded; statistics accumulated; one measured run). It reports this process's
// peak RSS, and its RSS at every tenth of the records: past ITLExactGaps requests the
// percentiles fold into sketches and the in-flight load into a timeline, so it must
// stop growing.
//
//	go test -run '^$' -bench LeadRSS -benchtime 1x -timeout 1h ./apply/ -lead.requests 10000000
func BenchmarkLeadRSS(b *testing.B) {
	n, tokens := *leadRequests, *leadTokens
	os.Setenv("PLANRUN_TEST_AGENT", "1")
	os.Setenv("PLANRUN_TEST_AGENT_BACKEND", fmt.Sprintf("instant:%d", tokens))
	defer os.Unsetenv("PLANRUN_TEST_AGENT")
	defer os.Unsetenv("PLANRUN_TEST_AGENT_BACKEND")
	for b.Loop() {
		f, err := fleet.Start(context.Background(), fleet.Options{Agents: *leadAgents, Launcher: fleet.Local{Command: []string{os.Args[0]}}, LogDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		p := &executor.Prompts{Words: 4, Salt: "lead"}
		if err := f.Assign(context.Background(), backends.Config{Kind: "openai", Name: "openai.instant", URL: "http://127.0.0.1:1/v1"}, p, nil, 0,
			"bench", "bench", "", nil); err != nil {
			f.Close()
			b.Fatal(err)
		}
		runtime.GC()
		base := procStatusKB(b, "VmRSS")
		restore := fleet.CollectSooner() // as apply's measure does for a fleet's level
		target := stats.Target{MaxTokens: tokens, Concurrency: 64}
		var done int
		var curve []string
		start := time.Now()
		sink := newLevelSink(ledger.NewRequestLog(io.Discard), ledger.RequestRecord{}, target, func(executor.Event) {
			if done++; done%max(n/10, 1) == 0 {
				curve = append(curve, fmt.Sprintf("%d%%: %d MB", done*100/n, procStatusKB(b, "VmRSS")/1024))
			}
		})
		lv := executor.LevelSpec{Concurrency: 64, Requests: n, RepeatRuns: 1, Prompts: p,
			Request: backends.Request{Model: "mock", MaxTokens: tokens}}
		res, _, err := f.RunLevel(context.Background(), lv, executor.Options{OnRequest: sink.add})
		took := time.Since(start)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		sum := stats.SummarizeRuns(sink.statsRuns(res), sink.target)
		restore()
		if sum.Pooled.Succeeded != n {
			b.Fatalf("%d of %d merged", sum.Pooled.Succeeded, n)
		}
		b.Logf("%d records from %d agents in %s (%.0f/s); RSS before %d MB, at %s; TTFT p50 %v (relative error %v), ITL over %d gaps, in flight mean %.1f (resolution %v s)",
			n, *leadAgents, took.Round(time.Millisecond), float64(n)/took.Seconds(), base/1024, strings.Join(curve, ", "),
			sum.Pooled.TTFT.P50, sum.Pooled.RelativeError, sum.Pooled.ITL.N, sum.Pooled.Delivered.InFlightMean, sum.Pooled.Delivered.Resolution)
		b.ReportMetric(float64(n)/took.Seconds(), "records/s")
	}
	b.ReportMetric(float64(procStatusKB(b, "VmHWM"))/1024, "peak-rss-MB")
	b.ReportMetric(float64(n), "requests")
}
