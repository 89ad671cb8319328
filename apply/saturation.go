package apply

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/serverstats"
)

// saturationFirst is how many measured requests a run must have finished before it is
// tested for over-saturation: the slope test needs points, and a run's first requests
// see an empty queue.
const saturationFirst = 24

// saturationWatch stops a paced run early once the requests it has finished test
// over-saturated (a workload's stop_when_saturated): its queue grows without bound, so
// sending on adds only waiting. The run then sends no more, lets those in flight finish,
// and ends (executor.Options.Enough).
type saturationWatch struct {
	sink *levelSink
	done chan struct{} // closed by stop: the level is over

	mu   sync.Mutex
	runs []*saturationRun
}

type saturationRun struct {
	stop     chan struct{}
	stopped  bool
	finished int // measured requests finished
	next     int // test again once finished reaches it
	seconds  float64
}

// watchSaturation returns the level's watch, with its consumer added to the sink and
// opts.Enough also closing when it stops a run; nil when the workload does not ask.
func watchSaturation(w *plan.Workload, sink *levelSink, opts *executor.Options) *saturationWatch {
	if !w.StopWhenSaturated {
		return nil
	}
	s := &saturationWatch{sink: sink, done: make(chan struct{})}
	sink.consumers = append(sink.consumers, s.add) // after addRun, which it reads
	opts.Enough = s.either(opts.Enough)
	return s
}

func (s *saturationWatch) run(i int) *saturationRun {
	for len(s.runs) <= i {
		s.runs = append(s.runs, &saturationRun{stop: make(chan struct{}), next: saturationFirst})
	}
	return s.runs[i]
}

// either is an Enough that closes when the run is stopped here or by other (a
// precision block's), whichever first.
func (s *saturationWatch) either(other func(int) <-chan struct{}) func(int) <-chan struct{} {
	return func(i int) <-chan struct{} {
		s.mu.Lock()
		own := s.run(i).stop
		s.mu.Unlock()
		if other == nil {
			return own
		}
		theirs := other(i)
		both := make(chan struct{})
		go func() {
			select {
			case <-own:
			case <-theirs:
			case <-s.done:
				return
			}
			close(both)
		}()
		return both
	}
}

// add is the sink's consumer: it tests a run at its 24th finished measured request and
// then at every quarter more, so the tests cost a small multiple of the run's requests.
func (s *saturationWatch) add(ev executor.Event) {
	if !measured(ev) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run(ev.Run)
	r.finished++
	if r.stopped || r.finished < r.next || ev.Run >= len(s.sink.runs) {
		return
	}
	r.next = r.finished + max(8, r.finished/4)
	acc := s.sink.runs[ev.Run]
	if sat := acc.Summary(acc.Window()).Delivered.Saturation; sat != nil && sat.Over {
		r.stopped, r.seconds = true, sat.Seconds
		close(r.stop)
	}
}

// stop releases the watch once the level is over.
func (s *saturationWatch) stop() {
	if s != nil {
		close(s.done)
	}
}

// note says which runs were stopped early, for the row's notes ("" when none was, or
// without a watch).
func (s *saturationWatch) note() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var stopped []string
	for i, r := range s.runs {
		if r.stopped {
			stopped = append(stopped, fmt.Sprintf("run %d after %d requests (%.1f s of sending)", i+1, r.finished, r.seconds))
		}
	}
	if len(stopped) == 0 {
		return ""
	}
	return fmt.Sprintf("stopped early, over-saturated (stop_when_saturated): %s; its figures are of the requests sent until then", strings.Join(stopped, ", "))
}

// queueShown is the share of the mean TTFT the server's queue time must reach for the
// row's notes to name it.
const queueShown = 0.10

// setQueueTime puts the server's own queue time over the window (vLLM's
// request_queue_time_seconds: arrival to first scheduling) on the row, and returns a
// note when it is a large part of the TTFT: a closed loop past the server's slots, or
// an open loop above its capacity, waits there.
func setQueueTime(row *ledger.Row, q serverstats.Histogram) string {
	if q.Count == 0 {
		return ""
	}
	row.ServerQueueMeanS = q.Mean()
	ttft := row.TTFT.Mean
	if math.IsNaN(ttft) || ttft <= 0 || row.ServerQueueMeanS < queueShown*ttft {
		return ""
	}
	why := "the load is above what the server's slots serve at once"
	if row.RequestRate == 0 {
		why = fmt.Sprintf("concurrency %d is past the server's slots", row.Concurrency)
	}
	return fmt.Sprintf("queueing: requests waited a mean %.4f s in the server's queue before it scheduled them (its request_queue_time_seconds over %.0f requests), %.0f%% of the mean TTFT: %s",
		row.ServerQueueMeanS, q.Count, 100*row.ServerQueueMeanS/ttft, why)
}
