package executor

import (
	"math"
	"testing"
)

func TestLineFit(t *testing.T) {
	// 1.3 tokens a word plus 12 of template, with one count off by one.
	f := lineFit([]float64{10, 100, 200, 400}, []float64{25, 142, 272, 533})
	if math.Abs(f.TokensPerWord-1.3) > 0.01 || math.Abs(f.Overhead-12) > 1 || f.MaxErrorPct <= 0 || f.MaxErrorPct > 5 {
		t.Fatalf("fit = %+v", f)
	}
	if w := f.Words(142); w < 99 || w > 101 {
		t.Errorf("Words(142) = %d, want about 100", w)
	}
	if w := (Fit{}).Words(100); w != 75 {
		t.Errorf("without a fit Words(100) = %d, want the rough 75", w)
	}
	if f := lineFit([]float64{5, 5}, []float64{9, 9}); f.TokensPerWord != 0 {
		t.Errorf("a fit through one point: %+v", f)
	}
}
