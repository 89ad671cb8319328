package apply

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/procmem/exporter"
)

// procMonitor samples the memory of the server's process tree (procmem): the figure
// that stands for VRAM when the model runs on the CPU. It reads a server planrun started
// on this machine; any other through a process exporter on the server's host, when the
// hardware names one (telemetry { process = URL }). Without either the summary says why
// there is no figure.
type procMonitor struct {
	proc     *servers.Process
	exporter string // the exporter's metrics URL
	group    string // its group that is the server; "" for its only one
	why      string // set when there is nothing to read
	sampler  *procmem.Sampler
}

// exporterInterval is how often a process exporter is scraped: each scrape is an HTTP
// round trip and, on the host, a read of every process's smaps_rollup.
const exporterInterval = 500 * time.Millisecond

func newProcMonitor(cell *plan.Cell, proc *servers.Process) *procMonitor {
	var tel plan.Telemetry
	remote := ""
	if h := cell.Hardware; h != nil {
		tel = h.Telemetry
		if !isLocalHost(h.Host) {
			remote = h.Host
		}
	}
	switch {
	case proc != nil && remote == "":
		return &procMonitor{proc: proc}
	case tel.Process != "":
		return &procMonitor{exporter: tel.Process, group: tel.ProcessGroup}
	case remote != "":
		return &procMonitor{why: "no process memory: the server runs on host " + remote +
			" (run planrun process-exporter there and give the hardware telemetry { process = URL })"}
	}
	return &procMonitor{why: "no process memory: the server was not started by planrun (no server block), so its processes are unknown" +
		" (a process exporter beside it, telemetry { process = URL }, can read them)"}
}

func (p *procMonitor) start(context.Context) {
	switch {
	case p.proc != nil:
		// The group is read at every tick: Ollama's runner holds the weights, and a
		// restart of it during the window must not drop out of the figure.
		p.sampler = procmem.Start(0, p.proc.GroupPIDs)
	case p.exporter != "":
		p.sampler = procmem.StartFunc(exporterInterval, exporter.Origin(ledger.SafeURL(p.exporter), p.group),
			exporter.Reader(statsClient, p.exporter, p.group))
	default:
		p.sampler = procmem.Unavailable(p.why)
	}
}

func (p *procMonitor) stop(m *levelMeasurement) { m.Proc = p.sampler.Stop() }

// cpuOverheadBytes is the estimate's overhead for a server on the CPU, in place of the
// GPU's CUDA context: Ollama's server and runner processes (Go runtime and binary,
// llama.cpp's CPU compute buffers for a 512-token context) came to about 0.09 GB of RSS
// beyond weights and KV cache with the quickstart's three variants (docs/seed-table.md).
const cpuOverheadBytes = 90e6

// estimateOverhead is the overhead the cell's VRAM estimate adds: the GPU default when
// NVML can measure the server, else cpuOverheadBytes.
func (a *applier) estimateOverhead(cell *plan.Cell) float64 {
	if a.telemetryFor(cell).Available() {
		return gpu.DefaultOverheadBytes
	}
	return cpuOverheadBytes
}

// setProcessMemory fills the row's process-memory columns from the level's sampler, the
// server's own figures (Ollama's /api/ps size), and the difference between the
// measured memory and the seed's estimate, and returns notes that explain them.
func setProcessMemory(cell *plan.Cell, row *ledger.Row, m levelMeasurement) []string {
	var notes []string
	p := m.Proc
	row.MemSource = p.Note
	if p.Note == "" && p.Ticks > 0 {
		peak, src := p.Peak()
		row.MemPeakGB = float64(peak) / 1e9
		row.MemBaselineGB = float64(p.Baseline()) / 1e9
		procs := "processes"
		if p.MaxProcesses == 1 {
			procs = "process"
		}
		row.MemSource = fmt.Sprintf("%s, %d %s", src, p.MaxProcesses, procs)
		if p.HasPSS {
			row.MemPSSPeakGB = float64(p.PeakPSS) / 1e9
			if p.Origin != "" {
				row.MemSource += "; PSS beside it (the exporter's proportionalResident)"
			} else {
				row.MemSource += "; PSS beside it (smaps_rollup)"
			}
		}
		if p.Failures > 0 {
			notes = append(notes, fmt.Sprintf("process memory: %d of %d readings failed (last: %s)", p.Failures, p.Failures+p.Ticks, p.LastError))
		}
		if p.BaselineLate {
			notes = append(notes, "process memory: the window's first reading failed, so mem_baseline_gb is the first that answered, under load")
		}
	}
	for _, sm := range m.Server.Models {
		if backends.SameModel(sm.Name, cell.ModelID) && sm.SizeBytes > 0 {
			row.ServerSizeGB = float64(sm.SizeBytes) / 1e9
		}
	}
	// Held against the estimate: the server's own memory, never a Slurm job's (the
	// client's is in it too).
	if gb, src, ok := row.MemoryGB(); ok && row.VRAMEstimateGB > 0 && (src != row.MemJobSource || math.IsNaN(row.MemJobPeakGB)) {
		row.MemEstimateDiffPct = 100 * (gb - row.VRAMEstimateGB) / row.VRAMEstimateGB
		if math.IsNaN(row.VRAMPeakGB) {
			notes = append(notes, fmt.Sprintf("memory %.3f GB (%s) is %+.0f%% against the seed's estimate %.3f GB (weights + KV cache + %.2f GB CPU overhead)",
				gb, src, row.MemEstimateDiffPct, row.VRAMEstimateGB, cpuOverheadBytes/1e9))
		}
	}
	return notes
}

// vLLM's CPU worker logs the KV cache it set aside ("Explicitly set (1.0/20.96) GiB for
// KV cache on node 0") and the engine its size in tokens ("CPU KV cache size: 1,048,576
// tokens").
var (
	vllmKVGiB    = regexp.MustCompile(`set \(([0-9.]+)/[0-9.]+\) GiB for KV cache`)
	vllmKVTokens = regexp.MustCompile(`KV cache size: ([0-9,]+) tokens`)
)

// kvCacheFromLog reads the KV cache a vLLM server reserved from its log: GB, and a note
// with its size in tokens; ok is false when the log says neither.
func kvCacheFromLog(path string) (gb float64, note string, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", false
	}
	gibs := vllmKVGiB.FindAllSubmatch(b, -1)
	if len(gibs) == 0 {
		return 0, "", false
	}
	gib, err := strconv.ParseFloat(string(gibs[len(gibs)-1][1]), 64) // the newest start
	if err != nil {
		return 0, "", false
	}
	note = fmt.Sprintf("vLLM reserved %.2f GiB of KV cache (its start-up log)", gib)
	if toks := vllmKVTokens.FindAllSubmatch(b, -1); len(toks) > 0 {
		note += ", " + string(toks[len(toks)-1][1]) + " tokens"
	}
	return gib * (1 << 30) / 1e9, note, true
}

// setServed puts into the row what the cell's server really served and ran on: the
// quantization it serves, its CPUs and GPUs, the KV cache a vLLM server reserved, and
// the build its engine reports, with a note when that lacks extensions the CPU has.
func (a *applier) setServed(cell *plan.Cell, proc *servers.Process, m levelMeasurement, row *ledger.Row) {
	a.setServedQuant(cell, row)
	setServedHardware(row, proc, m.GPU)
	if proc == nil {
		return
	}
	if gb, note, ok := kvCacheFromLog(proc.LogPath()); ok {
		row.KVCacheGB = gb
		row.Notes = strings.TrimPrefix(row.Notes+"; "+note, "; ")
	}
	if note := oversubscribed(cell, proc.LogPath(), row.CPUsAllowed); note != "" {
		row.Notes = strings.TrimPrefix(row.Notes+"; "+note, "; ")
	}
	if b, ok := proc.Build(); ok {
		row.EngineBuild = b.String()
		a.rec.recordBuild(cell.Backend.Addr, row.EngineBuild)
		if note := b.Note(cpuFlags()); note != "" {
			row.Notes = strings.TrimPrefix(row.Notes+"; "+note, "; ")
		}
	}
}

// cpuFlags are the flags of the CPU the servers planrun starts run on: this machine's
// (a Slurm or Kubernetes cell's planrun runs on its node). A variable for the tests.
var cpuFlags = servers.CPUFlags
