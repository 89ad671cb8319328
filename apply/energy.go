package apply

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/power"
)

// powerMonitor reads the meter of the cell's hardware block (its power { }) through the
// window. An nvml source reads nothing itself: the GPU sampler, which stops first, kept
// NVML's energy counter per tick. Without a power block, NVML's GPUs are the meter where
// they report energy.
type powerMonitor struct {
	cfg   *plan.Power // nil: no power block
	src   power.Source
	why   string // why the meter cannot be read; src is nil then
	meter *power.Meter
}

func (a *applier) newPowerMonitor(cell *plan.Cell) *powerMonitor {
	hw := cell.Hardware
	if hw == nil || hw.Power == nil {
		return &powerMonitor{}
	}
	p := &powerMonitor{cfg: hw.Power}
	switch p.cfg.Source {
	case plan.PowerRAPL:
		if !isLocalHost(hw.Host) {
			p.why = "rapl reads this machine's powercap, and the server runs on host " + hw.Host + " (use a command or prometheus source there)"
			break
		}
		var err error
		if p.src, err = power.RAPL(a.o.PowercapRoot); err != nil {
			p.why = err.Error()
		}
	case plan.PowerCommand:
		p.src = power.Command(p.cfg.Command)
	case plan.PowerPrometheus:
		p.src = power.Prometheus(statsClient, p.cfg.URL, p.cfg.Query)
	}
	return p
}

func (p *powerMonitor) start(ctx context.Context) {
	if p.src != nil {
		p.meter = power.Start(ctx, p.src, p.cfg.Interval)
	}
}

func (p *powerMonitor) stop(m *levelMeasurement) {
	switch {
	case p.meter != nil:
		m.Window.Power = p.meter.Stop()
	case p.why != "":
		m.Window.Power = power.Unavailable(p.cfg.Source, p.why)
	case p.cfg != nil: // nvml
		m.Window.Power = power.FromGPU(m.GPU)
	default:
		if _, ok := m.GPU.EnergyJ(); ok {
			m.Window.Power = power.FromGPU(m.GPU)
		}
	}
}

// runWindows are the measured runs' windows, first request start to last request end:
// the windows their throughput is counted in (sink.statsRuns gives stats the same).
func runWindows(res executor.Result) []stats.Window {
	out := make([]stats.Window, len(res.Runs))
	for i, r := range res.Runs {
		out[i] = stats.Window{Start: r.Start, End: r.End}
	}
	return out
}

// setEnergy fills the row's energy figures from the meter's trace, each run over its own
// window, and its energy cost at the hardware's price per kWh; it returns the notes that
// say where the figures came from, or why there are none.
func setEnergy(cell *plan.Cell, row *ledger.Row, m levelMeasurement) (notes []string) {
	if hw := cell.Hardware; hw != nil && hw.Price != nil {
		row.PricePerKWh = hw.Price.PerKWh
	}
	defer row.SetCost()
	tr := m.Window.Power
	if !math.IsNaN(row.PricePerKWh) {
		defer func() {
			if math.IsNaN(row.EnergyPerTokenJ) {
				notes = append(notes, "no cost per million tokens: the hardware's price_per_kwh needs an energy figure")
			}
		}()
	}
	switch {
	case tr.Source == "" && tr.Note == "":
		return notes // no meter, and no GPU that reports energy
	case tr.Note != "":
		row.EnergySource = "none: " + strings.TrimPrefix(tr.Note, "no energy: ")
		return append(notes, tr.Note)
	}
	var runs []ledger.RunEnergy
	uncovered := 0
	for i, w := range m.Window.Runs {
		if i >= len(m.Stats.PerRun) {
			break
		}
		e := ledger.RunEnergy{Joules: math.NaN(), Seconds: w.Seconds(), OutputTokens: m.Stats.PerRun[i].OutputTokens}
		if j, ok := tr.Energy(w.Start, w.End); ok {
			e.Joules = j
		} else {
			uncovered++
		}
		runs = append(runs, e)
	}
	row.SetEnergy(tr.Source+", "+tr.Method, runs, m.Stats.Across.Confidence)
	if !math.IsNaN(row.EnergyPerTokenJ) {
		notes = append(notes, fmt.Sprintf("energy from %s (%s, read every %v) over each run's window: %.4g J per output token, %.4g tokens/J, %.4g W",
			tr.Source, tr.Method, tr.Interval, row.EnergyPerTokenJ, row.TokensPerJoule, row.PowerMeanW))
	}
	if uncovered > 0 {
		notes = append(notes, fmt.Sprintf("the power meter's readings did not cover %d of %d runs' windows: they have no energy figure", uncovered, len(runs)))
	}
	if tr.Failed > 0 {
		notes = append(notes, fmt.Sprintf("%d of the power meter's readings failed (last: %s)", tr.Failed, tr.LastError))
	}
	return notes
}
