package gpu

import (
	"fmt"
	"sync"
	"time"
)

// Point is one reading of one GPU during the window.
type Point struct {
	At           time.Duration `json:"t_ns"`          // since the sampler started
	UsedBytes    uint64        `json:"used_bytes"`    // per the Summary's MemoryAPI
	ProcessBytes uint64        `json:"process_bytes"` // sum over the attributed processes
	GPUUtil      uint32        `json:"gpu_util_pct"`
	MemUtil      uint32        `json:"mem_util_pct"`
	PowerMilliW  uint32        `json:"power_mw"`
	// EnergyMilliJ is the GPU's total energy counter (millijoules since the driver
	// loaded), 0 where it has none: per tick, so the energy of any part of the window
	// can be read from it (package power).
	EnergyMilliJ uint64 `json:"energy_mj,omitempty"`
}

// ProcessMemory is one process's memory on one GPU over the window.
type ProcessMemory struct {
	PID       int    `json:"pid"`
	PeakBytes uint64 `json:"peak_bytes"`
	MeanBytes uint64 `json:"mean_bytes"` // over the ticks the process was seen
	Samples   int    `json:"samples"`
}

// DeviceSummary is one GPU over the measured window.
type DeviceSummary struct {
	Device
	MemoryAPI string `json:"memory_api"`

	HasBaseline       bool   `json:"has_baseline"`
	BaselineUsedBytes uint64 `json:"baseline_used_bytes"`
	PeakUsedBytes     uint64 `json:"peak_used_bytes"`
	MeanUsedBytes     uint64 `json:"mean_used_bytes"`

	// ProcessAttributed is false when NVML could not report per-process memory.
	ProcessAttributed bool            `json:"process_attributed"`
	PeakProcessBytes  uint64          `json:"peak_process_bytes"` // peak of the per-tick sum
	MeanProcessBytes  uint64          `json:"mean_process_bytes"`
	Processes         []ProcessMemory `json:"processes,omitempty"`

	GPUUtilMean float64 `json:"gpu_util_mean_pct"`
	GPUUtilPeak float64 `json:"gpu_util_peak_pct"`
	MemUtilMean float64 `json:"mem_util_mean_pct"`

	HasPower     bool    `json:"has_power"`
	PowerMeanW   float64 `json:"power_mean_w"`
	PowerPeakW   float64 `json:"power_peak_w"`
	EnergyJ      float64 `json:"energy_j"`
	EnergySource string  `json:"energy_source,omitempty"` // EnergyCounter or EnergyPowerIntegral

	Series []Point `json:"series,omitempty"`
}

// Summary is the GPU telemetry of one measured window.
type Summary struct {
	// Note says why there are no figures; empty when the GPUs were sampled.
	Note      string          `json:"note,omitempty"`
	MemoryAPI string          `json:"memory_api,omitempty"`
	Start     time.Time       `json:"start"`
	Duration  time.Duration   `json:"duration_ns"`
	Interval  time.Duration   `json:"interval_ns"`
	Ticks     int             `json:"ticks"`
	PIDs      []int           `json:"pids,omitempty"` // the attributed processes; none means all
	Devices   []DeviceSummary `json:"devices,omitempty"`
	Warnings  []string        `json:"warnings,omitempty"`
}

// EnergyJ is the energy all GPUs drew over the window; ok is false when no GPU reported
// power.
func (s Summary) EnergyJ() (joules float64, ok bool) {
	for _, d := range s.Devices {
		if d.EnergySource != "" {
			joules += d.EnergyJ
			ok = true
		}
	}
	return joules, ok
}

// TokensPerJoule divides the window's output tokens by its energy.
func (s Summary) TokensPerJoule(tokens int) (float64, bool) {
	j, ok := s.EnergyJ()
	if !ok || j <= 0 {
		return 0, false
	}
	return float64(tokens) / j, true
}

// PeakTotalUsedBytes is the peak over the window of memory used summed across GPUs, for
// a model split over several cards. Ticks read every GPU at once, so the sum is per tick.
func (s Summary) PeakTotalUsedBytes() uint64 {
	return s.peakTotal(func(p Point) uint64 { return p.UsedBytes })
}

// PeakTotalProcessBytes is PeakTotalUsedBytes for the attributed processes' memory.
func (s Summary) PeakTotalProcessBytes() uint64 {
	return s.peakTotal(func(p Point) uint64 { return p.ProcessBytes })
}

func (s Summary) peakTotal(f func(Point) uint64) uint64 {
	var peak uint64
	for k := 0; k < s.Ticks; k++ {
		var sum uint64
		for _, d := range s.Devices {
			if k < len(d.Series) {
				sum += f(d.Series[k])
			}
		}
		peak = max(peak, sum)
	}
	return peak
}

// Sampler reads every GPU at a fixed interval during one measured window.
type Sampler struct {
	r        reader
	now      func() time.Time
	interval time.Duration
	start    time.Time
	pids     []uint32
	summary  Summary // devices, note and baseline filled at start

	devs    []devState
	procBuf []procMem

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

type devState struct {
	series       []Point
	procs        []procAcc
	procOK       bool
	powerOK      bool
	energyOK     bool
	energyStart  uint64
	energyEnd    uint64
	failedMemory int
}

type procAcc struct {
	pid       uint32
	peak, sum uint64
	n         int
}

// seriesCap sizes each device's series so a 100 s window at 100 ms never reallocates.
const seriesCap = 1024

func (t *Telemetry) newSampler(interval time.Duration, pids []int) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	interval = max(interval, MinInterval)
	now := time.Now
	if t != nil && t.now != nil {
		now = t.now
	}
	s := &Sampler{now: now, interval: interval, stop: make(chan struct{}), done: make(chan struct{})}
	s.summary.Interval = interval
	if len(pids) > 0 {
		s.summary.PIDs = append([]int(nil), pids...)
		for _, p := range pids {
			s.pids = append(s.pids, uint32(p))
		}
	}
	if !t.Available() {
		s.summary.Note = t.Note()
		s.start = now()
		s.summary.Start = s.start
		return s
	}
	s.r = t.r
	t.mu.Lock()
	base := t.baseline
	t.mu.Unlock()
	if base == nil {
		b := t.Baseline()
		base = &b
		s.summary.Warnings = append(s.summary.Warnings, "no baseline taken before load: baseline read at the start of the window")
	}
	s.summary.MemoryAPI = t.info.MemoryAPI
	s.summary.Devices = make([]DeviceSummary, len(t.info.Devices))
	s.devs = make([]devState, len(t.info.Devices))
	s.procBuf = make([]procMem, 0, 64)
	s.start = now()
	s.summary.Start = s.start
	for i, d := range t.info.Devices {
		ds := &s.summary.Devices[i]
		ds.Device = d
		ds.MemoryAPI = t.info.MemoryAPI
		if i < len(base.UsedBytes) {
			ds.HasBaseline = true
			ds.BaselineUsedBytes = base.UsedBytes[i]
		}
		st := &s.devs[i]
		st.series = make([]Point, 0, seriesCap)
		st.procs = make([]procAcc, 0, 8)
		st.energyStart, st.energyOK = s.r.energy(i)
	}
	s.tick(s.start)
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	tk := time.NewTicker(s.interval)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
			s.tick(s.now())
		}
	}
}

// tick reads every GPU once. It allocates nothing unless a series outgrows its capacity
// or a new process appears. Only the loop calls it, and Stop once the loop has ended, so
// it needs no lock.
func (s *Sampler) tick(now time.Time) {
	at := now.Sub(s.start)
	for i := range s.devs {
		st := &s.devs[i]
		p := Point{At: at}
		if used, _, ok := s.r.memory(i); ok {
			p.UsedBytes = used
		} else {
			st.failedMemory++
		}
		if g, m, ok := s.r.utilization(i); ok {
			p.GPUUtil, p.MemUtil = g, m
		}
		if mw, ok := s.r.power(i); ok {
			p.PowerMilliW = mw
			st.powerOK = true
		}
		if st.energyOK {
			p.EnergyMilliJ, _ = s.r.energy(i)
		}
		var ok bool
		s.procBuf, ok = s.r.processes(i, s.procBuf)
		if ok {
			p.ProcessBytes = st.attribute(s.procBuf, s.pids)
		}
		st.series = append(st.series, p)
	}
}

// attribute adds the selected processes' memory to their running figures and returns
// their sum. Processes whose memory NVML cannot report leave procOK false.
func (st *devState) attribute(procs []procMem, pids []uint32) uint64 {
	var sum uint64
	for _, pr := range procs {
		if len(pids) > 0 && !containsPID(pids, pr.pid) {
			continue
		}
		if pr.used == notAvailable {
			continue
		}
		st.procOK = true
		sum += pr.used
		j := 0
		for j < len(st.procs) && st.procs[j].pid != pr.pid {
			j++
		}
		if j == len(st.procs) {
			st.procs = append(st.procs, procAcc{pid: pr.pid})
		}
		a := &st.procs[j]
		a.peak = max(a.peak, pr.used)
		a.sum += pr.used
		a.n++
	}
	return sum
}

func containsPID(pids []uint32, pid uint32) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// Stop takes a last reading, ends sampling and summarises the window. Calling it again
// returns the same Summary.
func (s *Sampler) Stop() Summary {
	s.stopOnce.Do(func() {
		close(s.stop)
		<-s.done
		end := s.now()
		s.summary.Duration = end.Sub(s.start)
		if s.r == nil {
			return
		}
		for i := range s.devs {
			st := &s.devs[i]
			if st.energyOK {
				st.energyEnd, st.energyOK = s.r.energy(i)
			}
		}
		s.tick(end)
		s.summarise()
	})
	return s.summary
}

func (s *Sampler) summarise() {
	s.summary.Ticks = len(s.devs[0].series)
	matched := false
	for i := range s.devs {
		st, ds := &s.devs[i], &s.summary.Devices[i]
		ds.Series = st.series
		n := float64(len(st.series))
		var sumUsed, sumProc, sumUtil, sumMemUtil, sumPower float64
		for _, p := range st.series {
			ds.PeakUsedBytes = max(ds.PeakUsedBytes, p.UsedBytes)
			ds.PeakProcessBytes = max(ds.PeakProcessBytes, p.ProcessBytes)
			ds.GPUUtilPeak = max(ds.GPUUtilPeak, float64(p.GPUUtil))
			ds.PowerPeakW = max(ds.PowerPeakW, float64(p.PowerMilliW)/1000)
			sumUsed += float64(p.UsedBytes)
			sumProc += float64(p.ProcessBytes)
			sumUtil += float64(p.GPUUtil)
			sumMemUtil += float64(p.MemUtil)
			sumPower += float64(p.PowerMilliW) / 1000
		}
		ds.MeanUsedBytes = uint64(sumUsed / n)
		ds.MeanProcessBytes = uint64(sumProc / n)
		ds.GPUUtilMean = sumUtil / n
		ds.MemUtilMean = sumMemUtil / n
		ds.ProcessAttributed = st.procOK
		for _, a := range st.procs {
			ds.Processes = append(ds.Processes, ProcessMemory{PID: int(a.pid), PeakBytes: a.peak, MeanBytes: a.sum / uint64(a.n), Samples: a.n})
		}
		ds.HasPower = st.powerOK
		if st.powerOK {
			ds.PowerMeanW = sumPower / n
		}
		switch {
		case st.energyOK && st.energyEnd >= st.energyStart:
			ds.EnergyJ = float64(st.energyEnd-st.energyStart) / 1000
			ds.EnergySource = EnergyCounter
		case st.powerOK:
			ds.EnergyJ = integratePower(st.series)
			ds.EnergySource = EnergyPowerIntegral
		}
		if st.failedMemory > 0 {
			s.summary.Warnings = append(s.summary.Warnings, fmt.Sprintf("GPU %d: memory reading failed in %d of %d ticks", ds.Index, st.failedMemory, len(st.series)))
		}
		matched = matched || len(st.procs) > 0
	}
	if len(s.pids) > 0 && !matched {
		s.summary.Warnings = append(s.summary.Warnings, fmt.Sprintf("no GPU process matched PIDs %v (NVML reports host PIDs: in a container the server's PID may differ)", s.summary.PIDs))
	}
}

// integratePower is the energy in joules under the power series, by trapezoids.
func integratePower(series []Point) float64 {
	var j float64
	for k := 1; k < len(series); k++ {
		dt := (series[k].At - series[k-1].At).Seconds()
		j += dt * (float64(series[k].PowerMilliW) + float64(series[k-1].PowerMilliW)) / 2000
	}
	return j
}
