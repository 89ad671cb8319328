//go:build !cgo

package gpu

// Open reports that this build has no NVML: go-nvml needs cgo. Rebuild with
// CGO_ENABLED=1 on a machine with the NVIDIA driver to measure VRAM.
func Open() *Telemetry {
	return unavailable(NoteNoCgo)
}
