package stats

import "math"

// sketch is a mergeable quantile sketch with a relative-error guarantee (the
// DDSketch of Masson, Rim and Lee, VLDB 2019): a value v > 0 goes into bucket
// ceil(log_γ v) with γ = (1+α)/(1−α), and a bucket answers for every value in it with
// 2γ^i/(γ+1), within α of each. Count, sum, min and max are kept exactly. Durations and
// rates are never negative; a zero (or a value too small to take a logarithm of) has a
// bucket of its own. Buckets are dense from the lowest key seen: a run's figures span
// a few decades, a few thousand buckets at α = 1%. Its own code, not a library's, so
// that what plans and load agents link stays small (the library brought protobuf).
type sketch struct {
	gamma, logGamma float64
	offset          int       // key of counts[0]
	counts          []float64 // counts[k-offset] values in bucket k
	zeros           float64   // values ≤ minPositive
	n, sum          float64
	lo, hi          float64
}

// minPositive is the smallest value that gets a logarithmic bucket; below it a value
// counts as zero (a gap of less than a femtosecond).
const minPositive = 1e-15

func newSketch(alpha float64) *sketch {
	g := (1 + alpha) / (1 - alpha)
	return &sketch{gamma: g, logGamma: math.Log(g), lo: math.Inf(1), hi: math.Inf(-1)}
}

func (s *sketch) key(v float64) int { return int(math.Ceil(math.Log(v) / s.logGamma)) }

// value is what bucket k answers: the point within α of every value in (γ^(k−1), γ^k].
func (s *sketch) value(k int) float64 { return 2 * math.Pow(s.gamma, float64(k)) / (s.gamma + 1) }

// add counts v, w times.
func (s *sketch) add(v, w float64) {
	s.n += w
	s.sum += v * w
	s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
	if v <= minPositive {
		s.zeros += w
		return
	}
	s.addKey(s.key(v), w)
}

func (s *sketch) addKey(k int, w float64) {
	switch {
	case len(s.counts) == 0:
		s.offset, s.counts = k, []float64{0}
	case k < s.offset:
		grown := make([]float64, len(s.counts)+s.offset-k)
		copy(grown[s.offset-k:], s.counts)
		s.offset, s.counts = k, grown
	case k >= s.offset+len(s.counts):
		s.counts = append(s.counts, make([]float64, k-s.offset-len(s.counts)+1)...)
	}
	s.counts[k-s.offset] += w
}

// merge adds o's values to s (both made with the same α).
func (s *sketch) merge(o *sketch) {
	if o.n == 0 {
		return
	}
	s.n += o.n
	s.sum += o.sum
	s.lo, s.hi = math.Min(s.lo, o.lo), math.Max(s.hi, o.hi)
	s.zeros += o.zeros
	for i, c := range o.counts {
		if c > 0 {
			s.addKey(o.offset+i, c)
		}
	}
}

// quantile is the value at rank q·(n−1) (0 ≤ q ≤ 1), within α of the exact value at
// that rank, and never outside [min, max].
func (s *sketch) quantile(q float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	rank := q * (s.n - 1)
	v := s.hi
	if cum := s.zeros; cum > rank {
		v = 0
	} else {
		for i, c := range s.counts {
			if cum += c; cum > rank {
				v = s.value(s.offset + i)
				break
			}
		}
	}
	return math.Min(math.Max(v, s.lo), s.hi)
}
