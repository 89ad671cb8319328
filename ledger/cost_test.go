package ledger

import (
	"math"
	"testing"

	"github.com/planrun/planrun/stats"
)

// TestSetCost holds the cost per million output tokens to hand-computed cases: a
// gateway's token prices (exact, input tokens per output token included), a machine's
// hour over the tokens it makes in an hour (its interval from throughput's, ends
// swapped), both together, and no cost without a price or output tokens.
func TestSetCost(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name                 string
		in, out, hour        float64
		prompt               float64 // server-counted mean prompt tokens; NaN: not counted
		asked                int
		ok, tokens           int
		tokS, tokLo, tokHi   float64
		want, wantLo, wantHi float64
	}{
		// 10 requests of 100 prompt tokens, 500 output tokens: 2·1000/500 + 8 = 12 per Mtok.
		{name: "gateway", in: 2, out: 8, hour: nan, prompt: 100, ok: 10, tokens: 500, tokS: 50, tokLo: 40, tokHi: 60,
			want: 12, wantLo: 12, wantHi: 12},
		// The server counted no prompt: the asked length stands in.
		{name: "gateway, prompt asked", in: 2, out: 8, hour: nan, prompt: nan, asked: 50, ok: 10, tokens: 500, tokS: 50,
			want: 10, wantLo: 10, wantHi: 10},
		// 3.6 per hour at 100 tok/s: 0.36 M tokens an hour, 10 per Mtok; 80–125 tok/s: 8–12.5.
		{name: "hardware", in: nan, out: nan, hour: 3.6, prompt: 100, ok: 10, tokens: 500, tokS: 100, tokLo: 80, tokHi: 125,
			want: 10, wantLo: 8, wantHi: 12.5},
		{name: "hardware, unbounded throughput", in: nan, out: nan, hour: 3.6, prompt: 100, ok: 10, tokens: 500, tokS: 100, tokLo: nan, tokHi: nan,
			want: 10, wantLo: nan, wantHi: nan},
		{name: "both", in: 2, out: 8, hour: 3.6, prompt: 100, ok: 10, tokens: 500, tokS: 100, tokLo: 80, tokHi: 125,
			want: 22, wantLo: 20, wantHi: 24.5},
		{name: "no price", in: nan, out: nan, hour: nan, prompt: 100, ok: 10, tokens: 500, tokS: 100, want: nan, wantLo: nan, wantHi: nan},
		{name: "no output", in: 2, out: 8, hour: 3.6, prompt: 100, ok: 0, tokens: 0, tokS: nan, want: nan, wantLo: nan, wantHi: nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRow()
			r.PriceInputPerMTok, r.PriceOutputPerMTok, r.PricePerHour, r.Currency = tc.in, tc.out, tc.hour, "USD"
			r.PromptTokensActual, r.PromptTokensRequested, r.Succeeded, r.OutputTokens = tc.prompt, tc.asked, tc.ok, tc.tokens
			r.OutputTokS, r.CI.OutputTokS = tc.tokS, stats.Interval{Lo: tc.tokLo, Hi: tc.tokHi}
			r.SetCost()
			same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-9 }
			if !same(r.CostPerMTok, tc.want) || !same(r.CostCI.Lo, tc.wantLo) || !same(r.CostCI.Hi, tc.wantHi) {
				t.Errorf("cost %v [%v, %v], want %v [%v, %v]", r.CostPerMTok, r.CostCI.Lo, r.CostCI.Hi, tc.want, tc.wantLo, tc.wantHi)
			}
		})
	}
}

// TestCostRoundTrip: the prices, the currency and the cost with its interval survive
// the CSV, and result.cost_per_mtok and its ends read them.
func TestCostRoundTrip(t *testing.T) {
	r := NewRow()
	r.CellID, r.Status, r.CI.Confidence = "m/a", StatusOK, 0.95
	r.PriceInputPerMTok, r.PriceOutputPerMTok, r.PricePerHour, r.Currency = 2, 8, 3.6, "CNY"
	r.PromptTokensActual, r.Succeeded, r.OutputTokens, r.OutputTokS = 100, 10, 500, 100
	r.CI.OutputTokS = stats.Interval{Lo: 80, Hi: 125}
	r.SetCost()
	back, err := ParseRecord(r.Record())
	if err != nil {
		t.Fatal(err)
	}
	if back.Currency != "CNY" || back.PricePerHour != 3.6 || back.CostPerMTok != 22 || back.CostCI != (stats.Interval{Lo: 20, Hi: 24.5}) {
		t.Errorf("read back %+v", back.Cost)
	}
	vals := ResultValues(&back)
	for name, want := range map[string]float64{"cost_per_mtok": 22, "cost_per_mtok_lo": 20, "cost_per_mtok_hi": 24.5} {
		if f, _ := vals[name].AsBigFloat().Float64(); vals[name].IsNull() || f != want {
			t.Errorf("result.%s = %v, want %v", name, vals[name], want)
		}
	}
}
