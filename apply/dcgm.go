package apply

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/planrun/planrun/gpu/serverstats"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

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

// setVRAMSources fills the VRAM columns NVML left empty from the other sources, and
// says in vram_source where each figure came from: NVML (set by setVRAM), the DCGM
// exporter, Ollama's /api/ps (server_vram_gb), or none for a remote host without
// telemetry.
func setVRAMSources(cell *plan.Cell, row *ledger.Row, m levelMeasurement) {
	if !math.IsNaN(row.VRAMPeakGB) {
		return // NVML measured it
	}
	switch {
	case len(m.DCGM.GPUs) > 0:
		row.VRAMPeakGB = float64(m.DCGM.PeakUsedBytes()) / 1e9
		row.VRAMSource = "dcgm exporter " + m.DCGM.URL + " (framebuffer used, peak)"
	case m.DCGM.URL != "":
		row.VRAMSource = fmt.Sprintf("none: dcgm exporter %s gave no reading (%s)", m.DCGM.URL, m.DCGM.LastError)
	case cell.Hardware != nil && !isLocalHost(cell.Hardware.Host):
		row.VRAMSource = "none: remote host " + cell.Hardware.Host + " without telemetry (add telemetry { dcgm = URL })"
	}
	if row.ServerVRAMGB > 0 {
		row.VRAMSource += "; server_vram_gb from ollama /api/ps"
	}
}
