package apply

import (
	"context"
	"time"

	"github.com/planrun/planrun/gpu"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/selfcheck"
	"github.com/planrun/planrun/servers"
)

// A monitor watches one side of a level's measured window (the GPU, the server, planrun
// itself) and writes its summary into the level's measurement. A new source of figures,
// e.g. a DCGM exporter scrape, is one more monitor in levelMonitors and one more field in
// levelMeasurement.
type monitor interface {
	start(ctx context.Context)
	stop(m *levelMeasurement)
}

// levelMonitors are the monitors of one level of the cell, in the order they start and
// stop: the GPU sampler first, so its window is the runs and no more; the server poller
// last, because its stop polls the server once more over the network.
func (a *applier) levelMonitors(cell *plan.Cell, proc *servers.Process) []monitor {
	mons := []monitor{
		&gpuMonitor{tel: a.telemetryFor(cell), interval: a.o.SampleInterval, proc: proc},
		&clientMonitor{},
	}
	if url := dcgmURL(cell); url != "" {
		mons = append(mons, &dcgmMonitor{url: url})
	}
	return append(mons, &serverMonitor{a: a, cell: cell})
}

// gpuMonitor samples the GPUs through NVML, attributing memory to the server's
// processes when planrun started the server.
type gpuMonitor struct {
	tel      *gpu.Telemetry
	interval time.Duration
	proc     *servers.Process
	sampler  *gpu.Sampler
}

func (g *gpuMonitor) start(context.Context) {
	g.tel.Baseline()
	var pids []int
	if g.proc != nil {
		// Read now, not when the server started: the runner that holds the GPU memory
		// (Ollama's) exists once warm-up loaded the model.
		pids = g.proc.GroupPIDs()
	}
	g.sampler = g.tel.Start(g.interval, pids)
}

func (g *gpuMonitor) stop(m *levelMeasurement) { m.GPU = g.sampler.Stop() }

// clientMonitor is planrun's self-check: its own CPU and scheduling lag.
type clientMonitor struct{ mon *selfcheck.Monitor }

func (c *clientMonitor) start(context.Context) { c.mon = selfcheck.Start() }

func (c *clientMonitor) stop(m *levelMeasurement) { m.Client = c.mon.Stop() }

// serverMonitor polls what the server itself says about its memory.
type serverMonitor struct {
	a     *applier
	cell  *plan.Cell
	watch *serverWatch
}

func (s *serverMonitor) start(ctx context.Context) { s.watch = s.a.watchServer(ctx, s.cell) }

func (s *serverMonitor) stop(m *levelMeasurement) { m.Server = s.watch.stop() }
