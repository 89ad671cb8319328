package serverstats

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DCGM exporter gauges planrun reads. Framebuffer figures are in MiB, utilisation in
// percent, power in watts (NVIDIA dcgm-exporter's default counters).
const (
	dcgmFBUsed     = "DCGM_FI_DEV_FB_USED"
	dcgmFBFree     = "DCGM_FI_DEV_FB_FREE"
	dcgmFBReserved = "DCGM_FI_DEV_FB_RESERVED"
	dcgmGPUUtil    = "DCGM_FI_DEV_GPU_UTIL"
	dcgmPower      = "DCGM_FI_DEV_POWER_USAGE"
)

const mib = 1 << 20

// DCGMReading is one GPU in one scrape of a DCGM exporter.
type DCGMReading struct {
	GPU   string // the exporter's gpu label: the index on its host
	UUID  string
	Model string // modelName label, e.g. "NVIDIA H200"
	Host  string // Hostname label

	UsedBytes, FreeBytes, ReservedBytes uint64
	// HasReserved is false for exporters too old to export FB_RESERVED: then "used"
	// includes the driver's reservation (as NVML's v1 memory API does).
	HasReserved bool
	UtilPct     float64
	PowerW      float64
}

// ParseDCGMMetrics reads one scrape of a DCGM exporter (Prometheus text format) into one
// reading per GPU, ordered by the gpu label. A scrape without framebuffer gauges is an
// error: it is not a DCGM exporter, or its counters leave memory out.
func ParseDCGMMetrics(r io.Reader) ([]DCGMReading, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("dcgm exporter /metrics: %w", err)
	}
	if fams[dcgmFBUsed] == nil {
		return nil, fmt.Errorf("dcgm exporter /metrics: no %s gauge (is this a DCGM exporter with memory counters?)", dcgmFBUsed)
	}
	byGPU := map[string]*DCGMReading{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			g := byGPU[labels["gpu"]]
			if g == nil {
				g = &DCGMReading{GPU: labels["gpu"], UUID: labels["UUID"], Model: labels["modelName"], Host: labels["Hostname"]}
				byGPU[g.GPU] = g
			}
			setDCGM(g, name, gaugeValue(m))
		}
	}
	out := make([]DCGMReading, 0, len(byGPU))
	for _, g := range byGPU {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return gpuLess(out[i].GPU, out[j].GPU) })
	return out, nil
}

func setDCGM(g *DCGMReading, metric string, v float64) {
	switch metric {
	case dcgmFBUsed:
		g.UsedBytes = uint64(v * mib)
	case dcgmFBFree:
		g.FreeBytes = uint64(v * mib)
	case dcgmFBReserved:
		g.ReservedBytes, g.HasReserved = uint64(v*mib), true
	case dcgmGPUUtil:
		g.UtilPct = v
	case dcgmPower:
		g.PowerW = v
	}
}

// gpuLess orders gpu labels numerically where they are numbers ("2" before "10").
func gpuLess(a, b string) bool {
	ia, ea := strconv.Atoi(a)
	ib, eb := strconv.Atoi(b)
	if ea == nil && eb == nil {
		return ia < ib
	}
	return a < b
}

// DCGMGPU is one GPU's figures over a window, as a DCGM exporter reported them.
type DCGMGPU struct {
	GPU           string `json:"gpu"`
	UUID          string `json:"uuid,omitempty"`
	Model         string `json:"model,omitempty"`
	Host          string `json:"host,omitempty"`
	TotalBytes    uint64 `json:"total_bytes"` // used + free + reserved at the last reading
	UsedBytes     Stat   `json:"used_bytes"`
	ReservedBytes uint64 `json:"reserved_bytes"`
	HasReserved   bool   `json:"has_reserved"`
	UtilPct       Stat   `json:"util_pct"`
	PowerW        Stat   `json:"power_w"`
}

// DCGMMetrics fetches and parses one scrape of a DCGM exporter's /metrics.
func DCGMMetrics(ctx context.Context, hc *http.Client, url string) ([]DCGMReading, error) {
	return scrape(ctx, hc, url, "dcgm exporter /metrics", ParseDCGMMetrics)
}

// StartDCGM polls a DCGM exporter (url is its /metrics, e.g. http://HOST:9400/metrics)
// every interval until Stop, keeping per GPU the peak and mean framebuffer used,
// utilisation and power.
func StartDCGM(ctx context.Context, hc *http.Client, url string, interval time.Duration) *Poller {
	return newDCGMPoller(ctx, hc, url, interval).start()
}

func newDCGMPoller(ctx context.Context, hc *http.Client, url string, interval time.Duration) *Poller {
	return newPoller(ctx, "dcgm exporter", url, interval, func(ctx context.Context, r *Report) error {
		rs, err := DCGMMetrics(ctx, hc, url)
		if err != nil {
			return err
		}
		addDCGM(r, rs)
		return nil
	})
}

// addDCGM folds one scrape into the report's per-GPU figures.
func addDCGM(r *Report, rs []DCGMReading) {
	for _, g := range rs {
		var d *DCGMGPU
		for i := range r.GPUs {
			if r.GPUs[i].GPU == g.GPU {
				d = &r.GPUs[i]
			}
		}
		if d == nil {
			r.GPUs = append(r.GPUs, DCGMGPU{GPU: g.GPU, UUID: g.UUID, Model: g.Model, Host: g.Host})
			d = &r.GPUs[len(r.GPUs)-1]
		}
		d.UsedBytes.add(float64(g.UsedBytes))
		d.UtilPct.add(g.UtilPct)
		d.PowerW.add(g.PowerW)
		d.ReservedBytes, d.HasReserved = g.ReservedBytes, g.HasReserved
		d.TotalBytes = g.UsedBytes + g.FreeBytes + g.ReservedBytes
	}
}

// PeakUsedBytes is the sum over GPUs of each GPU's peak framebuffer used.
func (r Report) PeakUsedBytes() uint64 {
	var n uint64
	for _, g := range r.GPUs {
		n += uint64(g.UsedBytes.Peak)
	}
	return n
}
