package apply

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/plan"
	"github.com/planrun/planrun/telemetry/gpu"
	"github.com/planrun/planrun/telemetry/serverstats"
)

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
