package apply

import (
	"context"
	"math"

	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
)

// endsSweep reports whether the levels after row's are not run: its goal was missed,
// or it fell short of the workload's capacity target.
func endsSweep(w *plan.Workload, row report.Row) bool {
	return row.Goal == report.GoalMissed || (w.Capacity != nil && !meetsCapacity(w, row))
}

// meetsCapacity reports whether the row's SLO attainment reaches the capacity target.
// An interrupted level proves nothing, so it does not meet it.
func meetsCapacity(w *plan.Workload, row report.Row) bool {
	return row.Status != report.StatusInterrupted && !math.IsNaN(row.SLOAttainment) &&
		row.SLOAttainment*100 >= w.Capacity.TargetPct
}

// searchCapacity finishes the cell's capacity search once its declared levels ran (up
// to the first that missed the target): it bisects between the highest level that met
// the target and the lowest that missed it until they are the resolution apart, and
// returns the answer; nil when interrupted.
func (a *applier) searchCapacity(ctx context.Context, cell *plan.Cell, setup *cellSetup) *report.Capacity {
	w := cell.Workload
	var met, missed *plan.Level
	levels := 0
	judge := func(lv plan.Level, row report.Row) {
		levels++
		switch {
		case meetsCapacity(w, row) && (met == nil || loadOf(w, lv) > loadOf(w, *met)):
			met = &lv
		case !meetsCapacity(w, row) && (missed == nil || loadOf(w, lv) < loadOf(w, *missed)):
			missed = &lv
		}
	}
	for _, r := range a.res.Rows {
		if r.CellID == cell.ID && r.Status != report.StatusInterrupted {
			judge(rowKey(r).level, r)
		}
	}
	for met != nil && missed != nil {
		next, more := w.Capacity.Between(*met, *missed, w.SearchesRate())
		if !more {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		row, ok := a.done[levelKey{cell.ID, next}]
		if !ok {
			row = a.runLevel(ctx, cell, setup, next)
		}
		if row.Status == report.StatusInterrupted {
			return nil
		}
		judge(next, row)
	}
	c := &report.Capacity{CellID: cell.ID, Dimension: w.CapacityDimension(), TargetPct: w.Capacity.TargetPct,
		Resolution: w.Capacity.Resolution, Levels: levels, Bound: report.CapacityFound}
	switch {
	case met == nil && missed == nil:
		return nil
	case met == nil:
		c.Bound, c.Value = report.CapacityBelow, loadOf(w, *missed)
	case missed == nil:
		c.Bound, c.Value = report.CapacityAtLeast, loadOf(w, *met)
	default:
		c.Value = loadOf(w, *met)
	}
	return c
}

// loadOf is the level's load in the dimension the capacity search varies.
func loadOf(w *plan.Workload, lv plan.Level) float64 {
	if w.SearchesRate() {
		return lv.RequestRate
	}
	return float64(lv.Concurrency)
}
