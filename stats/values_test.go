package stats

import (
	"math"
	"reflect"
	"testing"

	"github.com/planrun/planrun/backends"
)

// Past its exact limit the ITL store answers from the sketch: percentiles within the
// stated relative error of the exact ones, count, mean, min and max still exact.
func TestITLSketchWithinStatedError(t *testing.T) {
	samples := make([]backends.Sample, 20_000)
	for i := range samples {
		arr := []int{40 + i%30}
		for j := 1; j < 12; j++ { // gaps of 1 to 97 ms, spread unevenly
			arr = append(arr, arr[j-1]+1+(i*7+j*j*13)%97)
		}
		samples[i] = ok(i, 12, backends.TokensUsage, arr...)
	}
	exact := Summarize(samples, Window{}, Target{}).ITL
	a := NewAccumulator(Target{})
	a.itl.limit = 1000
	for i := range samples {
		a.addSample(&samples[i])
	}
	if a.itl.sketch == nil {
		t.Fatal("store did not spill into the sketch past its limit")
	}
	l := a.Summary(Window{})
	got := l.ITL
	if l.ITLRelativeError != ITLRelativeError || Summarize(samples, Window{}, Target{}).ITLRelativeError != 0 {
		t.Errorf("ITLRelativeError %v from the sketch, want %v (and 0 when exact)", l.ITLRelativeError, ITLRelativeError)
	}
	if got.N != exact.N || !near(got.Min, exact.Min) || !near(got.Max, exact.Max) || math.Abs(got.Mean-exact.Mean) > 1e-12 {
		t.Errorf("sketch dist %+v, exact %+v: count, min, max and mean must stay exact", got, exact)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", got.P50, exact.P50}, {"p90", got.P90, exact.P90}, {"p95", got.P95, exact.P95}, {"p99", got.P99, exact.P99}} {
		if math.Abs(c.got-c.want) > ITLRelativeError*c.want {
			t.Errorf("itl %s = %v, exact %v: beyond the stated %v relative error", c.name, c.got, c.want, ITLRelativeError)
		}
	}
}

// Pooling merges the runs' stores: exact while the sum fits, a sketch beyond.
func TestITLMerge(t *testing.T) {
	a, b := &valueStore{limit: 4}, &valueStore{limit: 4}
	for _, v := range []float64{1, 2} {
		a.add(v)
		b.add(v + 2)
	}
	a.merge(b)
	if a.sketch != nil || !reflect.DeepEqual(a.exact, []float64{1, 2, 3, 4}) {
		t.Fatalf("merge of 2+2 under a limit of 4: exact %v sketch %v", a.exact, a.sketch != nil)
	}
	a.merge(b)
	if d := a.dist(); a.sketch == nil || d.N != 6 || d.Min != 1 || d.Max != 4 {
		t.Fatalf("merge past the limit: sketch %v, dist %+v", a.sketch != nil, d)
	}
	// The sketch keeps the spread exactly: Σv² of every value, merged ones included.
	if got, want := a.dist().Std, NewDist([]float64{1, 2, 3, 4, 3, 4}).Std; math.Abs(got-want) > 1e-12 {
		t.Fatalf("std after the merge %v, want %v", got, want)
	}
}

// Runs given as accumulators summarise exactly as the same runs given as samples.
func TestSummarizeRunsFromAccumulators(t *testing.T) {
	all := manySamples(3000)
	target := Target{MaxTokens: 16, PromptTokens: 8}
	var fromSamples, fromAcc []MeasuredRun
	for i := 0; i < 3; i++ {
		part := all[i*1000 : (i+1)*1000]
		fromSamples = append(fromSamples, MeasuredRun{Samples: part})
		acc := NewAccumulator(target)
		for j := range part {
			acc.addSample(&part[j])
		}
		fromAcc = append(fromAcc, MeasuredRun{Acc: acc})
	}
	want := SummarizeRuns(fromSamples, target)
	got := SummarizeRuns(fromAcc, target)
	if !reflect.DeepEqual(nanFree(got), nanFree(want)) {
		t.Errorf("from accumulators:\n%+v\nfrom samples:\n%+v", got.Pooled, want.Pooled)
	}
	// Both sides above feed the same Accumulator.Add; what merging the runs must give is
	// what summarising every sample at once gives (rates aside: the windows differ).
	one := Summarize(all, Window{}, target)
	p := got.Pooled
	for _, c := range []struct {
		name      string
		got, want Dist
	}{{"ttft", p.TTFT, one.TTFT}, {"tpot", p.TPOT, one.TPOT}, {"itl", p.ITL, one.ITL}, {"e2e", p.E2E, one.E2E}, {"decode rate", p.DecodeRate, one.DecodeRate}} {
		if !sameDist(c.got, c.want) {
			t.Errorf("pooled %s %+v, all samples at once %+v", c.name, c.got, c.want)
		}
	}
	if p.Requests != one.Requests || p.Failed != one.Failed || p.OutputTokens != one.OutputTokens || p.EarlyStops != one.EarlyStops ||
		!reflect.DeepEqual(p.Failures, one.Failures) || p.TokensPerChunk != one.TokensPerChunk {
		t.Errorf("pooled counts %+v, all samples at once %+v", p, one)
	}
}

// nanFree replaces NaN (never equal to itself) so summaries compare with DeepEqual.
func nanFree(r Runs) Runs {
	for i := range r.PerRun {
		noNaN(&r.PerRun[i])
	}
	noNaN(&r.Pooled)
	noNaN(&r.Median)
	noNaN(&r.Across)
	if math.IsNaN(r.Spread) {
		r.Spread = -1
	}
	return r
}

// noNaN sets every NaN float under ptr (through structs, pointers and slices) to -1, so
// reflect.DeepEqual can compare what holds NaN for "none".
func noNaN(ptr any) {
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Float64:
			if math.IsNaN(v.Float()) {
				v.SetFloat(-1)
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(ptr).Elem())
}

// sameDist compares two Dists with their intervals' values, not their pointers.
func sameDist(a, b Dist) bool {
	noNaN(&a)
	noNaN(&b)
	return reflect.DeepEqual(a, b)
}
