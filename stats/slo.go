package stats

import (
	"math"
	"time"

	"github.com/planrun/planrun/backends"
)

// SLO is a per-request service-level objective: the limits a request must meet, every
// one of them, to count as good (the rule of vLLM's --goodput). A zero limit is not
// checked; a zero SLO checks nothing and leaves the SLO figures unmeasured.
type SLO struct {
	TTFT time.Duration
	// TPOT limits the request's own (E2E − TTFT)/(output tokens − 1); a request of one
	// token has no TPOT and passes this limit.
	TPOT time.Duration
	// ITL limits the request's largest gap between consecutive content chunks (so one
	// stall fails the request); a request of one chunk passes this limit.
	ITL time.Duration
	E2E time.Duration
}

// IsZero reports whether the SLO sets no limit.
func (o SLO) IsZero() bool { return o == SLO{} }

// Meets reports whether the request succeeded and met every limit of the SLO. A
// request with no content chunk has no TTFT and fails a TTFT limit.
func (o SLO) Meets(s *backends.Sample) bool {
	if !s.OK() {
		return false
	}
	if o.TTFT > 0 {
		if d, ok := s.TTFT(); !ok || d > o.TTFT {
			return false
		}
	}
	if o.TPOT > 0 {
		if d, ok := s.TPOT(); ok && d > o.TPOT {
			return false
		}
	}
	if o.ITL > 0 && maxGap(s.ChunkArrivals) > o.ITL {
		return false
	}
	return o.E2E <= 0 || s.E2E() <= o.E2E
}

// maxGap is the largest gap between consecutive arrivals; 0 for fewer than two.
func maxGap(arrivals []time.Duration) time.Duration {
	var m time.Duration
	for i := 1; i < len(arrivals); i++ {
		m = max(m, arrivals[i]-arrivals[i-1])
	}
	return m
}

// addSLO counts the request against the target's SLO when it sets one.
func (a *Accumulator) addSLO(s *backends.Sample) {
	if !a.t.SLO.IsZero() && a.t.SLO.Meets(s) {
		a.l.GoodRequests++
		a.l.GoodOutputTokens += s.OutputTokens
	}
}

// setSLO derives the SLO figures of l over the window: NaN when the target has no SLO
// (or, for attainment, no request was made).
func (a *Accumulator) setSLO(l *Summary, windowSeconds float64) {
	if a.t.SLO.IsZero() {
		nan := math.NaN()
		l.SLOAttainment, l.GoodputReqS, l.GoodputTokS = nan, nan, nan
		return
	}
	l.SLOAttainment = ratio(float64(l.GoodRequests), float64(l.Requests))
	l.GoodputReqS = ratio(float64(l.GoodRequests), windowSeconds)
	l.GoodputTokS = ratio(float64(l.GoodOutputTokens), windowSeconds)
}
