package stats

import "math"

// ITLRelativeError bounds the relative error of percentiles once a run has more values
// of a figure than ITLExactGaps (inter-chunk gaps, or requests for the per-request
// figures): they then come from a DDSketch, whose quantiles are within this fraction of
// the value at that rank (sketch.go). Count, mean, min and max stay exact.
const ITLRelativeError = 0.01

// ITLExactGaps is how many values of a figure a run (or the pool of a level's runs)
// keeps exactly (8 MiB of float64) before folding them into the sketch: a typical
// benchmark stays exact, and a soak of millions of requests, or the replay of a long
// trace, stays within bounded memory.
const ITLExactGaps = 1 << 20

// valueStore holds one figure's values (ITL gaps, or one value per request): exactly up
// to a limit, then in a mergeable sketch (sketch.go).
type valueStore struct {
	exact  []float64
	sketch *sketch // nil while exact
	sumSq  float64 // Σ v² of the sketched values, for Std
	limit  int     // 0: ITLExactGaps (tests lower it)
}

func (s *valueStore) max() int {
	if s.limit > 0 {
		return s.limit
	}
	return ITLExactGaps
}

func (s *valueStore) add(v float64) {
	if s.sketch == nil {
		if len(s.exact) < s.max() {
			s.exact = append(s.exact, v)
			return
		}
		s.spill()
	}
	s.sketch.add(v, 1)
	s.sumSq += v * v
}

// spill moves the exact values into a new sketch.
func (s *valueStore) spill() {
	sk := newSketch(ITLRelativeError)
	for _, v := range s.exact {
		sk.add(v, 1)
		s.sumSq += v * v
	}
	s.sketch, s.exact = sk, nil
}

// merge adds o's values to s; o keeps its values (an empty s shares them, in an order
// a later summary of either may sort, which no figure depends on).
func (s *valueStore) merge(o *valueStore) {
	if s.sketch == nil && o.sketch == nil && len(s.exact) == 0 && len(o.exact) <= s.max() {
		// No copy of a run's values into an empty pool (one run: a million values
		// a figure would be held twice). Its capacity ends at its length, so s never
		// writes into o's array: an add to s copies first.
		s.exact = o.exact[:len(o.exact):len(o.exact)]
		return
	}
	if s.sketch == nil && o.sketch == nil && len(s.exact)+len(o.exact) <= s.max() {
		s.exact = append(s.exact, o.exact...)
		return
	}
	if s.sketch == nil {
		s.spill()
	}
	if o.sketch != nil {
		s.sketch.merge(o.sketch)
		s.sumSq += o.sumSq
		return
	}
	for _, v := range o.exact {
		s.sketch.add(v, 1)
		s.sumSq += v * v
	}
}

// dist summarises the values: exactly (NewDist) while they fit, else from the sketch
// with exact count, mean, min and max.
func (s *valueStore) dist() Dist {
	if s.sketch == nil {
		return NewDist(s.exact)
	}
	sk := s.sketch
	q := []float64{sk.quantile(0.50), sk.quantile(0.90), sk.quantile(0.95), sk.quantile(0.99)}
	lo, hi, n := sk.lo, sk.hi, sk.n
	mean := sk.sum / n
	// Σv²/n − mean² can dip below zero by rounding when every value is alike.
	std := math.Sqrt(math.Max(0, s.sumSq/n-mean*mean))
	return Dist{N: int(n), P50: q[0], P90: q[1], P99: q[3], Mean: mean, Min: lo, Max: hi, P95: q[2], Std: std}
}

// ci is the intervals of the values' figures at confidence conf, as the values of draws
// independent requests: draws is count() for a per-request figure, and the number of
// requests behind the values for ITL, whose many gaps a request are not independent of
// each other (so its intervals are as wide as its requests make them, not its gaps).
// Sketched values (past the exact limit) widen each end by the sketch's relative error.
func (s *valueStore) ci(conf float64, draws int) *DistCI {
	m := s.count()
	if m == 0 || draws <= 0 {
		return distCI(0, math.NaN(), math.NaN(), conf, nil)
	}
	draws = min(draws, m)
	d := s.dist() // sorts the exact values
	if s.sketch == nil {
		at := func(rank int) float64 { return s.exact[rankIndex(rank, draws, m)] }
		return distCI(draws, d.Mean, d.Std, conf, at)
	}
	at := func(rank int) float64 { return s.sketch.quantile(float64(rank) / float64(draws+1)) }
	c := distCI(draws, d.Mean, d.Std, conf, at)
	for _, iv := range []*Interval{&c.P50, &c.P90, &c.P95, &c.P99} {
		iv.Lo *= 1 - ITLRelativeError
		iv.Hi *= 1 + ITLRelativeError
	}
	return c
}

// rankIndex is the index among m sorted values of the rank-th of n draws: the same
// rank itself when n = m, else the value at the same plotting position r/(n+1).
func rankIndex(rank, n, m int) int {
	if n == m {
		return rank - 1
	}
	i := int(math.Ceil(float64(rank)/float64(n+1)*float64(m+1))) - 1
	return min(max(i, 0), m-1)
}

// count is the number of values added.
func (s *valueStore) count() int {
	if s.sketch == nil {
		return len(s.exact)
	}
	return int(s.sketch.n)
}
