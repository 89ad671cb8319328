package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultConfidence is the confidence of every interval unless a workload sets its own
// (confidence = 90 | 95 | 99).
const DefaultConfidence = 0.95

// Confidences are the confidence levels a plan may ask for, as fractions.
var Confidences = []float64{0.90, 0.95, 0.99}

// Interval is a confidence interval [Lo, Hi] on one figure. A side the sample cannot
// bound is NaN (written empty, or null in JSON), and Need then says how many values
// (requests, or runs for a figure across runs) would bound it at the same confidence.
type Interval struct {
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	Need int     `json:"needed,omitempty"`
}

// Unbounded is the interval of a figure nothing bounds.
func Unbounded(need int) Interval { return Interval{Lo: math.NaN(), Hi: math.NaN(), Need: need} }

// Bounded reports whether both ends are known.
func (iv Interval) Bounded() bool { return !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi) }

// HalfWidth is the larger distance from v to an end, relative to v (0.004 is ±0.4%);
// NaN when the interval is not bounded or v is not positive.
func (iv Interval) HalfWidth(v float64) float64 {
	if !iv.Bounded() || math.IsNaN(v) || v <= 0 {
		return math.NaN()
	}
	return math.Max(v-iv.Lo, iv.Hi-v) / v
}

// Scale multiplies both ends by f (seconds to milliseconds, a fraction to %).
func (iv Interval) Scale(f float64) Interval { iv.Lo *= f; iv.Hi *= f; return iv }

// MarshalJSON writes an unbounded end as null, which encoding/json cannot do for NaN.
func (iv Interval) MarshalJSON() ([]byte, error) {
	end := func(v float64) any {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	return json.Marshal(struct {
		Lo   any `json:"lo"`
		Hi   any `json:"hi"`
		Need int `json:"needed,omitempty"`
	}{end(iv.Lo), end(iv.Hi), iv.Need})
}

// UnmarshalJSON reads MarshalJSON's form back (null is NaN).
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v struct {
		Lo, Hi *float64
		Need   int `json:"needed"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*iv = Unbounded(v.Need)
	if v.Lo != nil {
		iv.Lo = *v.Lo
	}
	if v.Hi != nil {
		iv.Hi = *v.Hi
	}
	return nil
}

// DistCI holds the intervals of a distribution's figures, at Confidence.
type DistCI struct {
	Confidence float64  `json:"confidence"`
	P50        Interval `json:"p50"`
	P90        Interval `json:"p90"`
	P95        Interval `json:"p95"`
	P99        Interval `json:"p99"`
	Mean       Interval `json:"mean"`
}

// At returns the interval of the p-th percentile for p in Percentiles.
func (c *DistCI) At(p int) (Interval, bool) {
	switch p {
	case 50:
		return c.P50, true
	case 90:
		return c.P90, true
	case 95:
		return c.P95, true
	case 99:
		return c.P99, true
	}
	return Unbounded(0), false
}

// CheckConfidence accepts 0.90, 0.95 and 0.99.
func CheckConfidence(c float64) error {
	for _, ok := range Confidences {
		if math.Abs(c-ok) < 1e-9 {
			return nil
		}
	}
	return fmt.Errorf("confidence %g: want 90, 95 or 99 (percent)", c*100)
}

// binomialRanks are the order statistics that bound the p-quantile of n independent
// values at confidence conf: with B ~ Binomial(n, p) the count of values below the
// quantile, the interval [x₍l₎, x₍u₎] (1-based ranks) holds the quantile with probability
// P(l ≤ B < u) ≥ conf, each tail at most (1 − conf)/2. l is 0 when no rank bounds it
// from below, u is n+1 when none bounds it from above.
func binomialRanks(n int, p, conf float64) (l, u int) {
	tail := (1 - conf) / 2
	b := distuv.Binomial{N: float64(n), P: p}
	cdf := func(k int) float64 { // P(B ≤ k)
		if k < 0 {
			return 0
		}
		if k >= n {
			return 1
		}
		return b.CDF(float64(k))
	}
	// l: the largest rank with P(B ≤ l−1) ≤ tail (P(B < l), the chance the quantile is
	// below x₍l₎).
	l = sortSearch(n+1, func(k int) bool { return cdf(k) > tail }) // smallest k with P(B ≤ k) > tail
	// so P(B ≤ l−1) ≤ tail: rank l bounds from below; l = 0 means none does.
	// u: the smallest rank with P(B ≥ u) ≤ tail, i.e. P(B ≤ u−1) ≥ 1 − tail.
	u = sortSearch(n+1, func(k int) bool { return cdf(k) >= 1-tail }) + 1
	return l, u
}

// sortSearch is sort.Search without the import cycle of a closure over ints.
func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// RequestsToBound is the fewest independent values whose order statistics bound the
// p-quantile on both sides at confidence conf: a p99 needs 368 at 95% (0.99ⁿ ≤ 2.5%), a median 6.
func RequestsToBound(p, conf float64) int {
	tail := (1 - conf) / 2
	need := 1
	for _, q := range []float64{p, 1 - p} {
		if q > 0 && q < 1 {
			need = max(need, int(math.Ceil(math.Log(tail)/math.Log(q))))
		}
	}
	return need
}

// QuantileInterval is the distribution-free interval of the p-quantile of sorted, the
// values of n independent draws: from the order statistics at binomial ranks
// (binomialRanks, quantileInterval). Ends no rank bounds are NaN, with Need set.
func QuantileInterval(sorted []float64, p, conf float64) Interval {
	return quantileInterval(len(sorted), p, conf, func(rank int) float64 { return sorted[rank-1] })
}

// quantileInterval bounds the p-quantile of n values whose rank-th smallest (1-based)
// at reads. Each end sits between the two order statistics whose miss chances straddle
// the tail (1 − conf)/2, interpolated linearly in that chance (Nyblom 1992; Hutson 1999):
// the bare order statistics of binomialRanks are conservative by up to a few percent
// (a p99 from 500 values covers 98%), the interpolated ends cover close to conf itself.
func quantileInterval(n int, p, conf float64, at func(rank int) float64) Interval {
	need := RequestsToBound(p, conf)
	if n == 0 {
		return Unbounded(need)
	}
	tail := (1 - conf) / 2
	b := distuv.Binomial{N: float64(n), P: p}
	cdf := func(k int) float64 { // P(B ≤ k), B the count of values below the quantile
		switch {
		case k < 0:
			return 0
		case k >= n:
			return 1
		}
		return b.CDF(float64(k))
	}
	l, u := binomialRanks(n, p, conf)
	iv := Unbounded(0)
	if l >= 1 {
		// x₍l₎ misses (lies above the quantile) with chance cdf(l−1) ≤ tail, x₍l+1₎ with cdf(l) > tail.
		iv.Lo = at(l)
		if l < n {
			if w := cdf(l) - cdf(l-1); w > 0 {
				iv.Lo += (tail - cdf(l-1)) / w * (at(l+1) - iv.Lo)
			}
		}
	}
	if u <= n {
		// x₍u₎ misses (lies below) with chance 1 − cdf(u−1) ≤ tail, x₍u−1₎ with more.
		iv.Hi = at(u)
		if u > 1 {
			if w := cdf(u-1) - cdf(u-2); w > 0 {
				iv.Hi -= (tail - (1 - cdf(u-1))) / w * (iv.Hi - at(u-1))
			}
		}
	}
	if !iv.Bounded() {
		iv.Need = max(need, n+1)
	}
	return iv
}

// meanInterval is the t interval for a mean of n values with sample standard deviation s.
func meanInterval(n int, mean, s, conf float64) Interval {
	if n < 2 || math.IsNaN(mean) || math.IsNaN(s) {
		return Unbounded(2)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-conf)/2)
	h := t * s / math.Sqrt(float64(n))
	return Interval{Lo: mean - h, Hi: mean + h}
}

// MedianOfRuns is the distribution-free interval of the median run's figure from the
// figures of k runs (NaN ones skipped): the order statistics at binomial ranks for
// p = 0.5. Fewer runs than RequestsToBound(0.5, conf) (6 at 95%) bound nothing, and Need
// says how many runs would.
func MedianOfRuns(figures []float64, conf float64) Interval {
	s := make([]float64, 0, len(figures))
	for _, v := range figures {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return QuantileInterval(s, 0.5, conf)
}

// MinMaxConfidence is the confidence with which the smallest and largest of k runs
// bound the median run: 1 − 2·0.5ᵏ (75% for 3 runs); 0 for fewer than two.
func MinMaxConfidence(k int) float64 {
	if k < 2 {
		return 0
	}
	return 1 - 2*math.Pow(0.5, float64(k))
}

// ProportionInterval is the Clopper–Pearson (exact binomial) interval of a proportion
// with k successes out of n: the share of requests that met an SLO. Bounded for any
// n ≥ 1 (it is [0, x] or [x, 1] at the ends); unbounded for none.
func ProportionInterval(k, n int, conf float64) Interval {
	if n <= 0 {
		return Unbounded(1)
	}
	tail := (1 - conf) / 2
	iv := Interval{Lo: 0, Hi: 1}
	if k > 0 {
		iv.Lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(tail)
	}
	if k < n {
		iv.Hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - tail)
	}
	return iv
}

// distCI is the intervals of a distribution behind n independent draws (requests),
// whose rank-th smallest (1-based, of n) at reads, with the mean's from the values'
// exact mean and population standard deviation.
func distCI(n int, mean, std, conf float64, at func(rank int) float64) *DistCI {
	c := &DistCI{Confidence: conf}
	for _, p := range Percentiles {
		iv := quantileInterval(n, float64(p)/100, conf, at)
		switch p {
		case 50:
			c.P50 = iv
		case 90:
			c.P90 = iv
		case 95:
			c.P95 = iv
		case 99:
			c.P99 = iv
		}
	}
	s := std // the population deviation; the t interval wants the sample's
	if n > 1 {
		s = std * math.Sqrt(float64(n)/float64(n-1))
	}
	c.Mean = meanInterval(n, mean, s, conf)
	return c
}
