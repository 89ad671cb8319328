package serverstats

import (
	"context"
	"net/http"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/ollama"
	"github.com/planrun/planrun/backends/openai"
	"github.com/planrun/planrun/telemetry/gpu"
)

// The Ollama and vLLM helpers below are the tests' own: apply polls a server through its
// adapter (StartModels with a backends.ServerMemory) and the metrics URL the adapter
// gives, so these are no second way in the package.

// ollamaClient is the Ollama adapter for baseURL: the one Ollama client, so auth and
// error wording are the adapter's.
func ollamaClient(hc *http.Client, baseURL string) (*ollama.Backend, error) {
	var opts []backends.Option
	if hc != nil {
		opts = append(opts, backends.WithHTTPClient(hc))
	}
	return ollama.New(backends.Config{Name: "ollama", URL: baseURL}, opts...)
}

// ollamaShape is ModelShape over the Ollama adapter, as planrun estimate -ollama builds it.
func ollamaShape(ctx context.Context, hc *http.Client, baseURL, model string) (gpu.ModelShape, string, error) {
	c, err := ollamaClient(hc, baseURL)
	if err != nil {
		return gpu.ModelShape{}, "", err
	}
	return ModelShape(ctx, c, model)
}

// OllamaPS reads Ollama's /api/ps: the loaded models with size and size_vram.
func OllamaPS(ctx context.Context, hc *http.Client, baseURL string) ([]ModelMemory, error) {
	c, err := ollamaClient(hc, baseURL)
	if err != nil {
		return nil, err
	}
	return c.LoadedModels(ctx)
}

// StartOllama polls /api/ps every interval until Stop; each model keeps its peak size and
// size_vram over the window.
func StartOllama(ctx context.Context, hc *http.Client, baseURL string, interval time.Duration) *Poller {
	return newOllamaPoller(ctx, hc, baseURL, interval).start()
}

func newOllamaPoller(ctx context.Context, hc *http.Client, baseURL string, interval time.Duration) *Poller {
	c, err := ollamaClient(hc, baseURL)
	if err != nil {
		return newModelsPoller(ctx, failing{err}, baseURL, interval)
	}
	return newModelsPoller(ctx, c, baseURL, interval)
}

// failing is a server that cannot be asked: every poll reports why.
type failing struct{ err error }

func (f failing) LoadedModels(context.Context) ([]backends.LoadedModel, error) { return nil, f.err }

// VLLMMetricsURL is where vLLM serves /metrics for an OpenAI base URL: at the root, not
// under /v1.
func VLLMMetricsURL(baseURL string) string { return openai.MetricsURL(baseURL) }
