package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The sketch's quantiles are within α of the exact value at the same rank, on data
// spanning decades (lognormal ITL-like gaps, uniform, a constant, zeros mixed in), for a
// sketch filled whole and for one merged from parts; count, sum, min and max are exact.
func TestSketchRelativeError(t *testing.T) {
	const alpha = 0.01
	rng := rand.New(rand.NewPCG(1, 2))
	sets := map[string][]float64{}
	for name, draw := range map[string]func() float64{
		"lognormal": func() float64 { return math.Exp(rng.NormFloat64()*2 - 5) },
		"uniform":   func() float64 { return rng.Float64() * 3 },
		"constant":  func() float64 { return 0.0125 },
		"zeros":     func() float64 { return float64(rng.IntN(3)) * rng.Float64() },
	} {
		vs := make([]float64, 20001)
		for i := range vs {
			vs[i] = draw()
		}
		sets[name] = vs
	}
	for name, vs := range sets {
		whole, parts := newSketch(alpha), newSketch(alpha)
		for i := 0; i < len(vs); i += 1000 {
			part := newSketch(alpha)
			for _, v := range vs[i:min(i+1000, len(vs))] {
				whole.add(v, 1)
				part.add(v, 1)
			}
			parts.merge(part)
		}
		sorted := slices.Sorted(slices.Values(vs))
		var sum float64
		for _, v := range vs {
			sum += v
		}
		for label, sk := range map[string]*sketch{"whole": whole, "merged": parts} {
			if sk.n != float64(len(vs)) || sk.lo != sorted[0] || sk.hi != sorted[len(sorted)-1] || math.Abs(sk.sum-sum) > 1e-9*math.Abs(sum) {
				t.Errorf("%s %s: n %v sum %v min %v max %v, want %d %v %v %v", name, label, sk.n, sk.sum, sk.lo, sk.hi, len(vs), sum, sorted[0], sorted[len(sorted)-1])
			}
			for _, q := range []float64{0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
				exact := sorted[int(q*float64(len(sorted)-1))]
				got := sk.quantile(q)
				if math.Abs(got-exact) > alpha*exact+1e-12 {
					t.Errorf("%s %s: q%v = %v, exact %v: off by %.3g%%, more than %v%%", name, label, q, got, exact, 100*math.Abs(got-exact)/exact, 100*alpha)
				}
			}
		}
	}
	if q := newSketch(alpha).quantile(0.5); !math.IsNaN(q) {
		t.Errorf("empty sketch: q50 %v, want NaN", q)
	}
}
