package runreport

import (
	"fmt"
	"strings"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/procmem/exporter"
)

// memoryCell is the seed table's memory column: the measured figure and a short name of
// its source (NVML for a GPU, PSS or RSS for the server's processes on the CPU, read here
// or by a process exporter on its host, a batch job's MaxRSS as its scheduler read it), or "—" with the reason
// nothing was read. Below 1 GB it keeps three decimals, so a tiny model's
// quantizations still order.
func memoryCell(r ledger.Row) string {
	gb, src, ok := r.MemoryGB()
	if !ok {
		if src == "" {
			return "—"
		}
		return "— (" + src + ")"
	}
	decimals := 2
	if gb < 1 {
		decimals = 3
	}
	return fmt.Sprintf("%.*f %s", decimals, gb, memoryLabel(r, src))
}

// memoryLabel shortens a memory source to the word the table shows. A batch job's own
// figure (its scheduler's reading of the whole job: Slurm's sstat) is named after the
// row's scheduler.
func memoryLabel(r ledger.Row, src string) string {
	switch {
	case src != "" && src == r.MemJobSource:
		job := "batch job"
		if s := r.Batch.Scheduler; s != "" {
			job = strings.ToUpper(s[:1]) + s[1:] + " job"
		}
		return "MaxRSS (" + job + ")"
	case strings.HasPrefix(src, procmem.SourcePSS):
		return "PSS"
	case strings.HasPrefix(src, procmem.SourceRSS):
		return "RSS"
	case strings.HasPrefix(src, exporter.Source):
		return "RSS (exporter)"
	case strings.HasPrefix(src, "dcgm"):
		return "DCGM"
	case strings.HasPrefix(src, "nvml"):
		return "NVML"
	}
	return ""
}

// hardwareCell is the seed table's hardware column: the plan's hardware name, then what
// the server really ran on, the GPUs NVML read and the CPU model with the cores the
// kernel allowed the server ("cpu1: AMD EPYC, cpus 1").
func hardwareCell(r ledger.Row) string {
	var ran []string
	if r.GPU != "" {
		ran = append(ran, r.GPU)
	}
	if r.CPU != "" || r.CPUsAllowed != "" {
		cpu := r.CPU
		if r.CPUsAllowed != "" {
			cpu = strings.TrimPrefix(cpu+", cpus "+r.CPUsAllowed, ", ")
		}
		ran = append(ran, cpu)
	}
	detail := strings.Join(ran, "; ")
	switch {
	case r.Hardware == "":
		return detail
	case detail == "":
		return r.Hardware
	}
	return r.Hardware + ": " + detail
}
