package apply

import (
	"context"
	"math"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

// endsSweep reports whether the levels after row's are not run: its goal was missed,
// or it fell short of the workload's capacity target.
func endsSweep(w *plan.Workload, row ledger.Row) bool {
	return row.Goal == ledger.GoalMissed || (w.Capacity != nil && !meetsCapacity(w, row))
}

// meetsCapacity reports whether the row's SLO attainment reaches the capacity target.
// An interrupted level proves nothing, so it does not meet it.
func meetsCapacity(w *plan.Workload, row ledger.Row) bool {
	return row.Status != ledger.StatusInterrupted && !math.IsNaN(row.SLOAttainmentPct) &&
		row.SLOAttainmentPct >= w.Capacity.TargetPct
}

// capacitySearch is the state of one cell's capacity search: every level measured so
// far (declared or bisected, this run or a resumed one) and whether it met the target.
type capacitySearch struct {
	w      *plan.Workload
	cellID string
	levels []plan.LoadLevel
	met    []bool
}

// newCapacitySearch starts the cell's search from the rows already recorded.
func newCapacitySearch(cell *plan.Cell, rows []ledger.Row) *capacitySearch {
	s := &capacitySearch{w: cell.Workload, cellID: cell.ID}
	for _, r := range rows {
		if r.CellID == cell.ID && r.Status != ledger.StatusInterrupted {
			s.judge(rowKey(r).level, r)
		}
	}
	return s
}

func (s *capacitySearch) judge(lv plan.LoadLevel, row ledger.Row) {
	s.levels = append(s.levels, lv)
	s.met = append(s.met, meetsCapacity(s.w, row))
}

// bounds are the highest level that met the target and the lowest above it that
// missed it; nil where there is none.
func (s *capacitySearch) bounds() (met, missed *plan.LoadLevel) {
	for i := range s.levels {
		if s.met[i] && (met == nil || loadOf(s.w, s.levels[i]) > loadOf(s.w, *met)) {
			met = &s.levels[i]
		}
	}
	for i := range s.levels {
		above := met == nil || loadOf(s.w, s.levels[i]) > loadOf(s.w, *met)
		if !s.met[i] && above && (missed == nil || loadOf(s.w, s.levels[i]) < loadOf(s.w, *missed)) {
			missed = &s.levels[i]
		}
	}
	return met, missed
}

// next is the level to measure next; false once the bounds are the resolution apart.
func (s *capacitySearch) next() (plan.LoadLevel, bool) {
	met, missed := s.bounds()
	if met == nil || missed == nil {
		return plan.LoadLevel{}, false
	}
	return s.w.Capacity.Between(*met, *missed, s.w.SearchesRate())
}

// answer is the search's result; nil when no level was measured.
func (s *capacitySearch) answer() *ledger.Capacity {
	met, missed := s.bounds()
	c := &ledger.Capacity{CellID: s.cellID, Dimension: s.w.CapacityDimension(), TargetPct: s.w.Capacity.TargetPct,
		Resolution: s.w.Capacity.Resolution, Levels: len(s.levels), Bound: ledger.CapacityFound}
	switch {
	case met == nil && missed == nil:
		return nil
	case met == nil:
		c.Bound, c.Value = ledger.CapacityBelow, loadOf(s.w, *missed)
	case missed == nil:
		c.Bound, c.Value = ledger.CapacityAtLeast, loadOf(s.w, *met)
	default:
		c.Value = loadOf(s.w, *met)
	}
	return c
}

// searchCapacity finishes the cell's capacity search once its declared levels ran (up
// to the first that missed the target): it bisects between the highest level that met
// the target and the lowest above it that missed it until they are the resolution
// apart, and returns the answer. Each level it runs counts towards the cell's status
// st; when interrupted it returns nil and st says so.
func (a *applier) searchCapacity(ctx context.Context, cell *plan.Cell, setup *cellSetup, st *ledger.CellStatus) *ledger.Capacity {
	s := newCapacitySearch(cell, a.res.Rows)
	for {
		lv, more := s.next()
		if !more {
			return s.answer()
		}
		if ctx.Err() != nil {
			st.Status = ledger.StatusInterrupted
			return nil
		}
		row := a.runLevel(ctx, cell, setup, lv)
		countRow(st, row)
		if row.Status == ledger.StatusInterrupted {
			return nil
		}
		s.judge(lv, row)
	}
}

// capacityPending reports whether the cell's capacity search has levels left to
// measure after the rows already recorded (a resumed run).
func (a *applier) capacityPending(cell *plan.Cell) bool {
	if cell.Workload.Capacity == nil {
		return false
	}
	_, more := newCapacitySearch(cell, a.res.Rows).next()
	return more
}

// loadOf is the level's load in the dimension the capacity search varies.
func loadOf(w *plan.Workload, lv plan.LoadLevel) float64 {
	if w.SearchesRate() {
		return lv.RequestRate
	}
	return float64(lv.Concurrency)
}
