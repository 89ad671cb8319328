package apply

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/stats"
)

// The sink logs every request, warm-ups included, but counts only measured ones in their
// run's statistics, and remembers the first measured failure for the row's note. A paced
// request's schedule goes into its record and its send lag into the statistics.
func TestLevelSink(t *testing.T) {
	var buf bytes.Buffer
	log := ledger.NewRequestLog(&buf)
	var told int
	s := newLevelSink(log, ledger.RequestRecord{CellID: "c", Concurrency: 4}, stats.Target{MaxTokens: 2},
		func(executor.Event) { told++ })
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ok := backends.Sample{ID: "ok", Start: t0, FirstToken: time.Millisecond, End: 3 * time.Millisecond,
		ChunkArrivals: []time.Duration{time.Millisecond, 3 * time.Millisecond}, Chunks: 2, OutputTokens: 2}
	warmErr := backends.Sample{ID: "warm", Start: t0, Err: &backends.Error{Class: backends.ErrServer, Message: "warm-up"}}
	runErr := backends.Sample{ID: "bad", Start: t0, Err: &backends.Error{Class: backends.ErrTimeout, Message: "measured"}}
	s.add(executor.Event{Run: 0, Warmup: true, Sample: &warmErr})
	s.add(executor.Event{Run: 0, Sample: &ok, Paced: true, Scheduled: 5 * time.Millisecond, SendLag: 2 * time.Millisecond})
	s.add(executor.Event{Run: 1, Sample: &runErr})
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ledger.ReadRequests(&buf)
	if err != nil || len(recs) != 3 || recs[0].CellID != "c" || !recs[0].Warmup || recs[2].Run != 1 || recs[2].Concurrency != 4 {
		t.Fatalf("raw log: %d records, err %v: %+v", len(recs), err, recs)
	}
	if r := recs[1]; !r.Paced || r.Scheduled != 5e6 || r.SendLag != 2e6 || recs[2].Paced {
		t.Errorf("schedule in the raw log: %+v, %+v", recs[1], recs[2])
	}
	if told != 3 {
		t.Errorf("progress told of %d requests, want 3", told)
	}
	if s.firstErr == nil || s.firstErr.Message != "measured" {
		t.Errorf("first error %+v, want the measured run's", s.firstErr)
	}
	runs := s.statsRuns(executor.Result{Runs: make([]executor.RunResult, 3)})
	sum := stats.SummarizeRuns(runs, s.target)
	if sum.PerRun[0].Succeeded != 1 || sum.PerRun[1].Failed != 1 || sum.PerRun[2].Requests != 0 || sum.Pooled.Requests != 2 || sum.Pooled.ITL.N != 1 {
		t.Errorf("per run %+v, pooled %d requests, %d ITL gaps", sum.PerRun, sum.Pooled.Requests, sum.Pooled.ITL.N)
	}
	if lag := sum.Pooled.SendLag; lag.N != 1 || lag.Max != 0.002 {
		t.Errorf("send lag %+v, want the paced request's 2 ms only", lag)
	}
}

// A request that could not connect for want of a source port is counted against its
// agent (or the one client), the agent's host goes into its record, and the note says
// which client ran out and how to spread the load.
func TestLevelSinkNamesAnAgentOutOfPorts(t *testing.T) {
	var buf bytes.Buffer
	rl := ledger.NewRequestLog(&buf)
	s := newLevelSink(rl, ledger.RequestRecord{CellID: "c", Host: "lead"}, stats.Target{}, nil)
	s.hosts = []string{"client-a", "client-b"}
	one := 1
	refused := &backends.Error{Class: backends.ErrOther, Message: "dial tcp 127.0.0.1:38000: connect: cannot assign requested address"}
	for range 3 {
		s.add(executor.Event{Sample: &backends.Sample{ID: "x", Err: refused}, Agent: &one})
	}
	s.add(executor.Event{Sample: &backends.Sample{ID: "y", Err: refused}})
	s.add(executor.Event{Sample: &backends.Sample{ID: "z", Err: &backends.Error{Class: backends.ErrRefused, Message: "connection refused"}}, Agent: &one})
	note := portNote(s.portLimited)
	for _, want := range []string{"agent 1 ran out of source ports to the server (3 requests", "the client ran out of source ports to the server (1 requests",
		"agents { source_addresses }"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if err := rl.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ledger.ReadRequests(&buf)
	if err != nil || len(recs) != 5 {
		t.Fatalf("%d records: %v", len(recs), err)
	}
	for i, want := range []string{"client-b", "client-b", "client-b", "lead", "client-b"} {
		if recs[i].Host != want {
			t.Errorf("record %d: host %q, want %q (its agent's)", i, recs[i].Host, want)
		}
	}
}
