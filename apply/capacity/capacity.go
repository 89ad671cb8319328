// Package capacity is a cell's capacity search: from the levels measured so far (the
// declared ones, those a resumed run recorded) it bisects between the highest level
// that met the workload's SLO attainment target and the lowest above it that missed it,
// until they are the capacity block's resolution apart, and answers with the capacity
// found, a bound, or where the client gave out. Levels the client bound, that ran late
// or over-saturated decide nothing; apply measures each level it asks for.
package capacity

import (
	"math"
	"slices"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
)

// Meets reports whether the row's SLO attainment reaches the capacity target.
// An interrupted level proves nothing, so it does not meet it.
func Meets(w *plan.Workload, row ledger.Row) bool {
	return row.Status != ledger.StatusInterrupted && !math.IsNaN(row.SLOAttainmentPct) &&
		row.SLOAttainmentPct >= w.Capacity.TargetPct
}

// Search is the state of one cell's capacity search: every level measured so
// far (declared or bisected, this run or a resumed one) and whether it met the target.
type Search struct {
	w      *plan.Workload
	cellID string
	levels []plan.LoadLevel
	met    []bool
	// clientBound marks levels whose fidelity was client-bound or late: the client, not
	// the server, limited them or their timing, so they neither met nor missed the
	// target (a late level decides nothing); fidelity is each level's verdict.
	clientBound []bool
	fidelity    []string
	// saturated marks over-saturated levels: their queue had not settled, so their
	// figures depend on the run's length, and they decide nothing either way.
	saturated []bool
	// attainment is each level's SLO attainment interval (unbounded for a row from
	// before intervals).
	attainment []stats.Interval
}

// New starts the cell's search from the rows already recorded.
func New(cell *plan.Cell, rows []ledger.Row) *Search {
	s := &Search{w: cell.Workload, cellID: cell.ID}
	for _, r := range rows {
		if r.CellID == cell.ID && r.Status != ledger.StatusInterrupted {
			s.Judge(plan.LevelOf(&r), r)
		}
	}
	return s
}

// Judge adds level lv, measured as row, to what the search knows.
func (s *Search) Judge(lv plan.LoadLevel, row ledger.Row) {
	s.levels = append(s.levels, lv)
	s.met = append(s.met, Meets(s.w, row))
	s.clientBound = append(s.clientBound, row.Fidelity == ledger.FidelityClientBound || row.Fidelity == ledger.FidelityLate)
	s.saturated = append(s.saturated, row.Saturation == ledger.SaturationOver)
	s.fidelity = append(s.fidelity, row.Fidelity)
	iv := stats.Unbounded(0)
	if row.CI.Confidence > 0 && row.Status != ledger.StatusInterrupted {
		iv = row.CI.SLOAttainmentPct
	}
	s.attainment = append(s.attainment, iv)
}

// setRange says which levels' attainment intervals straddle the target, and the range
// they leave the capacity in: above the highest level whose whole interval met it, below
// the lowest whose whole interval missed it (client-bound levels decide nothing).
func (s *Search) setRange(c *ledger.Capacity) {
	target := s.w.Capacity.TargetPct
	for i, iv := range s.attainment {
		load := LoadOf(s.w, s.levels[i])
		switch {
		case !iv.Bounded() || s.clientBound[i] || s.saturated[i]:
		case iv.Lo >= target:
			c.RangeLo = max(c.RangeLo, load)
		case iv.Hi < target:
			if c.RangeHi == 0 || load < c.RangeHi {
				c.RangeHi = load
			}
		default:
			c.Undecided = append(c.Undecided, load)
		}
	}
	slices.Sort(c.Undecided)
	if len(c.Undecided) == 0 {
		c.RangeLo, c.RangeHi = 0, 0
	}
}

// bounds are the highest level that met the target and the lowest above it that
// missed it; nil where there is none.
// missed it, and the lowest client-bound level above the met one; nil where there is
// none. Client-bound levels count as neither met nor missed.
func (s *Search) bounds() (met, missed, client *plan.LoadLevel) {
	for i := range s.levels {
		if s.met[i] && !s.clientBound[i] && !s.saturated[i] && (met == nil || LoadOf(s.w, s.levels[i]) > LoadOf(s.w, *met)) {
			met = &s.levels[i]
		}
	}
	lowest := func(i int, cur *plan.LoadLevel) *plan.LoadLevel {
		above := met == nil || LoadOf(s.w, s.levels[i]) > LoadOf(s.w, *met)
		if above && (cur == nil || LoadOf(s.w, s.levels[i]) < LoadOf(s.w, *cur)) {
			return &s.levels[i]
		}
		return cur
	}
	for i := range s.levels {
		switch {
		case s.saturated[i]:
		case s.clientBound[i]:
			client = lowest(i, client)
		case !s.met[i]:
			missed = lowest(i, missed)
		}
	}
	return met, missed, client
}

// clientLimited reports whether the client, not the server, bounds the search: a
// client-bound level lies below the lowest level that missed the target (or none did).
func (s *Search) clientLimited(missed, client *plan.LoadLevel) bool {
	return client != nil && (missed == nil || LoadOf(s.w, *client) < LoadOf(s.w, *missed))
}

// Next is the level to measure next; false once the bounds are the resolution apart. A
// client-bound level stands in for the upper bound, so the search looks below it.
func (s *Search) Next() (plan.LoadLevel, bool) {
	met, missed, client := s.bounds()
	if s.clientLimited(missed, client) {
		missed = client
	}
	if met == nil || missed == nil {
		return plan.LoadLevel{}, false
	}
	return s.w.Capacity.Between(*met, *missed, s.w.SearchesRate())
}

// Answer is the search's result; nil when no level was measured.
func (s *Search) Answer() *ledger.Capacity {
	met, missed, client := s.bounds()
	c := &ledger.Capacity{CellID: s.cellID, Dimension: s.w.CapacityDimension(), TargetPct: s.w.Capacity.TargetPct,
		Resolution: s.w.Capacity.Resolution, Levels: len(s.levels), Bound: ledger.CapacityFound}
	switch {
	case s.clientLimited(missed, client):
		// Never a capacity the client limited: the answer says where the client gave out.
		c.Bound, c.ClientBoundAt = ledger.CapacityClientBound, LoadOf(s.w, *client)
		if i := s.index(*client); i >= 0 && s.fidelity[i] == ledger.FidelityLate {
			c.ClientFidelity = ledger.FidelityLate
		}
		if met != nil {
			c.Value = LoadOf(s.w, *met)
		}
	case met == nil && missed == nil:
		return nil
	case met == nil:
		c.Bound, c.Value = ledger.CapacityBelow, LoadOf(s.w, *missed)
	case missed == nil:
		c.Bound, c.Value = ledger.CapacityAtLeast, LoadOf(s.w, *met)
	default:
		c.Value = LoadOf(s.w, *met)
	}
	s.setRange(c)
	return c
}

// index is the position of level lv among the levels judged; -1 when it is not one.
func (s *Search) index(lv plan.LoadLevel) int {
	for i := range s.levels {
		if s.levels[i] == lv {
			return i
		}
	}
	return -1
}

// LoadOf is the level's load in the dimension the capacity search varies.
func LoadOf(w *plan.Workload, lv plan.LoadLevel) float64 {
	if w.SearchesRate() {
		return lv.RequestRate
	}
	return float64(lv.Concurrency)
}
