package apply

import (
	"fmt"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
)

// record holds a level's row against the plan's references and expectations, tells the
// user what the client self-check warns about, and writes the row to the ledgers, the
// report's rows and charts, and the progress.
func (a *applier) record(cell *plan.Cell, level plan.LoadLevel, m levelMeasurement, row *ledger.Row) {
	if m.GPU.Note == "" {
		// One trace per GPU: a model split over cards shows each card's share.
		for _, d := range m.GPU.Devices {
			var pts []report.VRAMPoint
			for _, p := range d.Series {
				pts = append(pts, report.VRAMPoint{Seconds: p.At.Seconds(), GB: float64(p.UsedBytes) / 1e9})
			}
			gpu := fmt.Sprintf("GPU %d %s", d.Index, d.Name)
			a.vram = append(a.vram, report.VRAMSeries{Label: cell.ID + " " + cell.Workload.LevelName(level), GPU: gpu, Points: pts})
		}
	}
	if m.Monitored {
		for _, w := range clientWarnings(*row, m) {
			a.note("%s %s: %s", cell.ID, level, w)
		}
	}
	a.holdAgainstReferences(cell, row)

	if err := a.samples.Flush(); err != nil {
		a.note("writing raw samples: %v", err)
	}
	if row.Requests > 0 || row.Status != ledger.StatusInterrupted {
		a.appendRow(*row)
		if row.Status != ledger.StatusInterrupted {
			a.checkExpects(cell, *row)
		}
	}
	if a.o.Progress != nil {
		a.o.Progress.EndLevel(cell, *row)
	}
}

// appendRow writes a row to both ledgers and the run's rows; a ledger that cannot be
// written is reported and the run goes on (the run's rows still reach the report).
func (a *applier) appendRow(row ledger.Row) {
	a.appendLedgers(row)
	a.res.Rows = append(a.res.Rows, row)
}

// appendLedgers writes a row to the CSV ledger and the run's CSV. A Slurm node has no
// ledger: the coordinator merges its rows.
func (a *applier) appendLedgers(row ledger.Row) {
	if a.ledger != nil {
		if err := a.ledger.Append(row); err != nil {
			a.note("writing the CSV ledger: %v", err)
		}
	}
	if err := a.runCSV.Append(row); err != nil {
		a.note("writing the run's CSV: %v", err)
	}
}

// recordUnmeasured writes the row of a cell that failed before measuring, at its first
// pending level. Nothing was measured, so no reference or expectation is held against it.
func (a *applier) recordUnmeasured(cell *plan.Cell, level plan.LoadLevel, reason string) {
	a.appendRow(unmeasuredRow(cell, level, a.runRowContext(), reason, a.now()))
}
