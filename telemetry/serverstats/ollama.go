package serverstats

import (
	"context"
	"fmt"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/telemetry/gpu"
)

// StartModels polls src (a server at url that lists its loaded models, such as
// Ollama's /api/ps) every interval until Stop; each model keeps its peak size and
// size_vram over the window.
func StartModels(ctx context.Context, src backends.ServerMemory, url string, interval time.Duration) *Poller {
	return newModelsPoller(ctx, src, url, interval).start()
}

func newModelsPoller(ctx context.Context, src backends.ServerMemory, url string, interval time.Duration) *Poller {
	return newPoller(ctx, "ollama /api/ps", url, interval, func(ctx context.Context, r *Report) error {
		models, err := src.LoadedModels(ctx)
		if err != nil {
			return err
		}
		for _, m := range models {
			i := 0
			for i < len(r.Models) && r.Models[i].Name != m.Name {
				i++
			}
			if i == len(r.Models) {
				r.Models = append(r.Models, m)
				continue
			}
			seen := &r.Models[i]
			seen.SizeBytes = max(seen.SizeBytes, m.SizeBytes)
			seen.SizeVRAMBytes = max(seen.SizeVRAMBytes, m.SizeVRAMBytes)
			seen.ContextLength = max(seen.ContextLength, m.ContextLength)
		}
		return nil
	})
}

// ModelShape reads a model's shape and quantization from a server that describes its
// models (backends.ModelShower), for the VRAM estimate.
func ModelShape(ctx context.Context, src backends.ModelShower, model string) (shape gpu.ModelShape, quant string, err error) {
	d, err := src.ShowModel(ctx, model)
	if err != nil {
		return shape, "", err
	}
	shape, err = gpu.ShapeFromModelInfo(d.Info)
	if err != nil {
		return shape, "", fmt.Errorf("model %s: %w", model, err)
	}
	return shape, d.QuantizationLevel, nil
}
