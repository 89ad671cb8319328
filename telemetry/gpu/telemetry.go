package gpu

import (
	"fmt"
	"sync"
	"time"
)

// reader is one source of per-device readings: NVML in a cgo build, a fake in tests. Each
// method reports ok=false when the figure is unsupported or the call failed.
type reader interface {
	memory(dev int) (used, reserved uint64, ok bool)
	utilization(dev int) (gpu, mem uint32, ok bool)
	power(dev int) (milliwatts uint32, ok bool)
	energy(dev int) (millijoules uint64, ok bool)
	// processes appends the device's compute processes to buf[:0] and returns it.
	processes(dev int, buf []procMem) ([]procMem, bool)
	close()
}

// procMem is one compute process's memory on one device.
type procMem struct {
	pid  uint32
	used uint64
}

// notAvailable is NVML's "value not available" (e.g. per-process memory under Windows
// WDDM or in some containers).
const notAvailable = ^uint64(0)

// Telemetry is an open NVML session, or the reason there is none. A Telemetry whose Note
// is not empty still works: Baseline returns nothing and its samplers return a Summary
// carrying the note, so a run without a GPU goes on.
type Telemetry struct {
	note string
	info Info
	r    reader
	now  func() time.Time

	mu       sync.Mutex
	baseline *Baseline
}

// unavailable is a Telemetry that measures nothing and says why.
func unavailable(note string) *Telemetry {
	return &Telemetry{note: note, now: time.Now}
}

// Remote is the Telemetry for a server on another host: local NVML would measure the
// wrong machine, so there is none, and the note says to use what the server exposes
// (package serverstats).
func Remote(host string) *Telemetry {
	return unavailable(fmt.Sprintf("no GPU telemetry: hardware is remote (host %s); local NVML cannot see it — VRAM only from what the server exposes", host))
}

// Off is the Telemetry of a run that asked for no GPU sampling (to measure the
// sampler's own overhead, for one): no readings, and the note says it was turned off.
func Off() *Telemetry {
	return unavailable("no GPU telemetry: sampling turned off for this run (-gpu=false)")
}

// Available reports whether NVML readings can be taken.
func (t *Telemetry) Available() bool { return t != nil && t.r != nil }

// Note says why there is no GPU telemetry; empty when Available.
func (t *Telemetry) Note() string {
	if t == nil {
		return NoteNoDevice
	}
	return t.note
}

// Info describes the GPUs, driver and CUDA version; empty when not Available.
func (t *Telemetry) Info() Info {
	if t == nil {
		return Info{}
	}
	return t.info
}

// CheckDeclared compares the plan's hardware with what NVML sees (see the package-level
// CheckDeclared). Without NVML it says the declaration cannot be checked.
func (t *Telemetry) CheckDeclared(declaredGPU string, vramGB float64) []string {
	if !t.Available() {
		if declaredGPU == "" && vramGB <= 0 {
			return nil
		}
		return []string{"hardware not checked against the machine: " + t.Note()}
	}
	return CheckDeclared(t.info, declaredGPU, vramGB)
}

// Close releases NVML; stop its samplers first. Summaries already returned stay valid.
func (t *Telemetry) Close() {
	if t.Available() {
		t.r.close()
		t.r = nil
	}
}

// Baseline is memory in use per GPU before load, indexed like Info().Devices.
type Baseline struct {
	At        time.Time `json:"at"`
	UsedBytes []uint64  `json:"used_bytes"`
}

// Baseline reads each GPU's memory now, before the load starts (after the server has
// loaded the model, so the gap to the peak is what the requests cost). The next samplers
// report it; a sampler started with none reads one itself at Start.
func (t *Telemetry) Baseline() Baseline {
	if !t.Available() {
		return Baseline{}
	}
	b := Baseline{At: t.now(), UsedBytes: make([]uint64, len(t.info.Devices))}
	for i := range t.info.Devices {
		if used, _, ok := t.r.memory(i); ok {
			b.UsedBytes[i] = used
		}
	}
	t.mu.Lock()
	t.baseline = &b
	t.mu.Unlock()
	return b
}

// Start begins sampling every interval (DefaultInterval when zero; never below
// MinInterval) until Stop. pids selects the server's processes for per-process memory;
// none means every compute process on the GPU.
func (t *Telemetry) Start(interval time.Duration, pids []int) *Sampler {
	s := t.newSampler(interval, pids)
	if s.r != nil {
		go s.loop()
	} else {
		close(s.done)
	}
	return s
}
