package apply

import (
	"context"
	"os"

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
