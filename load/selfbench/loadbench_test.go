package selfbench

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/servers/mockserver"
	"github.com/planrun/planrun/telemetry/selfcheck"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// pair builds a client sample and the server's summary of the same request, with the
// client's figures off the truth by ttftErr and tpotErr.
func pair(p *executor.Prompts, id string, ttftErr, tpotErr time.Duration) (backends.Sample, mockserver.Summary) {
	const tokens = 11
	send := 100 * time.Microsecond
	ttft, tpot := 20*time.Millisecond, 5*time.Millisecond
	sum := mockserver.Summary{ID: "req-x", Prompt: p.For(id)[:40], Status: 200, Complete: true, Tokens: tokens,
		Chunks: tokens, Received: t0.Add(send), FirstWritten: t0.Add(send + ttft), TTFT: ttft, TPOT: tpot,
		LateP50: 30 * time.Microsecond, LateMax: 90 * time.Microsecond}
	first := send + ttft + ttftErr
	s := backends.Sample{ID: id, Start: t0, FirstToken: first, End: first + (tokens-1)*(tpot+tpotErr),
		OutputTokens: tokens, Chunks: tokens, TokenSource: backends.TokensUsage}
	return s, sum
}

func TestAnalyze(t *testing.T) {
	p := &executor.Prompts{Words: 12, Salt: "t"}
	var samples []backends.Sample
	var sums []mockserver.Summary
	// 99 requests read 40µs late with exact TPOT, one reads 2ms late with TPOT 1ms off.
	for i := 0; i < 100; i++ {
		te, pe := 40*time.Microsecond, time.Duration(0)
		if i == 99 {
			te, pe = 2*time.Millisecond, time.Millisecond
		}
		s, sum := pair(p, "run0/req"+string(rune('A'+i%26))+string(rune('a'+i/26)), te, pe)
		samples, sums = append(samples, s), append(sums, sum)
	}
	failed := backends.Sample{ID: "run0/bad", Start: t0, Err: &backends.Error{Class: backends.ErrRefused}}
	unmatched, _ := pair(p, "run0/nobody", 0, 0)
	samples = append(samples, failed, unmatched)

	l := Analyze(samples, sums, p, time.Second)
	if l.Requests != 102 || l.Failed != 1 || l.Matched != 100 || l.Tokens != 101*11 {
		t.Fatalf("requests %d failed %d matched %d tokens %d", l.Requests, l.Failed, l.Matched, l.Tokens)
	}
	if l.TokensPerSec != 101*11 {
		t.Errorf("tok/s %v", l.TokensPerSec)
	}
	// TTFT truth is 20.1ms (send + server TTFT) from the client's start.
	if l.TTFT.P50 != 40*time.Microsecond || l.TTFT.P99 != 40*time.Microsecond || l.TTFT.Within != 0.99 {
		t.Errorf("TTFT error %+v", l.TTFT)
	}
	if want := 100 * 40e3 / 20.1e6; l.TTFT.P50Pct < want*0.999 || l.TTFT.P50Pct > want*1.001 {
		t.Errorf("TTFT p50 %% = %v, want %v", l.TTFT.P50Pct, want)
	}
	if l.TPOT.P50 != 0 || l.TPOT.Within != 0.99 {
		t.Errorf("TPOT error %+v", l.TPOT)
	}
	if l.SendP50 != 100*time.Microsecond || l.ServerLateP50 != 30*time.Microsecond || l.ServerLateMaxP99 != 90*time.Microsecond {
		t.Errorf("send %v late %v/%v", l.SendP50, l.ServerLateP50, l.ServerLateMaxP99)
	}
	if l.KeptUp() {
		t.Error("a level with a failure and an unmatched request kept up")
	}
}

func TestTolerance(t *testing.T) {
	for _, tc := range []struct{ truth, want time.Duration }{
		{5 * time.Millisecond, 500 * time.Microsecond},
		{25 * time.Millisecond, 500 * time.Microsecond},
		{100 * time.Millisecond, 2 * time.Millisecond},
	} {
		if got := Tolerance(tc.truth); got != tc.want {
			t.Errorf("Tolerance(%v) = %v, want %v", tc.truth, got, tc.want)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, tc := range []struct{ q, want float64 }{{0.5, 3}, {0.99, 5}, {0, 1}, {1, 5}} {
		if got := quantile(xs, tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if quantile([]float64(nil), 0.5) != 0 {
		t.Error("quantile of nothing")
	}
}

// TestRunInProcess drives the real client against an in-process mock at two small
// levels: every request must be matched to its truth and every token counted.
func TestRunInProcess(t *testing.T) {
	for _, proto := range []string{"openai", "ollama"} {
		t.Run(proto, func(t *testing.T) {
			cfg := Config{Levels: []int{1, 8}, TTFT: 2 * time.Millisecond, TPOT: time.Millisecond, Tokens: 5,
				Duration: 12 * time.Millisecond, Protocol: proto}
			srv := mockserver.New(cfg.MockConfig())
			url, stop, err := srv.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			var seen []int
			levels, err := Run(context.Background(), cfg, InProcess(srv, url), func(l LevelReport) { seen = append(seen, l.Streams) })
			if err != nil {
				t.Fatal(err)
			}
			if len(levels) != 2 || len(seen) != 2 {
				t.Fatalf("%d levels, %d reported", len(levels), len(seen))
			}
			for _, l := range levels {
				// 12ms of 6ms requests: two rounds per stream.
				if l.Requests != 2*l.Streams || l.Failed != 0 || l.Matched != l.Requests || l.Tokens != 5*l.Requests {
					t.Errorf("%d streams: requests %d failed %d matched %d tokens %d", l.Streams, l.Requests, l.Failed, l.Matched, l.Tokens)
				}
				if want := float64(l.Streams*5) / 0.006; l.IdealTokensPerSec < want*0.999 || l.IdealTokensPerSec > want*1.001 {
					t.Errorf("ideal %v, want %v", l.IdealTokensPerSec, want)
				}
				// The executor raised the client's processors for the level, and selfbench says so.
				if want := executor.LevelProcs(runtime.GOMAXPROCS(0)); os.Getenv("GOMAXPROCS") == "" && l.Procs != want {
					t.Errorf("%d streams: client procs %d, want %d", l.Streams, l.Procs, want)
				}
				if !l.CPUIncludesServer || l.CPU <= 0 {
					t.Errorf("cpu %v in-process %v", l.CPU, l.CPUIncludesServer)
				}
			}
			var out bytes.Buffer
			if err := Write(&out, levels, true); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(out.String(), "\n"); lines != 4 || !strings.HasPrefix(out.String(), "| streams |") {
				t.Errorf("markdown table:\n%s", out.String())
			}
		})
	}
}

// TestAnalyzeSplits checks the split of send into the client's write and the rest up to the
// server's handler, the new connections' set-up, and the split of out-of-tolerance TTFTs
// into the client's late stamps and the server's late write stamps.
func TestAnalyzeSplits(t *testing.T) {
	p := &executor.Prompts{Words: 12, Salt: "s"}
	var samples []backends.Sample
	var sums []mockserver.Summary
	// Truth 20.1 ms, so the tolerance is 0.5 ms: 3 late by 2 ms, 1 early by 1 ms, 6 within.
	errs := []time.Duration{2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, -time.Millisecond,
		400 * time.Microsecond, -400 * time.Microsecond, 0, 0, 0, 0}
	for i, e := range errs {
		s, sum := pair(p, "run0/req"+string(rune('a'+i)), e, 0)
		s.Wrote = 30 * time.Microsecond // send is 100 µs: 70 µs to the handler
		if i == 0 {
			// A request that dialled: 60 µs of set-up, written 80 µs in, handled at 100 µs.
			s.Connect, s.Wrote = 60*time.Microsecond, 80*time.Microsecond
		}
		samples, sums = append(samples, s), append(sums, sum)
	}
	l := Analyze(samples, sums, p, time.Second)
	if l.TTFTLate != 3 || l.TTFTEarly != 1 {
		t.Errorf("late %d early %d, want 3 and 1", l.TTFTLate, l.TTFTEarly)
	}
	if l.HandlerP50 != 70*time.Microsecond || l.HandlerP99 != 70*time.Microsecond {
		t.Errorf("to handler %v / %v, want 70µs", l.HandlerP50, l.HandlerP99)
	}
	// The dialled request's write is 20 µs (80 − 60), the others' 30 µs.
	if l.WriteP50 != 30*time.Microsecond || l.NewConnections != 1 || l.ConnectP50 != 60*time.Microsecond || l.ConnectMax != 60*time.Microsecond {
		t.Errorf("write p50 %v, %d new connections, set-up %v / %v", l.WriteP50, l.NewConnections, l.ConnectP50, l.ConnectMax)
	}
	l.setRuntime(runtimeStats{gcCycles: 2, gcCPU: 3 * time.Millisecond, assist: time.Millisecond, allocs: 55, allocB: 1100},
		selfcheck.Report{LagP99: 7 * time.Millisecond})
	if l.Tokens != 110 || l.AllocsPerToken != 0.5 || l.BytesPerToken != 10 || l.GCCycles != 2 || l.SchedLagP99 != 7*time.Millisecond {
		t.Errorf("runtime figures %+v", l)
	}
	row := row(l)
	if len(row) != len(header) {
		t.Fatalf("%d cells under %d columns", len(row), len(header))
	}
	for i, want := range map[string]string{"TTFT out late/early": "3/1", "to handler p50/p99": "70µs/70µs",
		"conn setup p50/max": "60µs/60µs", "client GC n/cpu/assist": "2/3.0ms/1.0ms", "allocs/tok": "0.50", "client sched lag p99": "7000µs"} {
		if j := slices.Index(header, i); j < 0 || row[j] != want {
			t.Errorf("column %q: %q, want %q", i, row[max(j, 0)], want)
		}
	}
}

// TestReadRuntime reads the client's runtime counters: allocating and collecting moves them.
func TestReadRuntime(t *testing.T) {
	r0 := readRuntime()
	var keep [][]byte
	for i := 0; i < 1000; i++ {
		keep = append(keep, make([]byte, 1024))
	}
	runtime.GC()
	d := readRuntime().sub(r0)
	if d.allocs < 1000 || d.allocB < 1000*1024 || d.gcCycles < 1 || len(keep) != 1000 {
		t.Errorf("after 1000 allocations of 1 KiB and a GC: %+v", d)
	}
}
