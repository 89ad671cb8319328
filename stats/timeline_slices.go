package stats

import (
	"math"
	"slices"
	"sort"
	"time"
)

// Timeline is one measured run cut into slices of time: what happened inside its window
// (requests started and finished, in flight, output tokens, TTFT), so a ramp, a stall
// or a slowdown shows where the row's single figures hide it. The slices are Resolution
// long from the run's first start, and cut again where the steady window begins and
// ends, so the steady slices are exactly that window: Σ their tokens / Σ their length
// is the run's SteadyOutputTokS.
type Timeline struct {
	Origin     time.Time `json:"origin"`       // the run's first request start
	Resolution float64   `json:"resolution_s"` // the slices' length, seconds (the last and the cut ones shorter)
	Slices     []Slice   `json:"slices"`
}

// Slice is [From, To) seconds after the timeline's origin.
type Slice struct {
	From, To float64
	// Steady is set on the slices inside the run's steady window.
	Steady bool
	// Started and Finished count the requests that started and whose body ended in the
	// slice; InFlight is the time-weighted mean of requests in flight over it.
	Started, Finished int
	InFlight          float64
	// OutputTokens are the successful requests' tokens that came in the slice (a
	// request's first at its first token, the rest spread evenly to its last chunk).
	OutputTokens float64
	// TTFTP50 and TTFTMax are over the requests started in the slice that had a first
	// token (seconds); NaN when none did.
	TTFTP50, TTFTMax float64
}

// OutputTokS is the slice's output tokens per second.
func (s Slice) OutputTokS() float64 { return ratio(s.OutputTokens, s.To-s.From) }

// TimelineResolution is a timeline's slice length for a run window: 1 s, or 100 ms for
// a window under 30 s, so a short run still shows its shape.
func TimelineResolution(window time.Duration) time.Duration {
	if window < 30*time.Second {
		return 100 * time.Millisecond
	}
	return time.Second
}

// SteadyOutputTokS recomputes the steady throughput from the steady slices: NaN when
// there are none.
func (t *Timeline) SteadyOutputTokS() float64 {
	var tok, secs float64
	for _, s := range t.Slices {
		if s.Steady {
			tok, secs = tok+s.OutputTokens, secs+s.To-s.From
		}
	}
	return ratio(tok, secs)
}

// timeline cuts the run's spans into slices; r has its steady window.
func (s *loadStore) timeline(r runLoad) *Timeline {
	origin, end := s.spans[0].start, s.spans[0].end
	for _, sp := range s.spans {
		origin, end = min(origin, sp.start), max(end, sp.end)
	}
	res := TimelineResolution(time.Duration(end - origin)).Nanoseconds()
	edges := []int64{origin}
	for e := origin + res; e < end; e += res {
		edges = append(edges, e)
	}
	edges = append(edges, end)
	if r.steadyTo > r.steadyFrom {
		edges = append(edges, r.steadyFrom, r.steadyTo)
		slices.Sort(edges)
		edges = slices.Compact(edges)
	}
	n := len(edges) - 1
	if n < 1 {
		return nil
	}
	t := &Timeline{Origin: time.Unix(0, origin), Resolution: float64(res) / 1e9, Slices: make([]Slice, n)}
	ttfts := make([][]float64, n)
	// index is the slice holding instant x (the last for x = end).
	index := func(x int64) int {
		return min(max(sort.Search(len(edges), func(i int) bool { return edges[i] > x })-1, 0), n-1)
	}
	busy := make([]float64, n)
	for _, sp := range s.spans {
		i := index(sp.start)
		t.Slices[i].Started++
		t.Slices[index(sp.end)].Finished++
		if sp.first > 0 {
			ttfts[i] = append(ttfts[i], float64(sp.first-1)/1e6)
		}
		for j := i; j < n && edges[j] < max(sp.end, sp.start+1); j++ {
			busy[j] += overlap(sp.start, sp.end, edges[j], edges[j+1])
			t.Slices[j].OutputTokens += sp.tokensWithin(edges[j], edges[j+1])
		}
	}
	for j := range t.Slices {
		sl := &t.Slices[j]
		sl.From, sl.To = float64(edges[j]-origin)/1e9, float64(edges[j+1]-origin)/1e9
		sl.Steady = r.steadyTo > r.steadyFrom && edges[j] >= r.steadyFrom && edges[j+1] <= r.steadyTo
		sl.InFlight = ratio(busy[j], sl.To-sl.From)
		sl.TTFTP50, sl.TTFTMax = math.NaN(), math.NaN()
		if v := ttfts[j]; len(v) > 0 {
			slices.Sort(v)
			sl.TTFTP50, sl.TTFTMax = Percentile(v, 0.5), v[len(v)-1]
		}
	}
	return t
}
