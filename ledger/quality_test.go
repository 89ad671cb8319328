package ledger

import (
	"math"
	"testing"
)

func TestQualityText(t *testing.T) {
	row := func(quant string, q func(*Quality)) Row {
		r := NewRow()
		r.Quantization, r.CellID = quant, "m/x/"+quant
		q(&r.Quality)
		return r
	}
	for _, tc := range []struct {
		name string
		r    Row
		want string
	}{
		{"unmeasured", row("q8_0", func(*Quality) {}), ""},
		{"reference", row("f16", func(q *Quality) { q.Reference, q.FloorSameTop1Pct = "f16", 100 }), "reference"},
		{"reference not deterministic", row("f16", func(q *Quality) { q.Reference, q.FloorSameTop1Pct = "f16", 93.75 }),
			"reference (not deterministic: 93.8% same top-1 against a rerun)"},
		{"the issue's example", row("q8_0", func(q *Quality) {
			q.Reference, q.SameTop1Pct, q.KLMean, q.FloorSameTop1Pct = "f16", 97.12, 0.01234, 100
		}), "vs f16: 97.1% same top-1, KL 0.012"},
		{"teacher-forced and a floor", row("float16", func(q *Quality) {
			q.Reference, q.SameTop1Pct, q.KLMean, q.LogProbDelta, q.FloorSameTop1Pct = "bfloat16", 99.5, 0.00031, -0.0042, 98
		}), "vs bfloat16: 99.5% same top-1, KL 0.00031, Δlogp -0.004 (floor 98.0%)"},
		{"reference cell by id", row("q4", func(q *Quality) { q.Reference = "m/x/q4" }), "reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := QualityText(tc.r); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestQualityRoundTrip(t *testing.T) {
	r := NewRow()
	r.Quality.Reference, r.Quality.Method, r.Quality.Prompts = "f16", QualityFollow, 16
	r.Quality.SameTop1Pct, r.Quality.SameTop1CI.Lo, r.Quality.SameTop1CI.Hi = 85.7, 80.25, 91.5
	got, err := ParseRecord(r.Record())
	if err != nil {
		t.Fatal(err)
	}
	q := got.Quality
	if q.Reference != "f16" || q.Method != QualityFollow || q.Prompts != 16 || q.SameTop1Pct != 85.7 ||
		q.SameTop1CI.Lo != 80.25 || q.SameTop1CI.Hi != 91.5 || !math.IsNaN(q.KLMean) || q.KLCI.Bounded() {
		t.Errorf("read back %+v", q)
	}
	vals := ResultValues(&got)
	if v := vals["quality_same_top1_pct_lo"]; v.IsNull() || v.AsBigFloat().String() != "80.25" {
		t.Errorf("result.quality_same_top1_pct_lo = %#v", v)
	}
	if !vals["quality_kl_mean_nats"].IsNull() {
		t.Error("an unmeasured KL is not null")
	}
}
