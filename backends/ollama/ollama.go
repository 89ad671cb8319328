// Package ollama measures Ollama's native API: /api/chat and /api/generate, streaming
// NDJSON, with the done line's own timings (load, prompt eval, eval) and eval_count as
// the output token count.
//
// It reads the stream itself instead of using github.com/ollama/ollama/api's Client.
// That client decodes each line with encoding/json twice (once for an error field,
// once for the response) before calling back, allocates a 512 KiB scanner per request,
// turns a body that ends without a done line into success, and drops Retry-After and
// the status of failed requests, all of which the timing core needs. Its types still
// define the wire format: the fuzz test holds this decoder to api.ChatResponse and
// api.GenerateResponse, and the probe decodes api.ListResponse.
package ollama

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/planrun/planrun/backends"
)

// Backend is one Ollama server. Safe for concurrent use.
type Backend struct {
	backends.Shell
	cfg      backends.Config
	base     string
	endpoint string
	chat     bool
	embed    bool // /api/embed (api = "embeddings")

	mu      sync.Mutex
	models  []string
	digests map[string]string // model name → /api/tags digest
}

// reserved are body fields the adapter owns; ExtraFields may not set them ("options"
// is merged key by key instead).
var reserved = map[string]bool{"model": true, "messages": true, "prompt": true, "stream": true}

// DefaultURL is where a local Ollama server listens unless told otherwise.
const DefaultURL = "http://127.0.0.1:11434"

// Kind declares the ollama backend kind: native /api/chat or /api/generate, keep_alive,
// and the model endpoints that ensure_model uses.
var Kind = backends.Kind{
	Name: "ollama", DefaultURL: DefaultURL, APIs: []string{"chat", "generate", backends.EmbeddingsAPI},
	Reasoning: []string{"reasoning_effort", "think"},
	KeepAlive: true, EnsureModel: true, ExtraFields: true, ServerLabel: "ollama",
	Endpoints:      []string{"/api/chat", "/api/generate", "/api/embed"},
	ReservedFields: slices.Sorted(maps.Keys(reserved)),
	New:            backends.Constructor(New),
}

// New builds a backend for the Ollama server at cfg.URL (e.g. http://127.0.0.1:11434).
func New(cfg backends.Config, opts ...backends.Option) (*Backend, error) {
	if cfg.Kind == "" {
		cfg.Kind = "ollama"
	}
	if err := backends.CheckURL(cfg, "http://127.0.0.1:11434"); err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, base: strings.TrimSuffix(cfg.URL, "/")}
	switch cfg.API {
	case "", "chat":
		b.chat = true
		b.endpoint = b.base + "/api/chat"
	case "generate":
		b.endpoint = b.base + "/api/generate"
	case backends.EmbeddingsAPI:
		b.embed = true
		b.endpoint = b.base + "/api/embed"
	default:
		return nil, fmt.Errorf("backend %s: api %q is not one of \"chat\", \"generate\", \"embeddings\"", cfg.Name, cfg.API)
	}
	var bad []string
	for k, v := range cfg.ExtraFields {
		if _, isMap := v.(map[string]any); reserved[k] || k == "options" && !isMap {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("backend %s: extra fields %s not allowed: planrun sets model, messages, prompt and stream itself, and options must be an object",
			cfg.Name, strings.Join(bad, ", "))
	}
	b.Shell = backends.NewShell(cfg, b, opts...)
	return b, nil
}

// CallsDue implements backends.DueCaller: the timing core calls Request.Due.
func (b *Backend) CallsDue() {}

// Body is the JSON request body for req. Ollama has no way to force the output length
// (no ignore_eos), so ForceMaxTokens only caps it with num_predict.
func (b *Backend) Body(req backends.Request) ([]byte, error) {
	m := make(map[string]any, 8)
	options := map[string]any{}
	for k, v := range b.cfg.ExtraFields {
		if k == "options" {
			for ok, ov := range v.(map[string]any) {
				options[ok] = ov
			}
			continue
		}
		m[k] = v
	}
	m["model"] = req.Model
	switch {
	case b.embed:
		m["input"] = backends.EmbeddingInputs(req)
		if b.cfg.KeepAlive != "" {
			m["keep_alive"] = b.cfg.KeepAlive
		}
		return json.Marshal(m)
	case req.Raw:
		m["prompt"], m["raw"] = req.Prompt, true
	case b.chat:
		m["messages"] = chatMessages(req)
		if len(req.Tools) > 0 { // Ollama has no tool_choice: the model decides
			m["tools"] = backends.FunctionTools(req.Tools)
		}
	default:
		m["prompt"] = req.Prompt
	}
	if req.TopLogProbs > 0 {
		m["logprobs"], m["top_logprobs"] = true, req.TopLogProbs
	}
	m["stream"] = !req.NoStream // the done line of a whole answer carries the text too
	if req.MaxTokens > 0 {
		options["num_predict"] = req.MaxTokens
	}
	if req.Temperature != nil {
		options["temperature"] = *req.Temperature
	}
	if req.Seed != nil {
		options["seed"] = *req.Seed
	}
	if req.Greedy {
		options["temperature"], options["repeat_penalty"] = 0, 1
	}
	if len(options) > 0 {
		m["options"] = options
	}
	// think is a switch or, for models with levels (gpt-oss), the effort.
	switch {
	case req.Think != nil:
		m["think"] = *req.Think
	case req.ReasoningEffort != "":
		m["think"] = req.ReasoningEffort
	}
	if b.cfg.KeepAlive != "" {
		m["keep_alive"] = b.cfg.KeepAlive
	}
	return json.Marshal(m)
}

// extraV1 is the hint for a server without /api/version (404) at a url ending in /v1 or
// /api: Ollama's native API is at the server root (planrun adds /api/...), its /v1 is
// for an openai backend.
func extraV1(base string, e *backends.Error) string {
	if e.Class != backends.ErrNotFound {
		return ""
	}
	if root, cut := strings.CutSuffix(strings.TrimSuffix(base, "/"), "/v1"); cut {
		return " An ollama backend's url is the server root, without /v1 (that is for an openai backend): did you mean " + root + "?"
	}
	if root, cut := strings.CutSuffix(strings.TrimSuffix(base, "/"), "/api"); cut {
		return " An ollama backend's url is the server root, without /api (planrun adds /api/chat and the rest): did you mean " + root + "?"
	}
	return ""
}

// NewRequest implements backends.Adapter.
func (b *Backend) NewRequest(ctx context.Context, req backends.Request) (*http.Request, error) {
	body, err := b.Body(req)
	if err != nil {
		return nil, err
	}
	endpoint := b.endpoint
	if req.Raw && !b.embed {
		endpoint = b.base + "/api/generate" // only generate takes a prompt without a template
	}
	return b.Core().NewPost(ctx, endpoint, body, "application/x-ndjson", b.cfg.Headers)
}

// NewDecoder implements backends.Adapter: NDJSON, which reads a whole chat or generate
// answer too, or /api/embed's answer (never streamed).
func (b *Backend) NewDecoder(r *bufio.Reader) backends.Decoder {
	if b.embed {
		return &backends.EmbeddingsDecoder{R: r}
	}
	return newDecoder(r)
}

// Probe implements backends.Backend: /api/version, /api/tags (models and their
// digests, for the manifest), and one tiny request per present model (Ollama always
// reports eval_count; the request proves the model loads).
func (b *Backend) Probe(ctx context.Context, modelIDs []string) backends.ProbeResult {
	r := backends.ProbeResult{Backend: b.cfg.Name, URL: b.cfg.URL}
	var v struct {
		Version string `json:"version"`
	}
	if e := b.Core().GetJSON(ctx, b.base+"/api/version", &v); e != nil {
		r.Reachable = e.Class != backends.ErrRefused && e.Class != backends.ErrTimeout && e.Class != backends.ErrMissingKey
		r.Problems, r.ErrorClass = append(r.Problems, e.Message+extraV1(b.base, e)), e.Class
		return r
	}
	r.Reachable = true
	r.Version = v.Version
	models, e := b.Models(ctx)
	if e != nil {
		r.Problems, r.ErrorClass = append(r.Problems, e.Message), e.Class
		return r
	}
	r.Models = models
	for _, id := range modelIDs {
		if d := b.digest(id); d != "" {
			if r.ModelDigests == nil {
				r.ModelDigests = make(map[string]string, len(modelIDs))
			}
			r.ModelDigests[id] = d
		}
	}
	r.ModelsPresent, r.UsageReported, r.Problems, r.ErrorClass = backends.ProbeModels(ctx, b, models, modelIDs, b.cfg.URL)
	return r
}
