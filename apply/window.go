package apply

import (
	"context"
	"fmt"
	"os"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/procmem"
)

// windowMeasurement is what the window's own monitors saw beside the requests: the CPU
// of the server's allowed cores.
type windowMeasurement struct {
	CPU procmem.CPUSummary
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
