package apply

import (
	"context"

	"github.com/planrun/planrun/apply/capacity"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

// searchCapacity finishes the cell's capacity search once its declared levels ran (up
// to the first that missed the target): it bisects between the highest level that met
// the target and the lowest above it that missed it until they are the resolution
// apart, and returns the answer. Each level it runs counts towards the cell's status
// st; when interrupted it returns nil and st says so.
func (a *applier) searchCapacity(ctx context.Context, cell *plan.Cell, setup *cellSetup, st *ledger.CellStatus) *ledger.Capacity {
	s := capacity.New(cell, a.rec.rows())
	for {
		lv, more := s.Next()
		if !more {
			return s.Answer()
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
		s.Judge(lv, row)
	}
}

// capacityPending reports whether the cell's capacity search has levels left to
// measure after the rows already recorded (a resumed run).
func (a *applier) capacityPending(cell *plan.Cell) bool {
	if cell.Workload.Capacity == nil {
		return false
	}
	_, more := capacity.New(cell, a.rec.rows()).Next()
	return more
}
