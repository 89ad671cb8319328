package ledger

import (
	"math"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// A reference block's tpot_ms is the row's median TPOT in milliseconds, its ttft_s the
// median TTFT in seconds.
func TestReferenceFigureUnits(t *testing.T) {
	r := NewRow()
	r.TPOT.P50, r.TTFT.P50 = 0.025, 0.4
	if got := ReferenceFigure(&r, "tpot_ms"); math.Abs(got-25) > 1e-9 {
		t.Errorf("tpot_ms = %v, want 25", got)
	}
	if got := ReferenceFigure(&r, "ttft_s"); got != 0.4 {
		t.Errorf("ttft_s = %v, want 0.4", got)
	}
}

// result.error_rate is failed / requests, null without requests.
func TestErrorRateField(t *testing.T) {
	var f ResultField
	for _, rf := range ResultFields {
		if rf.Name == "error_rate" {
			f = rf
		}
	}
	r := NewRow()
	r.Requests, r.Failed = 8, 2
	if got := f.Value(&r); !got.RawEquals(cty.NumberFloatVal(0.25)) {
		t.Errorf("error_rate of 2 failed in 8 = %#v, want 0.25", got)
	}
	r.Requests, r.Failed = 0, 0
	if got := f.Value(&r); !got.IsNull() {
		t.Errorf("error_rate without requests = %#v, want null", got)
	}
}

// A field in ms reads the Row's seconds times 1000: result.tpot_p50_ms of a 0.125 s TPOT
// is 125, result.conn_setup_max_ms of a 0.25 s set-up 250.
func TestResultFieldsScaleToTheirUnit(t *testing.T) {
	r := NewRow()
	r.TPOT.P50, r.ConnectSetup.Max = 0.125, 0.25
	vals := ResultValues(&r)
	for name, want := range map[string]float64{"tpot_p50_ms": 125, "conn_setup_max_ms": 250} {
		if got := vals[name]; got.IsNull() || !got.RawEquals(cty.NumberFloatVal(want)) {
			t.Errorf("result.%s = %#v, want %v", name, got, want)
		}
	}
}
