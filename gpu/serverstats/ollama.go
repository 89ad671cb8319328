package serverstats

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/planrun/planrun/gpu"
)

func ollamaClient(hc *http.Client, baseURL string) (*api.Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ollama url %q: want http://host:port", baseURL)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return api.NewClient(u, hc), nil
}

// OllamaPS reads Ollama's /api/ps: the loaded models with size and size_vram.
func OllamaPS(ctx context.Context, hc *http.Client, baseURL string) ([]ModelMemory, error) {
	c, err := ollamaClient(hc, baseURL)
	if err != nil {
		return nil, err
	}
	ps, err := c.ListRunning(ctx)
	if err != nil {
		return nil, fmt.Errorf("ollama /api/ps: %w", err)
	}
	models := make([]ModelMemory, 0, len(ps.Models))
	for _, m := range ps.Models {
		models = append(models, ModelMemory{Name: m.Name, SizeBytes: m.Size, SizeVRAMBytes: m.SizeVRAM, ContextLength: m.ContextLength})
	}
	return models, nil
}

// StartOllama polls /api/ps every interval until Stop; each model keeps its peak size and
// size_vram over the window.
func StartOllama(ctx context.Context, hc *http.Client, baseURL string, interval time.Duration) *Poller {
	return newOllamaPoller(ctx, hc, baseURL, interval).start()
}

func newOllamaPoller(ctx context.Context, hc *http.Client, baseURL string, interval time.Duration) *Poller {
	return newPoller(ctx, "ollama /api/ps", baseURL, interval, func(ctx context.Context, r *Report) error {
		models, err := OllamaPS(ctx, hc, baseURL)
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

// OllamaShape reads a model's shape and quantization from Ollama's /api/show, for the
// VRAM estimate.
func OllamaShape(ctx context.Context, hc *http.Client, baseURL, model string) (shape gpu.ModelShape, quant string, err error) {
	c, err := ollamaClient(hc, baseURL)
	if err != nil {
		return shape, "", err
	}
	show, err := c.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		return shape, "", fmt.Errorf("ollama /api/show %s: %w", model, err)
	}
	shape, err = gpu.ShapeFromModelInfo(show.ModelInfo)
	if err != nil {
		return shape, "", fmt.Errorf("ollama /api/show %s: %w", model, err)
	}
	return shape, show.Details.QuantizationLevel, nil
}
