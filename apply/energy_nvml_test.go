//go:build cgo

package apply

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/planrun/planrun/telemetry/gpu"
)

// fakeNVML is one H200 of go-nvml's mocks drawing a constant watts: through its power
// readings, or also through a total-energy counter that moves with the clock.
func fakeNVML(t *testing.T, watts float64, counter bool) *gpu.Telemetry {
	t.Helper()
	srv := dgxh200.New()
	srv.Devices = srv.Devices[:1]
	srv.DeviceGetCountFunc = func() (int, nvml.Return) { return 1, nvml.SUCCESS }
	d := srv.Devices[0].(*server.Device)
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return uint32(watts * 1000), nvml.SUCCESS }
	var once sync.Once
	var t0 time.Time
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
		if !counter {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		once.Do(func() { t0 = time.Now() })
		return 1_000_000 + uint64(watts*float64(time.Since(t0).Microseconds())/1000), nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	total := d.MemoryInfo.Total
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		return nvml.Memory_v2{Total: total, Used: total / 2, Free: total / 2}, nvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 50}, nvml.SUCCESS }
	tel := gpu.OpenWith(srv)
	if !tel.Available() {
		t.Fatalf("mock NVML: %s", tel.Note())
	}
	return tel
}

// An nvml power source over a fake NVML: power readings of a constant wattage
// integrate exactly (joules per token is watts over the throughput); an energy counter
// that moves with the clock gives the same within its millijoule steps.
func TestEnergyFromNVML(t *testing.T) {
	for _, tc := range []struct {
		name    string
		counter bool
		source  string
		tol     float64
	}{
		{"power samples", false, "nvml GPU 0 power, power samples integrated", 1e-9},
		// The counter and the sampler read two clocks microseconds apart.
		{"energy counter", true, "nvml GPU 0 total energy, energy counter", 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runEnergy(t, `source = "nvml"`, Options{GPU: fakeNVML(t, 300, tc.counter), SampleInterval: 10 * time.Millisecond})
			want := 300 / r.OutputTokS
			if math.Abs(r.EnergyPerTokenJ-want) > tc.tol*want || math.Abs(r.PowerMeanW-300) > tc.tol*300 || r.EnergySource != tc.source {
				t.Errorf("energy per token %v J (want %v), mean %v W, source %q (want %q)", r.EnergyPerTokenJ, want, r.PowerMeanW, r.EnergySource, tc.source)
			}
			if !strings.Contains(r.Notes, "energy from nvml") {
				t.Errorf("notes %q", r.Notes)
			}
		})
	}
}
