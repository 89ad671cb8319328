package apply

import (
	"context"
	"time"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/procmem/exporter"
)

// procMonitor samples the memory of the server's process tree (procmem): the figure
// that stands for VRAM when the model runs on the CPU. It reads a server planrun started
// on this machine; any other through a process exporter on the server's host, when the
// hardware names one (telemetry { process = URL }). Without either the summary says why
// there is no figure.
type procMonitor struct {
	proc     *servers.Process
	exporter string // the exporter's metrics URL
	group    string // its group that is the server; "" for its only one
	why      string // set when there is nothing to read
	sampler  *procmem.Sampler
}

// exporterInterval is how often a process exporter is scraped: each scrape is an HTTP
// round trip and, on the host, a read of every process's smaps_rollup.
const exporterInterval = 500 * time.Millisecond

func newProcMonitor(cell *plan.Cell, proc *servers.Process) *procMonitor {
	var tel plan.Telemetry
	remote := ""
	if h := cell.Hardware; h != nil {
		tel = h.Telemetry
		if !isLocalHost(h.Host) {
			remote = h.Host
		}
	}
	switch {
	case proc != nil && remote == "":
		return &procMonitor{proc: proc}
	case tel.Process != "":
		return &procMonitor{exporter: tel.Process, group: tel.ProcessGroup}
	case remote != "":
		return &procMonitor{why: "no process memory: the server runs on host " + remote +
			" (run planrun process-exporter there and give the hardware telemetry { process = URL })"}
	}
	return &procMonitor{why: "no process memory: the server was not started by planrun (no server block), so its processes are unknown" +
		" (a process exporter beside it, telemetry { process = URL }, can read them)"}
}

func (p *procMonitor) start(context.Context) {
	switch {
	case p.proc != nil:
		// The group is read at every tick: Ollama's runner holds the weights, and a
		// restart of it during the window must not drop out of the figure.
		p.sampler = procmem.Start(0, p.proc.GroupPIDs)
	case p.exporter != "":
		p.sampler = procmem.StartFunc(exporterInterval, exporter.Origin(ledger.SafeURL(p.exporter), p.group),
			exporter.Reader(statsClient, p.exporter, p.group))
	default:
		p.sampler = procmem.Unavailable(p.why)
	}
}

func (p *procMonitor) stop(m *levelMeasurement) { m.Proc = p.sampler.Stop() }

// cpuOverheadBytes is the estimate's overhead for a server on the CPU, in place of the
// GPU's CUDA context: Ollama's server and runner processes (Go runtime and binary,
// llama.cpp's CPU compute buffers for a 512-token context) came to about 0.09 GB of RSS
// beyond weights and KV cache with the quickstart's three variants (docs/seed-table.md).
const cpuOverheadBytes = 90e6

// estimateOverhead is the overhead the cell's VRAM estimate adds: the GPU default when
// NVML can measure the server, else cpuOverheadBytes.
func (a *applier) estimateOverhead(cell *plan.Cell) float64 {
	if a.telemetryFor(cell).Available() {
		return gpu.DefaultOverheadBytes
	}
	return cpuOverheadBytes
}
