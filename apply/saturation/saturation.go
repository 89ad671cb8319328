// Package saturation stops a paced level's measured runs once they test over-saturated
// (a workload's stop_when_saturated): the queue of a load above what the server serves
// grows without bound, so sending on adds only waiting. Each run is tested at its 24th
// finished measured request and then at every quarter more; a run that tests
// over-saturated (stats.Saturation) gets its Enough channel closed
// (executor.Options.Enough): it sends no more, lets those in flight finish, and ends.
package saturation

import (
	"fmt"
	"strings"
	"sync"

	"github.com/planrun/planrun/stats"
)

// first is how many measured requests a run must have finished before it is tested:
// the slope test needs points, and a run's first requests see an empty queue.
const first = 24

// Watch tests each measured run of a level as its requests finish. Add is called on
// one goroutine; Enough is asked on another.
type Watch struct {
	summary func(run int) (stats.Summary, bool) // a run's figures so far; false: none yet
	done    chan struct{}                       // closed by Stop: the level is over

	mu   sync.Mutex
	runs []*run
}

type run struct {
	stop     chan struct{}
	stopped  bool
	finished int // measured requests finished
	next     int // test again once finished reaches it
	seconds  float64
}

// NewWatch watches a level's runs; summary gives a run's figures so far.
func NewWatch(summary func(run int) (stats.Summary, bool)) *Watch {
	return &Watch{summary: summary, done: make(chan struct{})}
}

func (s *Watch) run(i int) *run {
	for len(s.runs) <= i {
		s.runs = append(s.runs, &run{stop: make(chan struct{}), next: first})
	}
	return s.runs[i]
}

// Either is an Enough (executor.Options.Enough) that closes when the run is stopped here
// or by other (a precision block's, or nil), whichever first.
func (s *Watch) Either(other func(int) <-chan struct{}) func(int) <-chan struct{} {
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

// Add counts one finished measured request of run i, and tests the run at its 24th and
// then at every quarter more, so the tests cost a small multiple of the run's requests.
func (s *Watch) Add(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.run(i)
	r.finished++
	if r.stopped || r.finished < r.next {
		return
	}
	sum, ok := s.summary(i)
	if !ok {
		return
	}
	r.next = r.finished + max(8, r.finished/4)
	if sat := sum.Delivered.Saturation; sat != nil && sat.Over {
		r.stopped, r.seconds = true, sat.Seconds
		close(r.stop)
	}
}

// Stop releases the watch once the level is over; a nil watch does nothing.
func (s *Watch) Stop() {
	if s != nil {
		close(s.done)
	}
}

// Note says which runs were stopped early, for the row's notes ("" when none was, or
// for a nil watch).
func (s *Watch) Note() string {
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
