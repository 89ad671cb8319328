package apply

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/planrun/planrun/apply/fidelity"
	"github.com/planrun/planrun/apply/pins"
	"github.com/planrun/planrun/apply/served"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/servers"
	"github.com/planrun/planrun/stats"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/procmem"
	"github.com/planrun/planrun/telemetry/serverstats"
)

// The row's figures from each source of the level's measurement: the monitors and the
// features fill levelMeasurement (monitor.go), and these, called by buildRow (row.go),
// put what they measured into the row's columns, with the notes that go with them. With
// row.go, the one place a level's row is written.

// agentRows sets a row's agent figures: how many agents sent it and the error bar of
// its figures that compare their clocks (send lag, arrival order, delivered rate, the
// window), with a note that says so.
func agentRows(row *ledger.Row, m levelMeasurement) []string {
	if m.AgentCount <= 1 {
		return nil
	}
	row.Agents = m.AgentCount
	row.ClockBoundMs = float64(m.ClockBound) / float64(time.Millisecond)
	return []string{fmt.Sprintf("%d load agents: send lag, arrival order, delivered rate and the window compare their clocks, each ± %s ms (the largest clock bound, drift included)",
		m.AgentCount, fidelity.Millis(m.ClockBound.Seconds()))}
}

// agentFaultRow is the row of a level a load agent failed: no figures, for the load the
// other agents delivered is not the load asked, and a failed row without requests, so
// -resume runs the whole level again. Their requests are in requests.jsonl.
func agentFaultRow(cell *plan.Cell, level plan.LoadLevel, rc rowContext, m levelMeasurement) ledger.Row {
	sent := m.Stats.Pooled.Requests
	row := unmeasuredRow(cell, level, rc, m.AgentFault, m.Started)
	row.Ended = m.Ended
	row.Agents = m.AgentCount
	row.Notes += fmt.Sprintf("; the level's %d load agents were stopped, and the %d measured requests they had finished are in requests.jsonl but in no figure: "+
		"a load short of an agent is not the load asked (-resume runs the level again)", m.AgentCount, sent)
	return row
}

// setServedHardware fills the row's environment from what the server really ran on:
// the CPU model and the cores the kernel allowed its processes (the union of their
// Cpus_allowed_list: vLLM pinned keeps its engine core and its API server on different
// cores), and the GPUs the level's sampler read, named and indexed as NVML has them.
func setServedHardware(row *ledger.Row, proc *servers.Process, g gpu.Summary) {
	row.CPU = procmem.CPUModel()
	pids := []int{os.Getpid()} // without a managed server, planrun's own: the machine's
	if proc != nil {
		pids = proc.GroupPIDs()
	}
	if list, err := procmem.GroupCPUsAllowed(pids); err == nil {
		row.CPUsAllowed = list
	}
	if row.GPU == "" && len(g.Devices) > 0 {
		var names []string
		for _, d := range g.Devices {
			names = append(names, fmt.Sprintf("GPU %d %s", d.Index, d.Name))
		}
		row.GPU = strings.Join(names, ", ")
	}
}

// setJobMemory fills the row's job memory columns, saying what the figure covers and
// whether its peak fell in this level.
func setJobMemory(row *ledger.Row, j jobMemory) {
	if j.Source == "" {
		return
	}
	if j.AfterErr != "" {
		row.MemJobSource = "none: " + j.AfterErr
		return
	}
	row.MemJobPeakGB = float64(j.After.Peak) / 1e9
	var when string
	switch {
	case j.BeforeErr != "":
		row.MemJobBaselineGB = math.NaN()
		when = "not read as the level began (" + j.BeforeErr + "), so it may have been reached before it"
	case j.After.Peak > j.Before.Peak:
		row.MemJobBaselineGB = float64(j.Before.Resident) / 1e9
		when = "reached during this level"
	default:
		row.MemJobBaselineGB = float64(j.Before.Resident) / 1e9
		when = "reached before this level began: this level's own peak is at most this"
	}
	row.MemJobSource = fmt.Sprintf("%s, %s", j.Source, when)
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
		row.MemSource = procMemSource(p, src)
		if p.HasPSS {
			row.MemPSSPeakGB = float64(p.PeakPSS) / 1e9
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

// procMemSource is mem_source for a process tree's figures: where its peak was read
// (src), over how many processes, and where the PSS beside it came from.
func procMemSource(p procmem.Summary, src string) string {
	procs := "processes"
	if p.MaxProcesses == 1 {
		procs = "process"
	}
	out := fmt.Sprintf("%s, %d %s", src, p.MaxProcesses, procs)
	switch {
	case !p.HasPSS:
	case p.Origin != "":
		out += "; PSS beside it (the exporter's proportionalResident)"
	default:
		out += "; PSS beside it (smaps_rollup)"
	}
	return out
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
	if gb, note, ok := served.KVCacheFromLog(proc.LogPath()); ok {
		row.KVCacheGB = gb
		row.Notes = strings.TrimPrefix(row.Notes+"; "+note, "; ")
	}
	if note := pins.Oversubscribed(cell, proc.LogPath(), row.CPUsAllowed); note != "" {
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

// setServedQuant puts what the server serves into the row: the quantization when the
// plan declared none (a declared one matched, or the cell would have failed), and
// where it was read.
func (a *applier) setServedQuant(cell *plan.Cell, row *ledger.Row) {
	sq, ok := a.served[backendKey(cell)+" "+cell.ModelID]
	if !ok {
		return
	}
	// An undeclared quantization is not filled into the row's quantization: compare
	// pairs rows by it, and two servers that state it differently (F16, bfloat16) or not
	// at all would no longer pair. The served value is in quantization_served, which the
	// tables show, and in the notes.
	row.QuantizationSource, row.QuantizationServed = sq.Source, sq.Level
	note := "quantization " + sq.Level + " from " + sq.Source
	if sq.Level == "" {
		note = "quantization " + served.NotStated
	}
	if row.Notes != "" {
		note += "; " + row.Notes
	}
	row.Notes = note
}

// serverFigures fills the row's server-side memory figures, GPU energy and the seed's
// VRAM estimate (est, nil when there is none), and returns notes that explain them.
func serverFigures(cell *plan.Cell, row *ledger.Row, g gpu.Summary, s serverstats.Report, est *gpu.VRAMEstimate) []string {
	var notes []string
	var ollamaSize, ollamaVRAM int64
	for _, m := range s.Models {
		if backends.SameModel(m.Name, cell.ModelID) {
			ollamaSize, ollamaVRAM = m.SizeBytes, m.SizeVRAMBytes
			row.ServerVRAMGB = float64(m.SizeVRAMBytes) / 1e9
			if m.SizeVRAMBytes == 0 {
				notes = append(notes, "Ollama runs this model on the CPU (size_vram 0)")
			} else if m.Offloaded() {
				notes = append(notes, fmt.Sprintf("Ollama keeps part of the model in CPU memory (size %.2f GB, size_vram %.2f GB): partial offload slows decoding",
					float64(m.SizeBytes)/1e9, float64(m.SizeVRAMBytes)/1e9))
			}
		}
	}
	if s.KVCacheUsage.N > 0 {
		row.KVCachePeakPct = s.KVCacheUsage.Peak * 100
	}
	notes = append(notes, vllmFigures(row, s)...)
	if j, ok := g.EnergyJ(); ok {
		row.EnergyJ = j // tokens per joule is each run's own (energy.go)
	}

	if est == nil {
		return notes
	}
	row.VRAMEstimateGB = est.TotalBytes / 1e9
	measured := uint64(0)
	if !math.IsNaN(row.VRAMProcessGB) {
		measured = uint64(row.VRAMProcessGB * 1e9)
	} else if !math.IsNaN(row.VRAMPeakGB) {
		measured = uint64(row.VRAMPeakGB * 1e9)
	}
	if measured > 0 {
		gc := gpu.GapContext{Server: serverKind(cell), OllamaSize: ollamaSize, OllamaSizeVRAM: ollamaVRAM,
			MemoryAPI: g.MemoryAPI, GPUMemoryUtilization: s.GPUMemoryUtilization}
		if len(g.Devices) > 0 {
			gc.CardTotalBytes = g.Devices[0].TotalBytes
		}
		if gap := gpu.ExplainGap(*est, measured, gc); gap != "" {
			notes = append(notes, gap)
		}
	}
	return notes
}

// setVRAMSources fills the VRAM columns NVML left empty from the other sources, and
// says in vram_source where each figure came from: NVML (set by setVRAM), the DCGM
// exporter, Ollama's /api/ps (server_vram_gb), or none for a remote host without
// telemetry.
func setVRAMSources(cell *plan.Cell, row *ledger.Row, m levelMeasurement) {
	if !math.IsNaN(row.VRAMPeakGB) {
		return // NVML measured it
	}
	switch {
	case len(m.DCGM.GPUs) > 0:
		row.VRAMPeakGB = float64(m.DCGM.PeakUsedBytes()) / 1e9
		row.VRAMSource = "dcgm exporter " + m.DCGM.URL + " (framebuffer used, peak)"
	case m.DCGM.URL != "":
		row.VRAMSource = fmt.Sprintf("none: dcgm exporter %s gave no reading (%s)", m.DCGM.URL, m.DCGM.LastError)
	case cell.Hardware != nil && !isLocalHost(cell.Hardware.Host):
		row.VRAMSource = "none: remote host " + cell.Hardware.Host + " without telemetry (add telemetry { dcgm = URL })"
	}
	if row.ServerVRAMGB > 0 {
		row.VRAMSource += "; server_vram_gb from ollama /api/ps"
	}
}

// vllmFigures puts what vLLM's /metrics counted over the window into the row: the
// prefix-cache hit rate, and the means of its own TTFT, TPOT and E2E histograms, with a
// note setting them beside planrun's means of the same requests.
func vllmFigures(row *ledger.Row, s serverstats.Report) []string {
	if s.PrefixCacheQueries > 0 {
		row.PrefixCacheHitPct = 100 * s.PrefixCacheHits / s.PrefixCacheQueries
	}
	l := s.ServerLatency
	if l.TTFT.Count == 0 {
		return nil
	}
	row.ServerTTFTMeanS, row.ServerTPOTMeanMs, row.ServerE2EMeanS = l.TTFT.Mean(), 1000*l.TPOT.Mean(), l.E2E.Mean()
	note := fmt.Sprintf("vLLM's own /metrics over %.0f requests: TTFT mean %.4f s (planrun %.4f), TPOT mean %.2f ms (planrun %.2f), E2E mean %.4f s (planrun %.4f)",
		l.TTFT.Count, row.ServerTTFTMeanS, row.TTFT.Mean, row.ServerTPOTMeanMs, 1000*row.TPOT.Mean, row.ServerE2EMeanS, row.E2E.Mean)
	if l.HTTP.Count > 0 {
		row.ServerHTTPMeanS = l.HTTP.Mean()
		// The engine's clocks leave out the HTTP front end; the HTTP layer's does not,
		// so its excess over the engine's E2E is time a client sees that vLLM's TTFT
		// and E2E histograms do not hold.
		note += fmt.Sprintf("; its HTTP layer %.4f s over %.0f requests, %.1f ms more than the engine's E2E (the front end: parsing, template, tokenization, streaming)",
			row.ServerHTTPMeanS, l.HTTP.Count, 1000*(row.ServerHTTPMeanS-row.ServerE2EMeanS))
	}
	return []string{note}
}

// holdAgainstReferences sets the row's reference verdict: for every matching reference
// block, each published range against the row's figure ("ttft_s within; output_tok_s
// below"). A figure that was not measured gets no verdict.
func holdAgainstReferences(p *plan.Plan, cell *plan.Cell, row *ledger.Row) {
	var names, verdicts []string
	for _, ref := range p.References {
		if !ref.Matches(cell) {
			continue
		}
		names = append(names, ref.Name)
		metrics := make([]string, 0, len(ref.Ranges))
		for m := range ref.Ranges {
			metrics = append(metrics, m)
		}
		sort.Strings(metrics)
		for _, m := range metrics {
			r := ref.Ranges[m]
			if v := stats.Reference(ledger.ReferenceFigure(row, m), r[0], r[1]); v != "" {
				verdicts = append(verdicts, fmt.Sprintf("%s %s", m, v))
			}
		}
	}
	row.Reference = strings.Join(names, ", ")
	row.Verdict = strings.Join(verdicts, "; ")
}

// setInside fills the row's window figures from the window's monitors and returns the
// notes that explain them.
func setInside(row *ledger.Row, m levelMeasurement) []string {
	var notes []string
	row.SteadySliceCVPct = sliceCV(m.Stats.PerRun)
	if note := setSaturation(row, m.Stats.PerRun); note != "" {
		notes = append(notes, note)
	}
	if note := setQueueTime(row, m.Server.ServerLatency.Queue); note != "" {
		notes = append(notes, note)
	}
	if m.Window.Stopped != "" {
		notes = append(notes, m.Window.Stopped)
	}
	if cpu := m.Window.CPU; cpu.Note == "" && cpu.N > 0 {
		row.ServerCPUPct, row.NeighbourCPUPct = cpu.ServerPct, cpu.OthersPct
		row.Contention = ledger.ContentionQuiet
		if cpu.Contended() {
			row.Contention = ledger.ContentionContended
			notes = append(notes, fmt.Sprintf("contended: other processes used %.0f%% of the server's cores (%s) during the window, "+
				"above the %.0f%% a row tolerates (the server %.0f%%, planrun's client %.0f%%)",
				cpu.OthersPct, cpu.Cores, procmem.ContendedAbove, cpu.ServerPct, cpu.ClientPct))
		}
	}
	return notes
}

// setSaturation marks the row over-saturated when some run's over-saturation test says
// so, with the median slopes, and returns the note that says what climbed.
func setSaturation(row *ledger.Row, runs []stats.Summary) string {
	var ttft, inFlight []float64
	var worst *stats.Saturation
	for _, l := range runs {
		s := l.Delivered.Saturation
		if s == nil {
			continue
		}
		ttft, inFlight = append(ttft, s.TTFTSlope), append(inFlight, s.InFlightSlope)
		if s.Over && (worst == nil || s.TTFTClimb > worst.TTFTClimb) {
			worst = s
		}
	}
	row.TTFTSlope, row.InFlightSlope = stats.Median(ttft), stats.Median(inFlight)
	if worst == nil {
		return ""
	}
	row.Saturation = ledger.SaturationOver
	return fmt.Sprintf("over-saturated: over the %.1f s the run sent, TTFT climbed %.3f s (slope %.3f s/s, 95%% interval %.3f to %.3f) and "+
		"requests in flight %+.1f (%.2f/s, %.2f to %.2f): the load is above what the server serves, its queue had not settled, "+
		"so its figures depend on how long the run was; it decides nothing in a capacity search",
		worst.Seconds, worst.TTFTClimb, worst.TTFTSlope, worst.TTFTSlopeLo, worst.TTFTSlopeHi,
		worst.InFlightClimb, worst.InFlightSlope, worst.InFlightSlopeLo, worst.InFlightSlopeHi)
}

// cacheNotes puts on the row what was done to the cache, and says so when a level with
// nothing done was measured on a cache warmed before it: the server's usage says its
// cache served more of the prompts than the level's own requests shared with each
// other, or an earlier level of the cell sent the same shared texts.
func cacheNotes(w *plan.Workload, row *ledger.Row, c cacheOutcome) []string {
	row.PrefixCache = c.Done
	var notes []string
	if c.Failed != "" {
		notes = append(notes, "prefix cache not reset: "+c.Failed)
	}
	if c.Done != "" {
		return notes
	}
	shared := row.SharedPrefixPct
	if math.IsNaN(shared) {
		shared = 0
	}
	// The level's own earlier runs (warm-up, repeats) send its shared texts again by
	// design; only where they cannot explain the excess does it say the cache was warm.
	ownRuns := sharesAcrossLevels(w) && (w.WarmupRuns > 0 || w.RepeatRuns > 1)
	var why string
	switch {
	case c.Earlier && sharesAcrossLevels(w):
		why = "an earlier level of this cell sent the same shared texts (prefix groups, a trace's hash blocks or one shared prompt), and nothing emptied the cache since"
	case w.Session == nil && !ownRuns && row.CacheHitPct > shared+1: // NaN (no cached count) is never above
		why = fmt.Sprintf("the server's usage says its cache served %.1f%% of the prompt tokens, more than the %.1f%% this level's requests shared with each other", row.CacheHitPct, shared)
	}
	if why == "" {
		return notes
	}
	row.PrefixCache = ledger.PrefixCacheWarm
	return append(notes, "prefix cache warm: "+why+"; TTFT here is a warm cache's, not a cold prefill's (prefix_cache = \"reset\" or \"bust\" measures it cold)")
}

// queueShown is the share of the mean TTFT the server's queue time must reach for the
// row's notes to name it.
const queueShown = 0.10

// setQueueTime puts the server's own queue time over the window (vLLM's
// request_queue_time_seconds: arrival to first scheduling) on the row, and returns a
// note when it is a large part of the TTFT: a closed loop past the server's slots, or
// an open loop above its capacity, waits there.
func setQueueTime(row *ledger.Row, q serverstats.Histogram) string {
	if q.Count == 0 {
		return ""
	}
	row.ServerQueueMeanS = q.Mean()
	ttft := row.TTFT.Mean
	if math.IsNaN(ttft) || ttft <= 0 || row.ServerQueueMeanS < queueShown*ttft {
		return ""
	}
	why := "the load is above what the server's slots serve at once"
	if row.RequestRate == 0 {
		why = fmt.Sprintf("concurrency %d is past the server's slots", row.Concurrency)
	}
	return fmt.Sprintf("queueing: requests waited a mean %.4f s in the server's queue before it scheduled them (its request_queue_time_seconds over %.0f requests), %.0f%% of the mean TTFT: %s",
		row.ServerQueueMeanS, q.Count, 100*row.ServerQueueMeanS/ttft, why)
}

// setEnergy fills the row's energy figures from the meter's trace, each run over its own
// window, and its energy cost at the hardware's price per kWh; it returns the notes that
// say where the figures came from, or why there are none.
func setEnergy(cell *plan.Cell, row *ledger.Row, m levelMeasurement) (notes []string) {
	if hw := cell.Hardware; hw != nil && hw.Price != nil {
		row.PricePerKWh = hw.Price.PerKWh
	}
	defer row.SetCost()
	tr := m.Window.Power
	if !math.IsNaN(row.PricePerKWh) {
		defer func() {
			if math.IsNaN(row.EnergyPerTokenJ) {
				notes = append(notes, "no cost per million tokens: the hardware's price_per_kwh needs an energy figure")
			}
		}()
	}
	switch {
	case tr.Source == "" && tr.Note == "":
		return notes // no meter, and no GPU that reports energy
	case tr.Note != "":
		row.EnergySource = "none: " + strings.TrimPrefix(tr.Note, "no energy: ")
		return append(notes, tr.Note)
	}
	var runs []ledger.RunEnergy
	uncovered := 0
	for i, w := range m.Window.Runs {
		if i >= len(m.Stats.PerRun) {
			break
		}
		e := ledger.RunEnergy{Joules: math.NaN(), Seconds: w.Seconds(), OutputTokens: m.Stats.PerRun[i].OutputTokens}
		if j, ok := tr.Energy(w.Start, w.End); ok {
			e.Joules = j
		} else {
			uncovered++
		}
		runs = append(runs, e)
	}
	row.SetEnergy(tr.Source+", "+tr.Method, runs, m.Stats.Across.Confidence)
	if !math.IsNaN(row.EnergyPerTokenJ) {
		notes = append(notes, fmt.Sprintf("energy from %s (%s, read every %v) over each run's window: %.4g J per output token, %.4g tokens/J, %.4g W",
			tr.Source, tr.Method, tr.Interval, row.EnergyPerTokenJ, row.TokensPerJoule, row.PowerMeanW))
	}
	if uncovered > 0 {
		notes = append(notes, fmt.Sprintf("the power meter's readings did not cover %d of %d runs' windows: they have no energy figure", uncovered, len(runs)))
	}
	if tr.Failed > 0 {
		notes = append(notes, fmt.Sprintf("%d of the power meter's readings failed (last: %s)", tr.Failed, tr.LastError))
	}
	return notes
}
