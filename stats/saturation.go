package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Saturation is the over-saturation test of one paced run (an open loop, a replay): a
// load above what the server serves queues without bound, so its TTFT climbs and its
// requests in flight grow for as long as the run sends. Each is a least-squares slope
// against time over the run's sending span (first start to last start) with its 95%
// t-interval, and the climb it makes over the span; the run is over-saturated when
// both slopes' intervals lie above zero and each climb is more than SaturationMargin of
// the run's level (the median TTFT; the mean in flight over the span). A steady server
// shows slopes about zero, or a climb within the margin.
type Saturation struct {
	Over bool `json:"over_saturated"`
	// TTFTSlope is seconds of TTFT per second of the run, TTFTClimb seconds over the
	// span; InFlightSlope requests per second, InFlightClimb requests over the span.
	TTFTSlope, TTFTSlopeLo, TTFTSlopeHi, TTFTClimb                 float64
	InFlightSlope, InFlightSlopeLo, InFlightSlopeHi, InFlightClimb float64
	// Seconds is the sending span.
	Seconds float64
}

// SaturationMargin is how far, as a share of the run's level, a significant slope must
// climb over the sending span to call the run over-saturated: half of it, so a server
// that warms up or jitters is not, and one whose queue doubled its TTFT is.
const SaturationMargin = 0.5

// slopeInterval is the least-squares slope of y against x with its 95% t-interval; NaN
// with fewer than three points or no spread in x.
func slopeInterval(x, y []float64) (b, lo, hi float64) {
	n := float64(len(x))
	if len(x) < 3 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i], my+y[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	if sxx == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	b = sxy / sxx
	var sse float64
	for i := range x {
		r := y[i] - my - b*(x[i]-mx)
		sse += r * r
	}
	se := math.Sqrt(sse / (n - 2) / sxx)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 2}.Quantile(0.975)
	return b, b - t*se, b + t*se
}

// saturation tests a paced run's spans and timeline; nil for a closed loop.
func (s *loadStore) saturation(tl *Timeline) *Saturation {
	if s.paced == 0 || len(s.spans) < 3 {
		return nil
	}
	from, to := s.spans[0].start, s.spans[0].start
	for _, sp := range s.spans {
		from, to = min(from, sp.start), max(to, sp.start)
	}
	out := &Saturation{Seconds: float64(to-from) / 1e9}
	var x, y []float64
	for _, sp := range s.spans {
		if sp.first > 0 {
			x, y = append(x, float64(sp.start-from)/1e9), append(y, float64(sp.first-1)/1e6)
		}
	}
	out.TTFTSlope, out.TTFTSlopeLo, out.TTFTSlopeHi = slopeInterval(x, y)
	out.TTFTClimb = out.TTFTSlope * out.Seconds
	ttftLevel := math.NaN()
	if len(y) > 0 {
		ttftLevel = median(slices.Clone(y))
	}
	x, y = x[:0], y[:0]
	var mean float64
	if tl != nil {
		origin := float64(from-tl.Origin.UnixNano()) / 1e9
		for _, sl := range tl.Slices {
			if mid := (sl.From + sl.To) / 2; mid >= origin && mid <= origin+out.Seconds {
				x, y = append(x, mid), append(y, sl.InFlight)
				mean += sl.InFlight
			}
		}
	}
	if len(y) > 0 {
		mean /= float64(len(y))
	}
	out.InFlightSlope, out.InFlightSlopeLo, out.InFlightSlopeHi = slopeInterval(x, y)
	out.InFlightClimb = out.InFlightSlope * out.Seconds
	// Both: a queue growing without bound holds each request longer before its first
	// token and holds more requests at once. TTFT drifting alone at a steady load is a
	// server slowing (another process on its cores), not a queue.
	out.Over = out.TTFTSlopeLo > 0 && out.TTFTClimb > SaturationMargin*ttftLevel &&
		out.InFlightSlopeLo > 0 && out.InFlightClimb > SaturationMargin*mean
	return out
}
