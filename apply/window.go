package apply

import (
	"context"
	"fmt"
	"os"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/power"
	"github.com/planrun/planrun/telemetry/procmem"
)

// windowMeasurement is what the window's own monitors saw beside the requests: the CPU
// of the server's allowed cores.
type windowMeasurement struct {
	CPU procmem.CPUSummary
	// Power is the hardware's power meter over the window (energy.go), and Runs the
	// measured runs' windows its energy is read over.
	Power power.Trace
	Runs  []stats.Window
	// Stopped says which runs stop_when_saturated stopped early ("" when none).
	Stopped string
}

// cpuMonitor follows the server's allowed cores through the window: how much of them
// the server's process tree used, how much planrun's client, and how much everyone else
// (its noisy neighbours). It needs the server's processes: a server planrun started on
// this machine.
type cpuMonitor struct {
	proc    *servers.Process
	why     string
	sampler *procmem.CPUSampler
}

func newCPUMonitor(cell *plan.Cell, proc *servers.Process) *cpuMonitor {
	switch {
	case cell.Hardware != nil && !isLocalHost(cell.Hardware.Host):
		return &cpuMonitor{why: "no CPU share: the server runs on host " + cell.Hardware.Host}
	case proc == nil:
		return &cpuMonitor{why: "no CPU share: the server was not started by planrun (no server block), so its processes and cores are unknown"}
	}
	return &cpuMonitor{proc: proc}
}

func (c *cpuMonitor) start(context.Context) {
	if c.proc != nil {
		c.sampler = procmem.StartCPU(0, c.proc.GroupPIDs, os.Getpid())
	}
}

func (c *cpuMonitor) stop(m *levelMeasurement) {
	if c.sampler == nil {
		m.Window.CPU = procmem.CPUSummary{Note: c.why}
		return
	}
	m.Window.CPU = c.sampler.Stop()
}

// setInside fills the row's window figures from the window's monitors and returns the
// notes that explain them.
func setInside(row *ledger.Row, m levelMeasurement) []string {
	var notes []string
	row.SteadySliceCVPct = sliceCV(m.Stats.PerRun)
	if note := setSaturation(row, m.Stats.PerRun); note != "" {
		notes = append(notes, note)
	}
	if note := setQueueTime(row, m.Server.ServerLatency.Queue); note != "" {
		notes = append(notes, note)
	}
	if m.Window.Stopped != "" {
		notes = append(notes, m.Window.Stopped)
	}
	if cpu := m.Window.CPU; cpu.Note == "" && cpu.N > 0 {
		row.ServerCPUPct, row.NeighbourCPUPct = cpu.ServerPct, cpu.OthersPct
		row.Contention = ledger.ContentionQuiet
		if cpu.Contended() {
			row.Contention = ledger.ContentionContended
			notes = append(notes, fmt.Sprintf("contended: other processes used %.0f%% of the server's cores (%s) during the window, "+
				"above the %.0f%% a row tolerates (the server %.0f%%, planrun's client %.0f%%)",
				cpu.OthersPct, cpu.Cores, procmem.ContendedAbove, cpu.ServerPct, cpu.ClientPct))
		}
	}
	return notes
}

// setSaturation marks the row over-saturated when some run's over-saturation test says
// so, with the median slopes, and returns the note that says what climbed.
func setSaturation(row *ledger.Row, runs []stats.Summary) string {
	var ttft, inFlight []float64
	var worst *stats.Saturation
	for _, l := range runs {
		s := l.Delivered.Saturation
		if s == nil {
			continue
		}
		ttft, inFlight = append(ttft, s.TTFTSlope), append(inFlight, s.InFlightSlope)
		if s.Over && (worst == nil || s.TTFTClimb > worst.TTFTClimb) {
			worst = s
		}
	}
	row.TTFTSlope, row.InFlightSlope = stats.Median(ttft), stats.Median(inFlight)
	if worst == nil {
		return ""
	}
	row.Saturation = ledger.SaturationOver
	return fmt.Sprintf("over-saturated: over the %.1f s the run sent, TTFT climbed %.3f s (slope %.3f s/s, 95%% interval %.3f to %.3f) and "+
		"requests in flight %+.1f (%.2f/s, %.2f to %.2f): the load is above what the server serves, its queue had not settled, "+
		"so its figures depend on how long the run was; it decides nothing in a capacity search",
		worst.Seconds, worst.TTFTClimb, worst.TTFTSlope, worst.TTFTSlopeLo, worst.TTFTSlopeHi,
		worst.InFlightClimb, worst.InFlightSlope, worst.InFlightSlopeLo, worst.InFlightSlopeHi)
}
