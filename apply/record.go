package apply

import (
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/report"
)

// record holds a level's row against the plan's references and expectations, tells the
// user what the client self-check warns about, and writes the row to the ledgers, the
// report's rows and charts, and the progress.
func (a *applier) record(cell *plan.Cell, level plan.Level, m levelMeasurement, row *report.Row) {
	if m.GPU.Note == "" && len(m.GPU.Devices) > 0 {
		var pts []report.VRAMPoint
		for _, p := range m.GPU.Devices[0].Series {
			pts = append(pts, report.VRAMPoint{Seconds: p.At.Seconds(), GB: float64(p.UsedBytes) / 1e9})
		}
		a.vram = append(a.vram, report.VRAMSeries{Label: cell.ID + " " + levelName(level), Points: pts})
	}
	if m.Monitored {
		for _, w := range clientWarnings(*row, m) {
			a.note("%s %s: %s", cell.ID, levelName(level), w)
		}
	}
	a.holdAgainstReferences(cell, row)

	if err := a.samples.Flush(); err != nil {
		a.note("writing raw samples: %v", err)
	}
	if row.Requests > 0 || row.Status != report.StatusInterrupted {
		if a.ledger != nil { // nil on a Slurm node: the coordinator merges the rows
			if err := a.ledger.Append(*row); err != nil {
				a.note("writing the CSV ledger: %v", err)
			}
		}
		if err := a.runCSV.Append(*row); err != nil {
			a.note("writing the run's CSV: %v", err)
		}
		a.res.Rows = append(a.res.Rows, *row)
		if row.Status != report.StatusInterrupted {
			a.checkExpects(cell, *row)
		}
	}
	if a.o.Progress != nil {
		a.o.Progress.EndLevel(cell, *row)
	}
}
