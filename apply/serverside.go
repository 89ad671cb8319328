package apply

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/serverstats"
)

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
		row.EnergyJ = j
		if tpj, ok := g.TokensPerJoule(row.OutputTokens); ok {
			row.TokensPerJoule = tpj
		}
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

// serverKind is how the VRAM-gap explanation names the cell's server software, as its
// backend kind declares.
func serverKind(cell *plan.Cell) string {
	k, _ := backends.LookupKind(cell.Backend.Kind)
	return k.ServerLabel
}

// estimate is the seed's VRAM estimate for the cell, with the model's shape read from
// a server that describes its models (Ollama's /api/show; other servers do not describe
// their model's shape). Shapes are read once per backend and model.
func (a *applier) estimate(ctx context.Context, cell *plan.Cell, seqs, ctxLen int) (gpu.VRAMEstimate, bool) {
	shower, ok := a.known.built[backendKey(cell)].(backends.ModelShower)
	if !ok {
		return gpu.VRAMEstimate{}, false
	}
	key := cell.Backend.Addr + " " + cell.ModelID
	sh, ok := a.known.shapes[key]
	if !ok {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		shape, quant, err := serverstats.ModelShape(sctx, shower, cell.ModelID)
		cancel()
		sh = modelShape{shape: shape, quant: quant, err: err}
		a.known.shapes[key] = sh
	}
	if sh.err != nil {
		return gpu.VRAMEstimate{}, false
	}
	quant := sh.quant
	if quant == "" {
		quant = cell.Quantization
	}
	w := cell.Workload
	if ctxLen == 0 {
		ctxLen = w.PromptTokens + w.MaxTokens
	}
	est, err := gpu.Estimate(gpu.EstimateInput{Shape: sh.shape, Quant: quant, Context: ctxLen, Concurrency: seqs,
		Overhead: a.estimateOverhead(cell)})
	if err != nil {
		return gpu.VRAMEstimate{}, false
	}
	return est, true
}

// kvSequences is how many sequences' KV cache the estimate counts for the level: the
// level's concurrency, except on an Ollama server planrun starts with
// OLLAMA_NUM_PARALLEL set, which reserves the cache for that many sequences when it
// loads the model, whatever the load (its log: "512 cells, 8 layers, 4/4 seqs").
func kvSequences(cell *plan.Cell, level plan.LoadLevel) int {
	if cell.Backend.Kind != "ollama" || cell.Server == nil {
		return level.Concurrency
	}
	if n, err := strconv.Atoi(cell.Server.Env["OLLAMA_NUM_PARALLEL"]); err == nil && n > 0 {
		return n
	}
	return level.Concurrency
}

type modelShape struct {
	shape gpu.ModelShape
	quant string
	err   error
}

// checkHardware warns, once per hardware block, when what the plan declares is not what
// NVML sees on this machine: rows would otherwise carry the wrong card's name.
func (a *applier) checkHardware() {
	seen := map[string]bool{}
	for _, c := range a.o.Cells {
		hw := c.Hardware
		if hw == nil || seen[hw.Name] || !isLocalHost(hw.Host) || !a.tel.Available() {
			continue
		}
		seen[hw.Name] = true
		for _, w := range a.tel.CheckDeclared(hw.GPU, hw.VRAMGB) {
			a.note("hardware %q: %s", hw.Name, w)
			a.rec.warn(fmt.Sprintf("hardware %q: %s", hw.Name, w))
		}
	}
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
