package ledger

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

func TestShiftPoint(t *testing.T) {
	for _, c := range []struct {
		in   string
		p    int
		want string
	}{
		{"0.0100807651", 3, "10.0807651"}, {"10.0807651", -3, "0.0100807651"}, {"1.5", 0, "1.5"},
		{"0.0044", 3, "4.4"}, {"4.4", -3, "0.0044"}, {"123", 3, "123000"}, {"123", -5, "0.00123"},
		{"-2.5e-07", 3, "-0.00025"}, {"1e+21", -3, "1000000000000000000"}, {"0", 3, "0"}, {"0.000", -3, "0"},
		{"007.50", 1, "75"},
	} {
		if got := shiftPoint(c.in, c.p); got != c.want {
			t.Errorf("shiftPoint(%q, %d) = %q, want %q", c.in, c.p, got, c.want)
		}
	}
}

// Every float64 the ledger writes as a scaled figure reads back bit for bit, through the
// JSON text as the model_mix column and summary.json carry it. 0.0100807651 s as ms read
// back as 0.010080765100000002 when the figure was multiplied and divided (a TPOT p99 of
// a model mix, TestModelMixFiguresPerModel, 1 run in 5).
func TestFigureRoundTripsExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0.0100807651, 0.010080765100000002, 1e-300, 5e-324, math.MaxFloat64, -0.0033, 0}
	for range 100000 {
		// Latencies of ns counts divided by token counts, and values of every magnitude.
		vals = append(vals, float64(r.Int64N(1e10))/1e9/float64(1+r.IntN(500)),
			math.Float64frombits(r.Uint64()&^(0x7ff<<52)|uint64(900+r.IntN(250))<<52))
	}
	for _, v := range vals {
		for _, p := range []int{0, 3} {
			b, err := json.Marshal(figure(v, p))
			if err != nil {
				t.Fatal(err)
			}
			var n *json.Number
			if err := json.Unmarshal(b, &n); err != nil {
				t.Fatalf("%v: %s does not read back: %v", v, b, err)
			}
			if got := unfigure(n, p); got != v {
				t.Fatalf("%v (%d) written as %s reads back as %v", v, p, b, got)
			}
		}
	}
	if figure(math.NaN(), 3) != nil || !math.IsNaN(unfigure(nil, 3)) {
		t.Errorf("NaN is not null both ways")
	}
}
