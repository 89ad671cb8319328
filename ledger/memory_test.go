package ledger

import (
	"math"
	"testing"
)

// The table's memory is the GPU's when read, else the server's process tree, else a
// Slurm job's MaxRSS; with none, the reason.
func TestMemoryGBOrder(t *testing.T) {
	r := NewRow()
	r.MemSource, r.VRAMSource = "no process memory: the server runs on host gpu-a", "none: remote host gpu-a without telemetry"
	if gb, src, ok := r.MemoryGB(); ok || !math.IsNaN(gb) || src != r.MemSource {
		t.Errorf("nothing read: %v %q %v", gb, src, ok)
	}
	r.MemJobPeakGB, r.MemJobSource = 0.5, "sstat MaxRSS of job 41.batch"
	if gb, src, ok := r.MemoryGB(); !ok || gb != 0.5 || src != r.MemJobSource {
		t.Errorf("the job's only: %v %q %v", gb, src, ok)
	}
	r.MemPeakGB, r.MemSource = 0.2, "process tree RSS"
	if gb, src, _ := r.MemoryGB(); gb != 0.2 || src != r.MemSource {
		t.Errorf("the process tree before the job: %v %q", gb, src)
	}
	r.VRAMPeakGB, r.VRAMSource = 4.5, "nvml-v2"
	if gb, src, _ := r.MemoryGB(); gb != 4.5 || src != r.VRAMSource {
		t.Errorf("the GPU first: %v %q", gb, src)
	}
}
