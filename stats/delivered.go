package stats

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Delivered is the load a level actually put on the server, beside what it asked:
// requests in flight over time (every request, from its start stamp to the end of its
// response body, failed ones too) and, for paced requests (open loop, replay), the rate they were sent at
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
	// IdleHeld is the time-weighted mean of slots standing idle over that span between
	// one request's body end and the next one's start in the same slot: the client's own
	// turnaround, in requests in flight. InFlightHeld + IdleHeld is the slots (less what
	// no slot accounts for). NaN when InFlightHeld is.
	IdleHeld float64 `json:"idle_held"`
	// HeldSeconds is that span's length.
	HeldSeconds float64 `json:"held_s"`
	// Turnaround is, in a closed loop, each slot's time from one request's body end to
	// the start of its next request (seconds): the client's own turnaround per request,
	// whose share of the slots IdleHeld is. A slot that stalls in the client (its next
	// request built late, its goroutine waiting for a core) shows in its tail. Empty
	// without slots.
	Turnaround Dist `json:"turnaround_s"`
	// RampSeconds is how long a closed loop took to fill its slots: from its first
	// request's start to its Target.Concurrency-th's (the longest over runs). Its
	// requests are measured; the held mean leaves the ramp out. NaN without slots.
	RampSeconds float64 `json:"ramp_s"`
	// Resolution is 0 when the in-flight figures are exact; past ITLExactGaps requests
	// in a run they come from its timeline in buckets of this many seconds (the mean
	// stays exact; the p99, the most and the held span's ends are the buckets').
	Resolution float64 `json:"resolution_s,omitempty"`
	// RateScheduled is a paced run's own rate, (n − 1) / (last due − first due): the
	// rate its schedule asked for (an open loop's drawn schedule, a trace's at its
	// speedup). RateDelivered is (n − 1) / (last start − first start) over the same
	// requests' start stamps. Both NaN without two paced requests.
	RateScheduled float64 `json:"rate_scheduled_per_s"`
	RateDelivered float64 `json:"rate_delivered_per_s"`
	// SteadyOutputTokS and SteadyGoodputTokS are the output tokens/s (of every
	// successful request, and of those that met the SLO) over the steady window alone:
	// a closed loop's held span (from its Target.Concurrency-th start to its last start,
	// every slot busy), a paced run's from its first request's end (the pipeline full)
	// to its last send (the rate still held). A request's tokens count where they came:
	// its first at its first token, the rest spread evenly to its last chunk. Over merged
	// runs, Σ tokens / Σ steady seconds. NaN when the window is empty (no more requests
	// than slots), past the exact store's limit (the requests folded into a timeline),
	// and SteadyGoodputTokS without an SLO. SteadySeconds is the window's length.
	SteadyOutputTokS  float64 `json:"steady_output_tok_s"`
	SteadyGoodputTokS float64 `json:"steady_goodput_tok_s"`
	SteadySeconds     float64 `json:"steady_s"`
	// Timeline is one run's window in slices (timeline.go); nil for runs pooled or
	// medians taken, and past the exact store's limit.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Saturation is a paced run's over-saturation test (saturation.go); nil for a
	// closed loop and, as Timeline, for pooled runs and medians.
	Saturation *Saturation `json:"saturation,omitempty"`
}

// loadStore gathers what Delivered needs: the span of every request of a run, and for
// paced requests the first and last due times. A pooled store also keeps the merged
// runs' time at each in-flight count, since their spans lie in different windows.
// It keeps 40 bytes per request of the run up to its limit, and then a timeline of
// bounded size (timeline.go).
type loadStore struct {
	spans    []span
	tl       *timeline  // past the limit: the run's spans, folded (nil while exact)
	runTurn  valueStore // the run's own turnarounds once folded, taken as they come
	limit    int        // of spans kept; 0: ITLExactGaps (tests lower it)
	res      float64    // the coarsest timeline resolution merged, seconds (0: exact)
	hist     []int64    // nanoseconds at each in-flight count, of merged runs
	heldBusy float64    // Σ request-seconds inside the held spans of merged runs
	heldIdle float64    // Σ slot-seconds idle between requests inside those spans
	heldSecs float64    // Σ length of those spans
	ramp     float64    // the longest ramp of merged runs, seconds; NaN: none
	turn     valueStore // the turnarounds of merged runs
	// Σ output tokens (all, good) inside the steady windows of merged runs and their
	// length; steadyLost when some merged run had none to give (folded)
	steadyTok, steadyGood, steadySecs float64
	steadyLost                        bool

	paced              int
	dueMin, dueMax     time.Duration
	startMin, startMax int64   // unix ns of the paced requests' start stamps
	dueSpan, startSpan float64 // Σ seconds over merged runs
	pacedGaps          int     // Σ (n − 1) over merged runs
	concurrency        int
}

// span is one request: its start stamp and body end (unix ns), its closed-loop slot (0:
// none), and where its output tokens came: its first token and last content chunk (unix
// ns; 0 without a first token), how many, and whether it met the SLO.
type span struct {
	start, end int64
	slot       int32
	tokens     int32
	// first and last are µs after start (kept small: 40 bytes a span, not 48); a
	// request longer than 71 minutes has its token times cut there
	first, last uint32
	good        bool
}

// micros is d ns as µs after a start, at most 71 minutes.
func micros(d int64) uint32 { return uint32(min(max(d/1e3, 0), math.MaxUint32)) }

// tokenSpan is where a request's output tokens came (span's).
type tokenSpan struct {
	first, last time.Time // zero first: no first token stamped
	tokens      int
	good        bool
}

func (s *loadStore) add(start time.Time, end time.Time, slot int, tok tokenSpan) {
	if s.tl == nil {
		if len(s.spans) < cmp.Or(s.limit, ITLExactGaps) {
			sp := span{start: start.UnixNano(), end: end.UnixNano(), slot: int32(slot), tokens: int32(tok.tokens), good: tok.good}
			if !tok.first.IsZero() {
				// +1 µs: 0 is "no first token"
				sp.first, sp.last = micros(tok.first.Sub(start).Nanoseconds())+1, micros(tok.last.Sub(start).Nanoseconds())+1
			}
			s.spans = append(s.spans, sp)
			return
		}
		s.fold()
	}
	s.tl.add(start.UnixNano(), end.UnixNano(), slot, &s.runTurn)
}

// fold moves the run's spans into a timeline, which takes the rest of its requests:
// their turnarounds first (by slot, as delivered takes them), then each slot's last
// body end, from which its next request's turnaround is taken.
func (s *loadStore) fold() {
	s.tl = newTimeline(s.concurrency)
	s.eachTurnaround(func(end, next int64) {
		s.runTurn.add(float64(max(next-end, 0)) / 1e9)
		s.tl.spread(&s.tl.idle, end, next)
	})
	for _, sp := range s.spans {
		s.tl.add(sp.start, sp.end, 0, nil)
		if sl := int(sp.slot); sl > 0 {
			if e, ok := s.tl.last[sl]; !ok || sp.end > e {
				s.tl.last[sl] = sp.end
			}
		}
	}
	s.spans = nil
}

// resolution is the store's timeline resolution in seconds, merged runs' included; 0
// when exact.
func (s *loadStore) resolution() float64 {
	if s.tl != nil {
		return max(s.res, float64(s.tl.width)/1e9)
	}
	return s.res
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

// runLoad is what one run's spans give: the nanoseconds spent at each count of requests
// in flight over the spans' own window (first start to last end), the held span's busy
// and idle slot-seconds and its length, and the ramp (NaN without slots).
type runLoad struct {
	hist                         []int64
	heldBusy, heldIdle, heldSecs float64
	ramp                         float64
	// the steady window's output tokens (all, good) and length; steadyLost when the
	// run's spans were folded, so they cannot be told
	steadyTok, steadyGood, steadySecs float64
	steadyLost                        bool
	steadyFrom, steadyTo              int64 // unix ns; equal when there is no steady window
}

func (s *loadStore) histogram() runLoad {
	if s.tl != nil {
		r := s.tl.runLoad()
		r.steadyLost = true
		return r
	}
	r := runLoad{ramp: math.NaN()}
	if len(s.spans) == 0 {
		return r
	}
	// The edges in time order, ends before starts at the same instant (a closed loop's
	// worker that starts its next request the moment its last one ended has one in
	// flight, not two): the starts and the ends sorted apart, then swept together.
	starts := make([]int64, len(s.spans))
	ends := make([]int64, len(s.spans))
	for i, sp := range s.spans {
		starts[i], ends[i] = sp.start, max(sp.end, sp.start)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	var heldFrom, heldTo int64
	if c := s.concurrency; c > 0 {
		r.ramp = float64(starts[min(c, len(starts))-1]-starts[0]) / 1e9
		if len(starts) > c {
			heldFrom, heldTo = starts[c-1], starts[len(starts)-1]
		}
	}
	n, prev := 0, starts[0]
	for i, j := 0, 0; i < len(starts) || j < len(ends); {
		var t int64
		d := 1
		if j < len(ends) && (i == len(starts) || ends[j] <= starts[i]) {
			t, d = ends[j], -1
			j++
		} else {
			t = starts[i]
			i++
		}
		if t > prev {
			for len(r.hist) <= n {
				r.hist = append(r.hist, 0)
			}
			r.hist[n] += t - prev
			r.heldBusy += float64(n) * overlap(prev, t, heldFrom, heldTo)
		}
		n += d
		prev = t
	}
	r.heldIdle = s.turnaround(heldFrom, heldTo)
	r.heldSecs = float64(heldTo-heldFrom) / 1e9
	from, to := heldFrom, heldTo
	if s.concurrency == 0 && s.paced > 0 {
		from, to = slices.Min(ends), starts[len(starts)-1]
	}
	if to > from {
		r.steadyFrom, r.steadyTo = from, to
		r.steadySecs = float64(to-from) / 1e9
		for _, sp := range s.spans {
			n := sp.tokensWithin(from, to)
			r.steadyTok += n
			if sp.good {
				r.steadyGood += n
			}
		}
	}
	return r
}

// tokensWithin is how many of the request's output tokens came within [from, to): its
// first at its first token, the rest spread evenly from there to its last chunk (a
// request without a first token stamped: all over its span).
func (sp span) tokensWithin(from, to int64) float64 {
	if sp.tokens <= 0 {
		return 0
	}
	first, last, rest := sp.start+int64(sp.first-1)*1e3, sp.start+int64(sp.last-1)*1e3, float64(sp.tokens-1)
	if sp.first == 0 {
		first, last, rest = sp.start, sp.end, float64(sp.tokens)
	} else if first >= from && first < to {
		return 1 + rest*spreadWithin(first, last, from, to)
	}
	return rest * spreadWithin(first, last, from, to)
}

// spreadWithin is the part of (a, b] within [from, to); for a = b, whether a is in it.
func spreadWithin(a, b, from, to int64) float64 {
	if b <= a {
		if a >= from && a < to {
			return 1
		}
		return 0
	}
	return overlap(a, b, from, to) * 1e9 / float64(b-a)
}

// turnaround is the seconds the closed loop's slots stood idle within [from, to): in
// each slot, from one request's body end to the start of the slot's next request.
func (s *loadStore) turnaround(from, to int64) float64 {
	if to <= from {
		return 0
	}
	var idle float64
	s.eachTurnaround(func(end, next int64) { idle += overlap(end, next, from, to) })
	return idle
}

// turnarounds adds each of the run's turnarounds (a slot's body end to its next start)
// to into, in seconds.
func (s *loadStore) turnarounds(into *valueStore) {
	if s.tl != nil {
		into.merge(&s.runTurn)
		return
	}
	s.eachTurnaround(func(end, next int64) { into.add(float64(max(next-end, 0)) / 1e9) })
}

// eachTurnaround calls f with the body end of every closed-loop request of the run
// that its slot followed with another, and that next request's start (unix ns). It
// sorts the run's spans by slot and start, in place: nothing else depends on their
// order, and a copy would double the memory of a run of a million requests.
func (s *loadStore) eachTurnaround(f func(end, next int64)) {
	slices.SortFunc(s.spans, func(a, b span) int {
		if a.slot != b.slot {
			return int(a.slot - b.slot)
		}
		return cmpInt64(a.start, b.start)
	})
	for i := 1; i < len(s.spans); i++ {
		if prev, sp := s.spans[i-1], s.spans[i]; prev.slot == sp.slot && sp.slot > 0 {
			f(prev.end, sp.start)
		}
	}
}

// overlap is the seconds [a, b) and [from, to) share (unix ns).
func overlap(a, b, from, to int64) float64 {
	if lo, hi := max(a, from), min(b, to); hi > lo {
		return float64(hi-lo) / 1e9
	}
	return 0
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// merge adds o's run to s (pooling runs); o is left as it was.
func (s *loadStore) merge(o *loadStore) {
	r := o.histogram()
	h := r.hist
	s.ramp = longest(s.ramp, longest(r.ramp, o.ramp))
	for k, v := range o.hist {
		for len(h) <= k {
			h = append(h, 0)
		}
		h[k] += v
	}
	for len(s.hist) < len(h) {
		s.hist = append(s.hist, 0)
	}
	for k, v := range h {
		s.hist[k] += v
	}
	s.res = max(s.res, o.resolution())
	s.heldBusy += r.heldBusy + o.heldBusy
	s.heldIdle += r.heldIdle + o.heldIdle
	s.heldSecs += r.heldSecs + o.heldSecs
	s.steadyTok += r.steadyTok + o.steadyTok
	s.steadyGood += r.steadyGood + o.steadyGood
	s.steadySecs += r.steadySecs + o.steadySecs
	s.steadyLost = s.steadyLost || r.steadyLost || o.steadyLost
	s.turn.merge(&o.turn)
	o.turnarounds(&s.turn)
	due, start, gaps := o.pacedSpans()
	s.dueSpan += due
	s.startSpan += start
	s.pacedGaps += gaps
}

// pacedSpans are the seconds between the first and last due time and start stamp of
// the paced requests, and how many gaps they span, merged runs included.
func (s *loadStore) pacedSpans() (due, start float64, gaps int) {
	due, start, gaps = s.dueSpan, s.startSpan, s.pacedGaps
	if s.paced > 1 {
		due += (s.dueMax - s.dueMin).Seconds()
		start += float64(s.startMax-s.startMin) / 1e9
		gaps += s.paced - 1
	}
	return due, start, gaps
}

// delivered derives the figures.
func (s *loadStore) delivered() Delivered {
	r := s.histogram()
	h := r.hist
	for k, v := range s.hist {
		for len(h) <= k {
			h = append(h, 0)
		}
		h[k] += v
	}
	busy, idle, secs := r.heldBusy+s.heldBusy, r.heldIdle+s.heldIdle, r.heldSecs+s.heldSecs
	d := Delivered{InFlightMean: math.NaN(), InFlightP99: math.NaN(), InFlightHeld: ratio(busy, secs),
		IdleHeld: ratio(idle, secs), HeldSeconds: secs, RampSeconds: longest(r.ramp, s.ramp), Resolution: s.resolution()}
	var turn valueStore
	turn.merge(&s.turn)
	s.turnarounds(&turn)
	d.Turnaround = turn.dist()
	var total int64
	var weighted float64
	for k, v := range h {
		total += v
		weighted += float64(k) * float64(v)
		if v > 0 {
			d.InFlightMax = k
		}
	}
	if total > 0 {
		d.InFlightMean = weighted / float64(total)
		// In whole nanoseconds, so exactly 99% of the window is not judged by float64
		// rounding (exact up to 2.9 years of summed windows, where 100 × seen overflows).
		var seen int64
		for k, v := range h {
			seen += v
			if 100*seen >= 99*total {
				d.InFlightP99 = float64(k)
				break
			}
		}
	}
	due, start, gaps := s.pacedSpans()
	d.RateScheduled, d.RateDelivered = ratio(float64(gaps), due), ratio(float64(gaps), start)
	if len(s.spans) > 0 && len(s.hist) == 0 { // one run's own spans: its timeline
		d.Timeline = s.timeline(r)
		d.Saturation = s.saturation(d.Timeline)
	}
	d.SteadySeconds = r.steadySecs + s.steadySecs
	d.SteadyOutputTokS, d.SteadyGoodputTokS = math.NaN(), math.NaN()
	if !r.steadyLost && !s.steadyLost {
		d.SteadyOutputTokS = ratio(r.steadyTok+s.steadyTok, d.SteadySeconds)
		d.SteadyGoodputTokS = ratio(r.steadyGood+s.steadyGood, d.SteadySeconds)
	}
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
