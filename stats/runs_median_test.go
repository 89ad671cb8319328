package stats

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
)

// setNumbers sets every float64 and int field of v (recursing into structs) to x.
func setNumbers(v reflect.Value, x float64) {
	for f := range v.NumField() {
		switch field := v.Field(f); field.Kind() {
		case reflect.Struct:
			setNumbers(field, x)
		case reflect.Float64:
			field.SetFloat(x)
		case reflect.Int:
			field.SetInt(int64(x))
		}
	}
}

// eachNumber calls fn with the dotted name and value of every float64 and int field.
func eachNumber(v reflect.Value, prefix string, fn func(string, float64)) {
	for f := range v.NumField() {
		name := prefix + v.Type().Field(f).Name
		switch field := v.Field(f); field.Kind() {
		case reflect.Struct:
			eachNumber(field, name+".", fn)
		case reflect.Float64:
			fn(name, field.Float())
		case reflect.Int:
			fn(name, float64(field.Int()))
		}
	}
}

// Every number a Summary holds, now and once a field is added, gets its median across
// runs: runs of 1, 5 and 3 give 3 in every field, and two runs of 1 and 2 give 1.5
// (an int rounds to 2).
func TestMedianLevelEveryNumber(t *testing.T) {
	levels := make([]Summary, 3)
	for i, x := range []float64{1, 5, 3} {
		setNumbers(reflect.ValueOf(&levels[i]).Elem(), x)
	}
	m := medianLevel(levels)
	n := 0
	eachNumber(reflect.ValueOf(&m).Elem(), "", func(name string, v float64) {
		n++
		if v != 3 {
			t.Errorf("median %s = %v, want 3", name, v)
		}
	})
	if n < 80 {
		t.Fatalf("only %d numeric fields seen", n)
	}

	two := make([]Summary, 2)
	setNumbers(reflect.ValueOf(&two[0]).Elem(), 1)
	setNumbers(reflect.ValueOf(&two[1]).Elem(), 2)
	m = medianLevel(two)
	if m.TTFT.P50 != 1.5 || m.Delivered.InFlightMean != 1.5 {
		t.Errorf("float medians %v, %v, want 1.5", m.TTFT.P50, m.Delivered.InFlightMean)
	}
	if m.Requests != 2 || m.TTFT.N != 2 || m.Delivered.InFlightMax != 2 {
		t.Errorf("int medians %d, %d, %d, want 2 (1.5 rounded)", m.Requests, m.TTFT.N, m.Delivered.InFlightMax)
	}
}

// NaN figures (a run that measured none) are left out of a median; an int no run has
// stays 0, and a float no run has is NaN.
func TestMedianLevelSkipsNaN(t *testing.T) {
	levels := []Summary{{OutputTokS: math.NaN()}, {OutputTokS: 4}, {OutputTokS: 6}}
	if m := medianLevel(levels); m.OutputTokS != 5 {
		t.Errorf("median tok/s = %v, want 5 (NaN left out)", m.OutputTokS)
	}
	m := medianLevel(nil)
	if m.Requests != 0 || !math.IsNaN(m.OutputTokS) {
		t.Errorf("no runs: requests %d, tok/s %v; want 0 and NaN", m.Requests, m.OutputTokS)
	}
}

// An embeddings level's runs have no TTFT: their stability is judged on median E2E,
// so two runs are not "single-run".
func TestEmbeddingsStabilityOnE2E(t *testing.T) {
	run := func(e2e time.Duration) MeasuredRun {
		a := NewAccumulator(Target{})
		for range 3 {
			a.Add(executor.Event{Sample: &backends.Sample{Start: time.Unix(100, 0), End: e2e, Inputs: 4, PromptTokens: 32}})
		}
		return MeasuredRun{Acc: a}
	}
	r := SummarizeRuns([]MeasuredRun{run(100 * time.Millisecond), run(105 * time.Millisecond)}, Target{})
	if r.Stability != Stable || math.IsNaN(r.Spread) {
		t.Fatalf("stability %q, spread %v; want stable on E2E", r.Stability, r.Spread)
	}
	r = SummarizeRuns([]MeasuredRun{run(100 * time.Millisecond), run(200 * time.Millisecond)}, Target{})
	if r.Stability != Unstable {
		t.Fatalf("stability %q, spread %v; want unstable: E2E doubled", r.Stability, r.Spread)
	}
}
