// Package gpu measures GPU memory, utilisation and power with NVML while a benchmark
// window runs, and estimates the VRAM a model needs.
//
// Telemetry never fails a run: without a GPU, without an NVIDIA driver, for a remote
// server, or in a build without cgo, Open returns a handle whose Note says why there is no
// figure, and whose sampler returns a Summary carrying that note.
//
// Memory "used" comes in two flavours. NVML's v1 memory info counts driver-reserved
// memory as used (about 600 MiB on an idle H200); v2 reports reserved memory apart. The
// sampler asks for v2 first, falls back to v1, and says which one it reports in
// Summary.MemoryAPI.
package gpu

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Notes that explain a missing VRAM figure. They are written into results as they are.
const (
	NoteLibraryNotFound = "no GPU telemetry: NVML library not found — no NVIDIA driver on this machine"
	NoteDriverNotLoaded = "no GPU telemetry: NVIDIA driver not loaded"
	NoteNoPermission    = "no GPU telemetry: no permission to use NVML"
	NoteNoDevice        = "no GPU telemetry: NVML sees no GPU"
	NoteNoCgo           = "no GPU telemetry: built without cgo"
)

// Memory APIs, recorded on every Summary so a reader knows what "used" means.
const (
	MemoryAPIv2 = "nvml-v2 used (reserved excluded)"
	MemoryAPIv1 = "nvml-v1 used (includes driver-reserved memory)"
)

// Energy sources, recorded per device.
const (
	// EnergyCounter: the difference of NVML's total energy counter (Volta and later).
	EnergyCounter = "nvml-energy-counter"
	// EnergyPowerIntegral: power samples integrated over the window (trapezoids).
	EnergyPowerIntegral = "power-integral"
)

// DefaultInterval is the sampler's period when none is given.
const DefaultInterval = 100 * time.Millisecond

// MinInterval is the shortest period the sampler accepts; NVML's own counters do not
// update faster, so shorter periods only add load.
const MinInterval = 10 * time.Millisecond

// Device is one GPU as NVML sees it.
type Device struct {
	Index      int    `json:"index"`
	Name       string `json:"name"`
	UUID       string `json:"uuid"`
	TotalBytes uint64 `json:"memory_total_bytes"`
}

// Info is what the manifest and the hardware columns record about the machine's GPUs.
type Info struct {
	Devices []Device `json:"devices,omitempty"`
	// DriverVersion is the NVIDIA driver ("580.95.05").
	DriverVersion string `json:"driver_version,omitempty"`
	// CUDADriverVersion is the CUDA version the driver supports ("13.0").
	CUDADriverVersion string `json:"cuda_driver_version,omitempty"`
	// MemoryAPI says which memory figure the sampler reports (MemoryAPIv2 or MemoryAPIv1).
	MemoryAPI string `json:"memory_api,omitempty"`
}

// cudaVersionString turns NVML's integer CUDA version (12040) into "12.4".
func cudaVersionString(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// CheckDeclared compares a plan's hardware block with what NVML sees and returns one
// warning per mismatch; none when they agree or when nothing was declared. The name
// matches when the declared name, stripped of vendor words, appears in a device's name
// ("RTX 4060" matches "NVIDIA GeForce RTX 4060"). The memory matches when it is within 6%
// of a device's total, read as GiB or as GB (cards are sold in either).
func CheckDeclared(info Info, declaredGPU string, vramGB float64) []string {
	if declaredGPU == "" && vramGB <= 0 {
		return nil
	}
	if len(info.Devices) == 0 {
		return []string{fmt.Sprintf("hardware declares %q but NVML sees no GPU", declaredGPU)}
	}
	var warns []string
	if declaredGPU != "" {
		want := normalizeGPUName(declaredGPU)
		found := false
		for _, d := range info.Devices {
			if want != "" && strings.Contains(normalizeGPUName(d.Name), want) {
				found = true
				break
			}
		}
		if !found {
			warns = append(warns, fmt.Sprintf("hardware declares gpu %q but NVML sees %s", declaredGPU, deviceNames(info.Devices)))
		}
	}
	if vramGB > 0 {
		found := false
		for _, d := range info.Devices {
			gib := float64(d.TotalBytes) / (1 << 30)
			gb := float64(d.TotalBytes) / 1e9
			if math.Abs(gib-vramGB) <= 0.06*vramGB || math.Abs(gb-vramGB) <= 0.06*vramGB {
				found = true
				break
			}
		}
		if !found {
			var totals []string
			for _, d := range info.Devices {
				totals = append(totals, fmt.Sprintf("GPU %d: %.1f GiB", d.Index, float64(d.TotalBytes)/(1<<30)))
			}
			warns = append(warns, fmt.Sprintf("hardware declares vram_gb = %g but NVML sees %s", vramGB, strings.Join(totals, ", ")))
		}
	}
	return warns
}

func deviceNames(devs []Device) string {
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = fmt.Sprintf("GPU %d %q", d.Index, d.Name)
	}
	return strings.Join(names, ", ")
}

// normalizeGPUName drops vendor words, spaces, dashes and case, so that "RTX-4060",
// "rtx 4060" and "NVIDIA GeForce RTX 4060" compare equal.
func normalizeGPUName(s string) string {
	s = strings.ToLower(s)
	for _, w := range []string{"nvidia", "geforce", "tesla", "quadro"} {
		s = strings.ReplaceAll(s, w, "")
	}
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
