// Package stats turns measured requests (backends.Sample) into the figures planrun
// reports: latency distributions, throughput over a measured window, failures by class,
// the median across repeat runs, the stability verdict and reference verdicts.
package stats

import (
	"math"
	"slices"
)

// Dist summarises a distribution. Percentiles use linear interpolation between the
// closest ranks (numpy's default "linear" method, the one vLLM's benchmark reports):
// for sorted values x[0..n-1] and a fraction p, h = (n−1)·p and
// P = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). An empty distribution has N = 0 and NaN
// everywhere else, so "not measured" never reads as zero. Std is the population standard
// deviation (numpy.std's default, as vLLM reports it).
type Dist struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	P95  float64 `json:"p95"`
	Std  float64 `json:"std"`
	// CI holds the figures' confidence intervals where the Accumulator worked them out
	// (nil in a Dist built from bare values, and in a median across runs).
	CI *DistCI `json:"ci,omitempty"`
}

// Percentiles are the percentiles a Dist holds, in the order outputs show them.
var Percentiles = []int{50, 90, 95, 99}

// At returns the distribution's p-th percentile for p in Percentiles, and false for any
// other p.
func (d Dist) At(p int) (float64, bool) {
	switch p {
	case 50:
		return d.P50, true
	case 90:
		return d.P90, true
	case 95:
		return d.P95, true
	case 99:
		return d.P99, true
	}
	return math.NaN(), false
}

// NewDist summarises values. It sorts values in place (callers hand over scratch
// slices, which keeps aggregation of large levels to one allocation per figure).
func NewDist(values []float64) Dist {
	if len(values) == 0 {
		nan := math.NaN()
		return Dist{P50: nan, P90: nan, P99: nan, Mean: nan, Min: nan, Max: nan, P95: nan, Std: nan}
	}
	slices.Sort(values)
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(len(values))
	var sq float64
	for _, v := range values {
		sq += (v - mean) * (v - mean)
	}
	return Dist{
		N:    len(values),
		P50:  Percentile(values, 0.50),
		P90:  Percentile(values, 0.90),
		P99:  Percentile(values, 0.99),
		Mean: mean,
		Min:  values[0],
		Max:  values[len(values)-1],
		P95:  Percentile(values, 0.95),
		Std:  math.Sqrt(sq / float64(len(values))),
	}
}

// Percentile returns the p-quantile (0 ≤ p ≤ 1) of already sorted values by linear
// interpolation between closest ranks, as numpy.percentile does by default. It is NaN
// for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if p <= 0 {
		return sorted[0]
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo+1 >= n { // p ≥ 1 too
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Median is the median of values (not modified), NaN ones skipped; NaN for none.
func Median(values []float64) float64 { return median(values) }

// median of values (not modified); NaN for none. NaN inputs are skipped, so a run that
// measured nothing does not poison the median across runs.
func median(values []float64) float64 {
	s := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return Percentile(s, 0.5)
}
