//go:build cgo

package gpu

import (
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

const gib = 1 << 30

// gpuState is what one mock GPU reports at the next call; tests change it between ticks.
type gpuState struct {
	usedV2, usedV1, reserved uint64
	noV2                     bool
	util, memUtil            uint32
	powerMW                  uint32
	powerRet                 nvml.Return
	energyMJ                 uint64
	energyRet                nvml.Return
	procs                    []nvml.ProcessInfo
	procRet                  nvml.Return
}

// mockServer is a DGX H200 from go-nvml's mocks whose GPUs read their figures from states.
func mockServer(t testing.TB, n int) (*server.Server, []*gpuState) {
	t.Helper()
	srv := dgxh200.New()
	srv.Devices = srv.Devices[:n]
	srv.DeviceGetCountFunc = func() (int, nvml.Return) { return n, nvml.SUCCESS }
	states := make([]*gpuState, n)
	for i := range n {
		st := &gpuState{}
		states[i] = st
		d := srv.Devices[i].(*server.Device)
		total := d.MemoryInfo.Total
		d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			if st.noV2 {
				return nvml.Memory_v2{}, nvml.ERROR_FUNCTION_NOT_FOUND
			}
			return nvml.Memory_v2{Total: total, Used: st.usedV2, Reserved: st.reserved, Free: total - st.usedV2 - st.reserved}, nvml.SUCCESS
		}
		d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: total, Used: st.usedV1, Free: total - st.usedV1}, nvml.SUCCESS
		}
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: st.util, Memory: st.memUtil}, nvml.SUCCESS
		}
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return st.powerMW, st.powerRet }
		d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return st.energyMJ, st.energyRet }
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return st.procs, st.procRet }
	}
	return srv, states
}

// fakeClock is the injected clock: tests move it, nothing reads the wall clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func openMock(t testing.TB, srv nvml.Interface) (*Telemetry, *fakeClock) {
	t.Helper()
	tel := OpenWith(srv)
	if !tel.Available() {
		t.Fatalf("mock telemetry not available: %s", tel.Note())
	}
	clk := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	tel.now = clk.now
	return tel, clk
}

// manualSampler is a Sampler whose ticks the test drives.
func manualSampler(tel *Telemetry, pids []int) *Sampler {
	s := tel.newSampler(10*time.Millisecond, pids)
	close(s.done)
	return s
}

func TestOpenInfo(t *testing.T) {
	srv, _ := mockServer(t, 2)
	tel, _ := openMock(t, srv)
	info := tel.Info()
	if info.DriverVersion != "550.54.15" || info.CUDADriverVersion != "12.4" {
		t.Errorf("driver %q cuda %q, want 550.54.15 and 12.4", info.DriverVersion, info.CUDADriverVersion)
	}
	if info.MemoryAPI != MemoryAPIv2 {
		t.Errorf("MemoryAPI = %q, want %q", info.MemoryAPI, MemoryAPIv2)
	}
	if len(info.Devices) != 2 {
		t.Fatalf("%d devices, want 2", len(info.Devices))
	}
	for i, d := range info.Devices {
		want := srv.Devices[i].(*server.Device)
		if d.Index != i || d.Name != "NVIDIA H200 141GB HBM3e" || d.UUID != want.UUID || d.TotalBytes != 144384<<20 {
			t.Errorf("device %d = %+v", i, d)
		}
	}
}

func TestOpenNoGPU(t *testing.T) {
	for _, tc := range []struct {
		name  string
		init  nvml.Return
		count int
		want  string
	}{
		{"library not found", nvml.ERROR_LIBRARY_NOT_FOUND, 0, NoteLibraryNotFound},
		{"driver not loaded", nvml.ERROR_DRIVER_NOT_LOADED, 0, NoteDriverNotLoaded},
		{"no permission", nvml.ERROR_NO_PERMISSION, 0, NoteNoPermission},
		{"other failure", nvml.ERROR_UNKNOWN, 0, "no GPU telemetry: NVML init failed: ERROR_UNKNOWN"},
		{"no device", nvml.SUCCESS, 0, NoteNoDevice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := &mock.Interface{
				InitFunc:           func() nvml.Return { return tc.init },
				ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
				DeviceGetCountFunc: func() (int, nvml.Return) { return tc.count, nvml.SUCCESS },
			}
			tel := OpenWith(lib)
			if tel.Available() {
				t.Fatal("Available with no GPU")
			}
			if tel.Note() != tc.want {
				t.Errorf("Note = %q, want %q", tel.Note(), tc.want)
			}
			if b := tel.Baseline(); b.UsedBytes != nil {
				t.Errorf("Baseline = %+v, want none", b)
			}
			sum := tel.Start(0, []int{42}).Stop()
			if sum.Note != tc.want || len(sum.Devices) != 0 {
				t.Errorf("Summary = %+v, want only the note", sum)
			}
			if _, ok := sum.EnergyJ(); ok {
				t.Error("EnergyJ ok without a GPU")
			}
		})
	}
}

// On this machine (no NVIDIA driver) Open must give the no-GPU note, not an error; on a
// GPU machine it must see the GPUs.
func TestOpenThisMachine(t *testing.T) {
	tel := Open()
	defer tel.Close()
	if tel.Available() {
		if len(tel.Info().Devices) == 0 || tel.Note() != "" {
			t.Fatalf("available with info %+v note %q", tel.Info(), tel.Note())
		}
		return
	}
	if !strings.HasPrefix(tel.Note(), "no GPU telemetry: ") {
		t.Fatalf("Note = %q", tel.Note())
	}
	t.Logf("note: %s", tel.Note())
	if sum := tel.Start(DefaultInterval, nil).Stop(); sum.Note != tel.Note() {
		t.Errorf("Summary.Note = %q, want %q", sum.Note, tel.Note())
	}
}

func TestSamplerBaselinePeakMean(t *testing.T) {
	srv, st := mockServer(t, 2)
	tel, clk := openMock(t, srv)
	st[0].usedV2, st[1].usedV2 = 10*gib, 1*gib
	b := tel.Baseline()
	if b.UsedBytes[0] != 10*gib || b.UsedBytes[1] != 1*gib {
		t.Fatalf("baseline %v", b.UsedBytes)
	}
	// GPU 0 under load: 12, 16, 14, 14 GiB (start, two ticks, stop); GPU 1 idles.
	st[0].usedV2 = 12 * gib
	s := manualSampler(tel, nil)
	for _, used := range []uint64{16 * gib, 14 * gib} {
		clk.advance(100 * time.Millisecond)
		st[0].usedV2 = used
		s.tick(clk.now())
	}
	clk.advance(100 * time.Millisecond)
	sum := s.Stop()

	if sum.Ticks != 4 || sum.Duration != 300*time.Millisecond || sum.MemoryAPI != MemoryAPIv2 {
		t.Errorf("ticks %d duration %v api %q", sum.Ticks, sum.Duration, sum.MemoryAPI)
	}
	d0, d1 := sum.Devices[0], sum.Devices[1]
	if !d0.HasBaseline || d0.BaselineUsedBytes != 10*gib || d0.PeakUsedBytes != 16*gib || d0.MeanUsedBytes != 14*gib {
		t.Errorf("GPU 0 baseline %d peak %d mean %d", d0.BaselineUsedBytes, d0.PeakUsedBytes, d0.MeanUsedBytes)
	}
	if d1.PeakUsedBytes != 1*gib || d1.MeanUsedBytes != 1*gib {
		t.Errorf("GPU 1 peak %d mean %d", d1.PeakUsedBytes, d1.MeanUsedBytes)
	}
	wantAt := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
	for k, p := range d0.Series {
		if p.At != wantAt[k] {
			t.Errorf("series[%d].At = %v, want %v", k, p.At, wantAt[k])
		}
	}
	if got := sum.PeakTotalUsedBytes(); got != 17*gib {
		t.Errorf("PeakTotalUsedBytes = %d, want 17 GiB", got)
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings %v", sum.Warnings)
	}
}

func TestSamplerWithoutBaselineWarns(t *testing.T) {
	srv, st := mockServer(t, 1)
	tel, _ := openMock(t, srv)
	st[0].usedV2 = 3 * gib
	sum := manualSampler(tel, nil).Stop()
	if !sum.Devices[0].HasBaseline || sum.Devices[0].BaselineUsedBytes != 3*gib {
		t.Errorf("baseline %+v", sum.Devices[0])
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "no baseline") {
		t.Errorf("warnings %v", sum.Warnings)
	}
}

func TestMemoryV2FallsBackToV1(t *testing.T) {
	srv, st := mockServer(t, 2)
	st[1].noV2 = true // one GPU without v2 puts every GPU on v1, so they compare
	for _, s := range st {
		s.usedV1, s.usedV2 = 5*gib, 4*gib
	}
	tel, _ := openMock(t, srv)
	if tel.Info().MemoryAPI != MemoryAPIv1 {
		t.Fatalf("MemoryAPI = %q", tel.Info().MemoryAPI)
	}
	tel.Baseline()
	sum := manualSampler(tel, nil).Stop()
	if sum.MemoryAPI != MemoryAPIv1 {
		t.Errorf("Summary.MemoryAPI = %q", sum.MemoryAPI)
	}
	for _, d := range sum.Devices {
		if d.PeakUsedBytes != 5*gib || d.MemoryAPI != MemoryAPIv1 {
			t.Errorf("GPU %d peak %d api %q, want v1's 5 GiB", d.Index, d.PeakUsedBytes, d.MemoryAPI)
		}
	}
}

func TestProcessAttribution(t *testing.T) {
	serverPID, otherPID := uint32(4242), uint32(777)
	procs := func(serverGiB, otherGiB uint64) []nvml.ProcessInfo {
		return []nvml.ProcessInfo{{Pid: serverPID, UsedGpuMemory: serverGiB * gib}, {Pid: otherPID, UsedGpuMemory: otherGiB * gib}}
	}
	for _, tc := range []struct {
		name          string
		pids          []int
		wantPIDs      []int
		wantPeak      uint64 // peak of the per-tick sum
		wantMean      uint64
		wantAttrib    bool
		wantWarnMatch bool
	}{
		{"server pid", []int{4242}, []int{4242}, 9 * gib, 8 * gib, true, false},
		{"every process", nil, []int{4242, 777}, 10 * gib, 9 * gib, true, false},
		{"unknown pid", []int{1}, nil, 0, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, st := mockServer(t, 1)
			tel, clk := openMock(t, srv)
			tel.Baseline()
			st[0].procs = procs(7, 1)
			s := manualSampler(tel, tc.pids)
			clk.advance(time.Second)
			st[0].procs = procs(9, 1)
			s.tick(clk.now())
			clk.advance(time.Second)
			st[0].procs = procs(8, 1)
			sum := s.Stop()
			d := sum.Devices[0]
			if d.ProcessAttributed != tc.wantAttrib || d.PeakProcessBytes != tc.wantPeak || d.MeanProcessBytes != tc.wantMean {
				t.Errorf("attributed %v peak %d mean %d, want %v %d %d", d.ProcessAttributed, d.PeakProcessBytes, d.MeanProcessBytes, tc.wantAttrib, tc.wantPeak, tc.wantMean)
			}
			var got []int
			for _, p := range d.Processes {
				got = append(got, p.PID)
				if p.PID == int(serverPID) && (p.PeakBytes != 9*gib || p.MeanBytes != 8*gib || p.Samples != 3) {
					t.Errorf("server process %+v", p)
				}
			}
			if len(got) != len(tc.wantPIDs) {
				t.Fatalf("processes %v, want %v", got, tc.wantPIDs)
			}
			for i := range got {
				if got[i] != tc.wantPIDs[i] {
					t.Errorf("processes %v, want %v", got, tc.wantPIDs)
				}
			}
			warned := len(sum.Warnings) == 1 && strings.Contains(sum.Warnings[0], "no GPU process matched")
			if warned != tc.wantWarnMatch {
				t.Errorf("warnings %v", sum.Warnings)
			}
		})
	}
}

func TestProcessMemoryNotAvailable(t *testing.T) {
	srv, st := mockServer(t, 1)
	st[0].procs = []nvml.ProcessInfo{{Pid: 10, UsedGpuMemory: notAvailable}}
	tel, _ := openMock(t, srv)
	tel.Baseline()
	d := manualSampler(tel, nil).Stop().Devices[0]
	if d.ProcessAttributed || d.PeakProcessBytes != 0 || len(d.Processes) != 0 {
		t.Errorf("%+v", d)
	}
}

func TestEnergy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		energyRet  nvml.Return
		powerRet   nvml.Return
		wantJ      float64
		wantSource string
	}{
		// The counter moves 1 000 000 mJ per tick below: 2 steps, 2000 J.
		{"counter", nvml.SUCCESS, nvml.SUCCESS, 2000, EnergyCounter},
		// Power 100 W, 300 W, 200 W one second apart: (100+300)/2 + (300+200)/2 = 450 J.
		{"power integral", nvml.ERROR_NOT_SUPPORTED, nvml.SUCCESS, 450, EnergyPowerIntegral},
		{"no power", nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_NOT_SUPPORTED, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, st := mockServer(t, 1)
			g := st[0]
			g.energyRet, g.powerRet = tc.energyRet, tc.powerRet
			tel, clk := openMock(t, srv)
			tel.Baseline()
			g.powerMW, g.energyMJ = 100_000, 5_000_000
			s := manualSampler(tel, nil)
			clk.advance(time.Second)
			g.powerMW, g.energyMJ = 300_000, 6_000_000
			s.tick(clk.now())
			clk.advance(time.Second)
			g.powerMW, g.energyMJ = 200_000, 7_000_000
			sum := s.Stop()
			d := sum.Devices[0]
			if d.EnergyJ != tc.wantJ || d.EnergySource != tc.wantSource {
				t.Errorf("energy %v J from %q, want %v from %q", d.EnergyJ, d.EnergySource, tc.wantJ, tc.wantSource)
			}
			j, ok := sum.EnergyJ()
			if ok != (tc.wantSource != "") || j != tc.wantJ {
				t.Errorf("Summary.EnergyJ = %v, %v", j, ok)
			}
			// The counter is kept per tick, so a part of the window has its own energy.
			for k, p := range d.Series {
				want := uint64(0)
				if tc.wantSource == EnergyCounter {
					want = uint64(5_000_000 + 1_000_000*k)
				}
				if p.EnergyMilliJ != want {
					t.Errorf("tick %d: energy counter %d mJ, want %d", k, p.EnergyMilliJ, want)
				}
			}
			if tc.powerRet == nvml.SUCCESS && (d.PowerPeakW != 300 || d.PowerMeanW != 200) {
				t.Errorf("power peak %v mean %v, want 300 and 200", d.PowerPeakW, d.PowerMeanW)
			}
			if tpj, ok := sum.TokensPerJoule(900); ok != (tc.wantJ > 0) || (ok && tpj != 900/tc.wantJ) {
				t.Errorf("TokensPerJoule = %v, %v", tpj, ok)
			}
		})
	}
}

func TestUtilisation(t *testing.T) {
	srv, st := mockServer(t, 1)
	tel, clk := openMock(t, srv)
	tel.Baseline()
	st[0].util, st[0].memUtil = 20, 10
	s := manualSampler(tel, nil)
	clk.advance(time.Second)
	st[0].util, st[0].memUtil = 80, 40
	d := s.Stop().Devices[0]
	if d.GPUUtilPeak != 80 || d.GPUUtilMean != 50 || d.MemUtilMean != 25 {
		t.Errorf("util peak %v mean %v mem %v", d.GPUUtilPeak, d.GPUUtilMean, d.MemUtilMean)
	}
}

// The real loop: Start then Stop gives at least the start and stop readings, and Stop is
// idempotent.
func TestStartStop(t *testing.T) {
	srv, st := mockServer(t, 1)
	st[0].usedV2 = gib
	tel := OpenWith(srv)
	tel.Baseline()
	s := tel.Start(MinInterval/2, []int{1})
	sum := s.Stop()
	if sum.Interval != MinInterval || sum.Ticks < 2 || sum.Devices[0].PeakUsedBytes != gib {
		t.Errorf("interval %v ticks %d peak %d", sum.Interval, sum.Ticks, sum.Devices[0].PeakUsedBytes)
	}
	if again := s.Stop(); again.Ticks != sum.Ticks {
		t.Errorf("second Stop changed the summary")
	}
	tel.Close()
	if tel.Available() {
		t.Error("Available after Close")
	}
}

func TestCheckDeclaredAgainstMock(t *testing.T) {
	srv, _ := mockServer(t, 1)
	tel, _ := openMock(t, srv)
	if w := tel.CheckDeclared("H200", 141); len(w) != 0 {
		t.Errorf("H200 141 GB: %v", w)
	}
	if w := tel.CheckDeclared("RTX 4060", 8); len(w) != 2 {
		t.Errorf("RTX 4060 8 GB on an H200: %v", w)
	}
}

// BenchmarkTick is one sampler tick over 8 mock H200s with two processes each; it
// measures planrun's own cost per tick (NVML calls on real hardware add driver time).
func BenchmarkTick(b *testing.B) {
	srv, st := mockServer(b, 8)
	for _, g := range st {
		g.usedV2, g.powerMW, g.util = 20*gib, 300_000, 90
		g.procs = []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 18 * gib}, {Pid: 777, UsedGpuMemory: gib}}
	}
	tel, clk := openMock(b, srv)
	tel.Baseline()
	s := manualSampler(tel, []int{4242})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clk.advance(DefaultInterval)
		s.tick(clk.now())
		if len(s.devs[0].series) == cap(s.devs[0].series) {
			for i := range s.devs {
				s.devs[i].series = s.devs[i].series[:0]
			}
		}
	}
}
