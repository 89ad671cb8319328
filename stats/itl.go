package stats

import (
	"math"

	"github.com/DataDog/sketches-go/ddsketch"
)

// ITLRelativeError bounds the relative error of ITL percentiles once a run has more
// inter-chunk gaps than ITLExactGaps: they then come from a DDSketch, whose quantiles are
// within this fraction of the value at that rank. Count, mean, min and max stay exact.
const ITLRelativeError = 0.01

// ITLExactGaps is how many inter-chunk gaps a run (or the pool of a level's runs) keeps
// exactly (8 MiB of float64) before folding them into the sketch: a typical benchmark
// stays exact, and a soak of millions of long requests stays within bounded memory.
const ITLExactGaps = 1 << 20

// itlStore holds ITL values: exactly up to a limit, then in a mergeable DDSketch.
type itlStore struct {
	exact  []float64
	sketch *ddsketch.DDSketchWithExactSummaryStatistics // nil while exact
	sumSq  float64                                      // Σ v² of the sketched values, for Std
	limit  int                                          // 0: ITLExactGaps (tests lower it)
}

func (s *itlStore) max() int {
	if s.limit > 0 {
		return s.limit
	}
	return ITLExactGaps
}

func (s *itlStore) add(v float64) {
	if s.sketch == nil {
		if len(s.exact) < s.max() {
			s.exact = append(s.exact, v)
			return
		}
		s.spill()
	}
	s.sketch.Add(v) // a gap is never NaN, the only value Add refuses
	s.sumSq += v * v
}

// spill moves the exact values into a new sketch.
func (s *itlStore) spill() {
	sk, err := ddsketch.NewDefaultDDSketchWithExactSummaryStatistics(ITLRelativeError)
	if err != nil {
		panic(err) // only for an accuracy outside (0, 1), which ITLRelativeError is not
	}
	for _, v := range s.exact {
		sk.Add(v)
		s.sumSq += v * v
	}
	s.sketch, s.exact = sk, nil
}

// merge adds o's values to s; o is left as it was.
func (s *itlStore) merge(o *itlStore) {
	if s.sketch == nil && o.sketch == nil && len(s.exact)+len(o.exact) <= s.max() {
		s.exact = append(s.exact, o.exact...)
		return
	}
	if s.sketch == nil {
		s.spill()
	}
	if o.sketch != nil {
		s.sketch.MergeWith(o.sketch)
		s.sumSq += o.sumSq
		return
	}
	for _, v := range o.exact {
		s.sketch.Add(v)
		s.sumSq += v * v
	}
}

// dist summarises the values: exactly (NewDist) while they fit, else from the sketch
// with exact count, mean, min and max.
func (s *itlStore) dist() Dist {
	if s.sketch == nil {
		return NewDist(s.exact)
	}
	q, _ := s.sketch.GetValuesAtQuantiles([]float64{0.50, 0.90, 0.95, 0.99})
	lo, _ := s.sketch.GetMinValue()
	hi, _ := s.sketch.GetMaxValue()
	n := s.sketch.GetCount()
	mean := s.sketch.GetSum() / n
	// Σv²/n − mean² can dip below zero by rounding when every gap is alike.
	std := math.Sqrt(math.Max(0, s.sumSq/n-mean*mean))
	return Dist{N: int(n), P50: q[0], P90: q[1], P99: q[3], Mean: mean, Min: lo, Max: hi, P95: q[2], Std: std}
}
