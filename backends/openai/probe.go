package openai

import (
	"context"
	"strings"

	"github.com/planrun/planrun/backends"
)

// Probe implements backends.Backend: the model list (GET /models) proves the server is
// reachable and the key works; the version comes from vLLM's /version or Ollama's
// /api/version when the server has one (a 404 is fine), and each model's weights
// (vLLM's root) when the list names them; one tiny request per present model shows
// whether usage is reported.
func (b *Backend) Probe(ctx context.Context, modelIDs []string) backends.ProbeResult {
	r := backends.ProbeResult{Backend: b.cfg.Name, URL: b.cfg.URL}
	models, e := b.Models(ctx)
	if e != nil {
		r.Reachable = e.Class != backends.ErrRefused && e.Class != backends.ErrTimeout && e.Class != backends.ErrMissingKey
		r.Problems, r.ErrorClass = append(r.Problems, e.Message+missingV1(b.cfg.URL, e)), e.Class
		return r
	}
	r.Reachable = true
	r.Models = models
	b.mu.Lock()
	for _, id := range modelIDs {
		if root := b.roots[id]; root != "" {
			if r.ModelRoots == nil {
				r.ModelRoots = map[string]string{}
			}
			r.ModelRoots[id] = root
		}
	}
	b.mu.Unlock()
	if !b.strict {
		r.Version = b.version(ctx)
	}
	r.ModelsPresent, r.UsageReported, r.Problems, r.ErrorClass = backends.ProbeModels(ctx, b, models, modelIDs, b.cfg.URL)
	return r
}

// version asks the server root for its version, tolerating servers that have none.
func (b *Backend) version(ctx context.Context) string {
	root := strings.TrimSuffix(strings.TrimSuffix(b.cfg.URL, "/"), "/v1")
	for _, path := range []string{"/version", "/api/version"} {
		var v struct {
			Version string `json:"version"`
		}
		if b.Core().GetJSON(ctx, root+path, &v) == nil && v.Version != "" {
			return v.Version
		}
	}
	return ""
}

// missingV1 is the hint for a model list the server does not have (404): the base URL
// of an OpenAI-compatible server ends in /v1, and a url without it is the usual cause.
func missingV1(url string, e *backends.Error) string {
	base := strings.TrimSuffix(url, "/")
	if e.Class != backends.ErrNotFound || strings.HasSuffix(base, "/v1") {
		return ""
	}
	return " The url of an OpenAI-compatible server ends in /v1: did you mean " + base + "/v1?"
}
