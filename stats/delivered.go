package stats

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Delivered is the load a level actually put on the server, beside what it asked:
// requests in flight over time (every request, from its start stamp to its end, failed
// ones too) and, for paced requests (open loop, replay), the rate they were sent at
// against the rate their schedule asked for.
type Delivered struct {
	// InFlightMean, InFlightP99 and InFlightMax are the time-weighted mean, the
	// time-weighted p99 and the most of the requests in flight over the measured window:
	// at 99% of the window's instants no more than InFlightP99 were in flight.
	InFlightMean float64 `json:"in_flight_mean"`
	InFlightP99  float64 `json:"in_flight_p99"`
	InFlightMax  int     `json:"in_flight_max"`
	// InFlightHeld is the time-weighted mean in flight over the span in which a closed
	// loop has work for every slot: from the start of its Target.Concurrency-th request
	// to the start of its last one. The ramp up before and the drain after are in the
	// window's figures, not here. NaN when the span is empty (no more requests than
	// slots) or the target names no concurrency.
	InFlightHeld float64 `json:"in_flight_held"`
	// HeldSeconds is that span's length.
	HeldSeconds float64 `json:"held_s"`
	// RampSeconds is how long a closed loop took to fill its slots: from its first
	// request's start to its Target.Concurrency-th's (the longest over runs). Its
	// requests are measured; the held mean leaves the ramp out. NaN without slots.
	RampSeconds float64 `json:"ramp_s"`
	// RateScheduled is a paced run's own rate, (n − 1) / (last due − first due): the
	// rate its schedule asked for (an open loop's drawn schedule, a trace's at its
	// speedup). RateDelivered is (n − 1) / (last start − first start) over the same
	// requests' start stamps. Both NaN without two paced requests.
	RateScheduled float64 `json:"rate_scheduled_per_s"`
	RateDelivered float64 `json:"rate_delivered_per_s"`
}

// loadStore gathers what Delivered needs: the span of every request of a run, and for
// paced requests the first and last due times. A pooled store (merged runs, no spans of
// its own) keeps the runs' time at each in-flight count instead, since their spans lie
// in different windows. It keeps 16 bytes per request of the run.
type loadStore struct {
	spans    []span
	hist     []float64 // nanoseconds at each in-flight count, of merged runs
	heldBusy float64   // Σ request-seconds inside the held spans of merged runs
	heldSecs float64   // Σ length of those spans
	ramp     float64   // the longest ramp of merged runs, seconds; NaN: none

	paced              int
	dueMin, dueMax     time.Duration
	startMin, startMax int64   // unix ns of the paced requests' start stamps
	dueSpan, startSpan float64 // Σ seconds over merged runs
	pacedGaps          int     // Σ (n − 1) over merged runs
	concurrency        int
}

type span struct{ start, end int64 } // unix ns

func (s *loadStore) add(start time.Time, end time.Time) {
	s.spans = append(s.spans, span{start.UnixNano(), end.UnixNano()})
}

// addPaced counts one paced request, due at offset at in its run, stamped at start.
func (s *loadStore) addPaced(at time.Duration, start time.Time) {
	st := start.UnixNano()
	if s.paced == 0 {
		s.dueMin, s.dueMax, s.startMin, s.startMax = at, at, st, st
	}
	s.paced++
	s.dueMin, s.dueMax = min(s.dueMin, at), max(s.dueMax, at)
	s.startMin, s.startMax = min(s.startMin, st), max(s.startMax, st)
}

// histogram is the time spent at each count of requests in flight (in nanoseconds, read
// only as shares of the whole) over the spans' own window (first start to last end), the held span's busy time and length, and the
// ramp (NaN without slots).
func (s *loadStore) histogram() (hist []float64, heldBusy, heldSecs, ramp float64) {
	ramp = math.NaN()
	if len(s.spans) == 0 {
		return nil, 0, 0, ramp
	}
	type edge struct {
		t int64
		d int
	}
	edges := make([]edge, 0, 2*len(s.spans))
	starts := make([]int64, len(s.spans))
	for i, sp := range s.spans {
		edges = append(edges, edge{sp.start, 1}, edge{max(sp.end, sp.start), -1})
		starts[i] = sp.start
	}
	// Edges at one instant may lie in any order: time is counted only between instants
	// (the gap between two edges of one instant is 0), at the count after all of them, so
	// a closed loop's worker that starts its next request the moment its last one ended
	// has one in flight there, not two.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.t, b.t) })
	slices.Sort(starts)
	var heldFrom, heldTo int64
	if c := s.concurrency; c > 0 {
		// The held span runs from the c-th start to the last: empty (the last start to
		// itself) with no more requests than slots.
		filled := starts[min(c, len(starts))-1]
		ramp = float64(filled-starts[0]) / 1e9
		heldFrom, heldTo = filled, starts[len(starts)-1]
	}
	n, from := 0, edges[0].t
	for _, e := range edges {
		for len(hist) <= n {
			hist = append(hist, 0)
		}
		hist[n] += float64(e.t - from)
		held := min(e.t, heldTo) - max(from, heldFrom)
		heldBusy += float64(n) * float64(max(held, 0)) / 1e9
		n, from = n+e.d, e.t
	}
	return hist, heldBusy, float64(heldTo-heldFrom) / 1e9, ramp
}

// merge adds o, one run's store, to s (pooling runs); o is left as it was.
func (s *loadStore) merge(o *loadStore) {
	h, busy, secs, ramp := o.histogram()
	s.ramp = longest(s.ramp, ramp)
	s.hist = addTimes(s.hist, h)
	s.heldBusy += busy
	s.heldSecs += secs
	due, start, gaps := o.pacedSpans()
	s.dueSpan += due
	s.startSpan += start
	s.pacedGaps += gaps
}

// addTimes adds h to into, count by count, and returns it.
func addTimes(into, h []float64) []float64 {
	into = append(into, make([]float64, max(len(h)-len(into), 0))...)
	for k, v := range h {
		into[k] += v
	}
	return into
}

// pacedSpans are the seconds between the first and last due time and start stamp of
// the paced requests, and how many gaps they span, merged runs included. (With one paced
// request or none, the first and last are the same.)
func (s *loadStore) pacedSpans() (due, start float64, gaps int) {
	due = s.dueSpan + (s.dueMax - s.dueMin).Seconds()
	start = s.startSpan + float64(s.startMax-s.startMin)/1e9
	return due, start, s.pacedGaps + max(s.paced-1, 0)
}

// delivered derives the figures.
func (s *loadStore) delivered() Delivered {
	h, busy, secs, ramp := s.histogram()
	h = addTimes(h, s.hist)
	busy, secs = busy+s.heldBusy, secs+s.heldSecs
	d := Delivered{InFlightMean: math.NaN(), InFlightP99: math.NaN(), InFlightHeld: ratio(busy, secs), HeldSeconds: secs,
		RampSeconds: longest(ramp, s.ramp)}
	var total, weighted float64
	for k, v := range h {
		total += v
		weighted += float64(k) * v
		if v > 0 {
			d.InFlightMax = k
		}
	}
	if total > 0 {
		d.InFlightMean = weighted / total
		var seen float64
		for k, v := range h {
			seen += v
			if seen >= 0.99*total {
				d.InFlightP99 = float64(k)
				break
			}
		}
	}
	due, start, gaps := s.pacedSpans()
	d.RateScheduled, d.RateDelivered = ratio(float64(gaps), due), ratio(float64(gaps), start)
	return d
}

// longest is the larger of two ramps, NaN for none.
func longest(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return max(a, b)
}
