package runreport

import (
	"math"
	"testing"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/telemetry/procmem"
)

func TestMemoryAndHardwareCells(t *testing.T) {
	r := ledger.NewRow()
	r.VRAMSource = "no GPU telemetry: NVML library not found — no NVIDIA driver on this machine"
	r.MemSource = "no process memory: the server was not started by planrun"
	if got := memoryCell(r); got != "— (no process memory: the server was not started by planrun)" {
		t.Errorf("nothing read: %q", got)
	}
	r.MemPeakGB, r.MemSource = 0.0834, procmem.SourceRSS+", 2 processes; PSS beside it (smaps_rollup)"
	if got := memoryCell(r); got != "0.083 RSS" {
		t.Errorf("process figure: %q", got)
	}
	r.MemSource = "process-exporter http://gpu-a:9256/metrics group ollama, RSS, 2 processes"
	if got := memoryCell(r); got != "0.083 RSS (exporter)" {
		t.Errorf("a remote host's process figure: %q", got)
	}
	r.MemPeakGB, r.MemJobPeakGB, r.MemJobSource = math.NaN(), 0.5, "sstat MaxRSS of job step 41.batch: the whole job"
	r.Batch.Scheduler = "slurm"
	if got := memoryCell(r); got != "0.500 MaxRSS (Slurm job)" {
		t.Errorf("a Slurm job's figure: %q", got)
	}
	r.VRAMPeakGB, r.VRAMSource = 4.5, "nvml-v2 used (reserved excluded)"
	if got := memoryCell(r); got != "4.50 NVML" {
		t.Errorf("GPU figure: %q", got)
	}
	r.VRAMPeakGB = math.NaN()

	for _, c := range []struct {
		name, gpu, cpu, allowed, build, want string
	}{
		{"cpu1", "", "AMD EPYC", "1", "", "cpu1: AMD EPYC, cpus 1"},
		{"", "", "AMD EPYC", "0-1", "", "AMD EPYC, cpus 0-1"},
		{"h200", "GPU 0 NVIDIA H200", "AMD EPYC", "0-15", "", "h200: GPU 0 NVIDIA H200; AMD EPYC, cpus 0-15"},
		{"rtx", "", "", "", "", "rtx"},
		{"", "", "", "3", "", "cpus 3"},
		{"cpu1", "", "Xeon", "1", "ollama CPU AVX AVX2 (libggml-cpu-haswell.so)", "cpu1: Xeon, cpus 1; ollama CPU AVX AVX2 (libggml-cpu-haswell.so)"},
	} {
		r.Hardware, r.GPU, r.CPU, r.CPUsAllowed, r.EngineBuild = c.name, c.gpu, c.cpu, c.allowed, c.build
		if got := hardwareCell(r); got != c.want {
			t.Errorf("hardwareCell(%+v) = %q, want %q", c, got, c.want)
		}
	}
}
