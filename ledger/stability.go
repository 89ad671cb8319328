package ledger

import (
	"math"

	"github.com/planrun/planrun/stats"
)

// Spreads are each headline figure's spread across runs (fractions: 0.12 is 12%), by
// the seed's rule that Row.Stability applies to the worst of them; StabilityFigure names
// that worst figure (stats.FigureTTFT, FigureE2E, FigureTPOT, FigureThroughput; empty
// in a ledger written before planrun judged more than TTFT, whose spread it then was).
// An embeddings row's TTFTSpread is its median E2E's: it has no TTFT.
type Spreads struct {
	StabilityFigure                      string
	TTFTSpread, TPOTSpread, OutputSpread float64
}

func newSpreads() Spreads {
	nan := math.NaN()
	return Spreads{TTFTSpread: nan, TPOTSpread: nan, OutputSpread: nan}
}

// setSpreads fills the row's stability from its level's runs: the worst figure's
// verdict and spread, and each figure's spread.
func (r *Row) setSpreads(s stats.Runs) {
	r.Stability, r.StabilitySpread, r.StabilityFigure = string(s.Stability), s.Spread, s.StabilityFigure
	r.TTFTSpread, r.TPOTSpread, r.OutputSpread = math.NaN(), math.NaN(), math.NaN()
	for _, f := range s.Spreads {
		switch f.Figure {
		case stats.FigureTTFT, stats.FigureE2E:
			r.TTFTSpread = f.Spread
		case stats.FigureTPOT:
			r.TPOTSpread = f.Spread
		case stats.FigureThroughput:
			r.OutputSpread = f.Spread
		}
	}
}

// spreadColumns are the figures' spreads, appended after the earlier formats' columns
// so older ledgers upgrade in place.
func spreadColumns() []column {
	return []column{
		strCol("stability_figure", func(r *Row) *string { return &r.StabilityFigure }),
		floatCol("ttft_spread_pct", 100, func(r *Row) *float64 { return &r.TTFTSpread }),
		floatCol("tpot_spread_pct", 100, func(r *Row) *float64 { return &r.TPOTSpread }),
		floatCol("output_tok_s_spread_pct", 100, func(r *Row) *float64 { return &r.OutputSpread }),
	}
}
