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

// memoryNote is the memory cell of a table whose notes are footnotes: the figure, or
// "—" with why nothing was read as a note of its own (why is "" when a figure was read).
func memoryNote(r ledger.Row) (cell, why string) {
	if _, src, ok := r.MemoryGB(); !ok {
		if src != "" {
			return "—", "memory: " + src
		}
		return "—", ""
	}
	return memoryCell(r), ""
}

// MemoryShort is the memory figure as the terminal's summary shows it: the table's
// figure and its source's short name ("0.412 RSS"), "-" when none was read.
func MemoryShort(r ledger.Row) string {
	if _, _, ok := r.MemoryGB(); !ok {
		return "-"
	}
	return memoryCell(r)
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
// kernel allowed the server, then the build its engine reports ("cpu1: AMD EPYC, cpus 1;
// ollama CPU … AVX2 … (libggml-cpu-haswell.so)"): the same engine is 10–34× apart
// between builds, so a figure is read with its build.
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
	if r.EngineBuild != "" {
		ran = append(ran, r.EngineBuild)
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
