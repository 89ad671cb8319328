package apply

import (
	"context"
	"fmt"

	"github.com/planrun/planrun/apply/served"
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/plan"
)

// checkQuantization reads what the server really serves for the cell's model and fails
// the cell when the plan declares another quantization, naming both. It runs before the
// probe (whose test request is the first generation request a server sees), where
// /api/show, a managed server's log and its arguments can answer, and again after it
// (probed), when /v1/models' root names the checkpoint whose config.json may. What it
// read is kept for the rows (setServedQuant).
func (a *applier) checkQuantization(ctx context.Context, cell *plan.Cell, setup *cellSetup, probed bool) error {
	key := backendKey(cell) + " " + cell.ModelID
	sq, ok := a.served[key]
	if !ok {
		sq = a.readServedQuant(ctx, cell, setup, probed)
		if sq.Level == "" && !probed {
			return nil // the checkpoint's config may say, once the probe has named it
		}
		a.served[key] = sq
	}
	if sq.Level == "" || cell.Quantization == "" || plan.SameQuantization(cell.Quantization, sq.Level) {
		return nil
	}
	return fmt.Errorf("the plan declares quantization %q for model %q, but the server serves %s (%s): "+
		"no request of the cell was sent; fix the matrix's quantization or the model the server is given",
		cell.Quantization, cell.ModelID, sq.Level, sq.Source)
}

// readServedQuant asks, in order: a server that describes its models (Ollama's
// /api/show), the log of a vLLM server planrun started (its engine config line), that
// server's own --quantization and --dtype arguments, and the checkpoint config.json
// behind /v1/models' root.
func (a *applier) readServedQuant(ctx context.Context, cell *plan.Cell, setup *cellSetup, probed bool) served.Quant {
	if shower, ok := setup.backend.(backends.ModelShower); ok {
		sctx, cancel := context.WithTimeout(ctx, showTimeout)
		d, err := shower.ShowModel(sctx, cell.ModelID)
		cancel()
		if err == nil && d.QuantizationLevel != "" {
			src := "ollama /api/show details.quantization_level"
			if ft, ok := d.Info["general.file_type"]; ok {
				src += fmt.Sprintf(", GGUF general.file_type %v", ft)
			}
			return served.Quant{Level: d.QuantizationLevel, Source: src}
		}
	}
	if setup.proc != nil {
		if sq, ok := served.QuantFromLog(setup.proc.LogPath()); ok {
			return sq
		}
		if sq, ok := served.QuantFromArgs(setup.proc.Spec()); ok {
			return sq
		}
	}
	if root := a.rec.root(cell.Backend.Addr + " " + cell.ModelID); probed && root != "" && (cell.Server != nil || loopback(cell.Backend.URL)) {
		if sq, ok := served.QuantFromConfig(root); ok {
			return sq
		}
	}
	return served.Quant{Source: served.NotStated}
}
