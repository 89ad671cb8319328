package apply

import (
	"context"

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
