package apply

import (
	"context"
	"net/http"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/placement"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/selfcheck"
	"github.com/planrun/planrun/telemetry/serverstats"
)

// A monitor watches one side of a level's measured window (the GPU, the server, planrun
// itself) and writes its summary into the level's measurement. A new source of figures
// is one more monitor here, one more entry in levelMonitors and one more field in
// levelMeasurement.
type monitor interface {
	start(ctx context.Context)
	stop(m *levelMeasurement)
}

// levelMonitors are the monitors of one level of the cell, in the order they start and
// stop: the GPU sampler first, so its window is the runs and no more; the server poller
// and the batch job's memory last, because their stops ask over the network once more.
func (a *applier) levelMonitors(cell *plan.Cell, proc *servers.Process) []monitor {
	mons := []monitor{
		&gpuMonitor{tel: a.telemetryFor(cell), interval: a.o.SampleInterval, proc: proc},
		newProcMonitor(cell, proc),
		newCPUMonitor(cell, proc),
		&clientMonitor{},
		a.newPowerMonitor(cell), // after the GPU sampler, whose ticks an nvml meter reads
	}
	if url := dcgmURL(cell); url != "" {
		mons = append(mons, &dcgmMonitor{url: url})
	}
	mons = append(mons, &serverMonitor{backend: a.known.built[backendKey(cell)], url: cell.Backend.URL})
	if j, ok := a.job.(placement.WithJobMemory); ok {
		mons = append(mons, &jobMonitor{job: j}) // last: Slurm's sstat, for one, asks the controller
	}
	return mons
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

// dcgmInterval is how often a DCGM exporter is scraped: the exporter itself refreshes
// its gauges every few seconds by default, so scraping faster only reads them again.
const dcgmInterval = time.Second

// dcgmMonitor scrapes the DCGM exporter a remote hardware block names (telemetry {
// dcgm = URL }): the VRAM of a host NVML on this machine cannot see.
type dcgmMonitor struct {
	url    string
	poller *serverstats.Poller
}

func (d *dcgmMonitor) start(ctx context.Context) {
	d.poller = serverstats.StartDCGM(ctx, nil, d.url, dcgmInterval)
}

func (d *dcgmMonitor) stop(m *levelMeasurement) { m.DCGM = d.poller.Stop() }

// dcgmURL is the DCGM exporter of the cell's hardware, or "" when it names none.
func dcgmURL(cell *plan.Cell) string {
	if cell.Hardware == nil {
		return ""
	}
	return cell.Hardware.Telemetry.DCGM
}

// serverMonitor polls what the server itself says about memory during a measured window:
// Ollama's /api/ps, or vLLM's Prometheus /metrics for an OpenAI-compatible backend.
type serverMonitor struct {
	backend backends.Backend
	url     string              // the cell's backend URL, which /api/ps is under
	poller  *serverstats.Poller // nil for a server that says nothing of its memory
}

var statsClient = &http.Client{Timeout: 5 * time.Second}

func (s *serverMonitor) start(ctx context.Context) {
	switch src := s.backend.(type) {
	case backends.ServerMemory:
		s.poller = serverstats.StartModels(ctx, src, s.url, 0)
	case backends.MetricsSource:
		if u := src.MetricsURL(); u != "" {
			s.poller = serverstats.StartVLLM(ctx, statsClient, u, 0)
		}
	}
}

func (s *serverMonitor) stop(m *levelMeasurement) {
	if s.poller != nil {
		m.Server = s.poller.Stop()
	}
}
