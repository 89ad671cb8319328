// Package openai measures OpenAI-compatible streaming servers: vLLM, SGLang, llama.cpp,
// TGI and Ollama's /v1, through /v1/chat/completions or /v1/completions with
// stream_options.include_usage so the server's own token count comes back. It builds the
// request and decodes the SSE stream into chunks; backends.Core sends and times it.
//
// The stream is decoded by a small SSE reader and an allocation-free JSON field scanner
// rather than encoding/json: a chunk then costs well under a microsecond, which is what
// lets one client follow thousands of concurrent streams on two cores.
package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/planrun/planrun/backends"
)

// Backend is one OpenAI-compatible server. Safe for concurrent use.
type Backend struct {
	backends.Shell
	cfg       backends.Config
	base      string // the URL up to /v1, no trailing slash
	endpoint  string
	chat      bool
	responses bool // the Responses API (api = "responses")
	embed     bool // /v1/embeddings (api = "embeddings")
	strict    bool

	mu     sync.Mutex
	models []string // the server's model ids, fetched once
	// contexts are the models' max_model_len (vLLM's), where the list gives one.
	contexts map[string]int
	// roots are the models' weights as the server loaded them (vLLM's root: a path or a
	// Hugging Face repository id), where the list gives one.
	roots map[string]string
}

// reserved are body fields the adapter owns; ExtraFields may not set them.
var reserved = map[string]bool{"model": true, "messages": true, "prompt": true, "stream": true, "stream_options": true}

// standardFields are the request fields of the OpenAI API itself (chat and completions):
// the only extra fields a strict gateway accepts.
var standardFields = map[string]bool{
	"frequency_penalty": true, "presence_penalty": true, "logit_bias": true, "logprobs": true,
	"top_logprobs": true, "max_completion_tokens": true, "n": true, "stop": true, "top_p": true,
	"user": true, "response_format": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"reasoning_effort": true, "echo": true, "best_of": true, "suffix": true, "service_tier": true,
	"metadata": true, "store": true, "modalities": true, "prediction": true, "verbosity": true,
}

// Kind declares the openai backend kind: any OpenAI-compatible server, at a url the plan
// must give; its memory figures are read the vLLM way (/metrics).
var Kind = backends.Kind{
	Name: "openai", URLRequired: true, APIs: []string{"chat", "completions", "responses", backends.EmbeddingsAPI},
	Reasoning: []string{"reasoning_effort"}, ExtraFields: true, EngineExtensions: true, ServerLabel: "vllm",
	Endpoints: []string{"/chat/completions", "/completions", "/responses", "/embeddings"}, BasePath: "/v1",
	ReservedFields: slices.Sorted(maps.Keys(reserved)),
	New:            backends.Constructor(New),
}

// New builds a backend for a server that may accept engine extensions (vLLM, SGLang).
func New(cfg backends.Config, opts ...backends.Option) (*Backend, error) {
	return newBackend(cfg, false, opts)
}

// NewStrict builds a backend for a gateway that rejects unknown fields: only standard
// OpenAI request fields are sent, and a config asking for others is refused here, before
// any request, rather than failing every request later.
func NewStrict(cfg backends.Config, opts ...backends.Option) (*Backend, error) {
	return newBackend(cfg, true, opts)
}

func newBackend(cfg backends.Config, strict bool, opts []backends.Option) (*Backend, error) {
	if cfg.Kind == "" {
		cfg.Kind = "openai"
	}
	if err := backends.CheckURL(cfg, "http://127.0.0.1:8000/v1"); err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(cfg.URL, "/")
	b := &Backend{cfg: cfg, strict: strict, base: base}
	switch cfg.API {
	case "", "chat":
		b.chat = true
		b.endpoint = base + "/chat/completions"
	case "completions":
		b.endpoint = base + "/completions"
	case "responses":
		b.responses = true
		b.endpoint = base + "/responses"
	case backends.EmbeddingsAPI:
		b.embed = true
		b.endpoint = base + "/embeddings"
	default:
		return nil, fmt.Errorf("backend %s: api %q is not one of \"chat\", \"completions\", \"responses\", \"embeddings\"", cfg.Name, cfg.API)
	}
	var bad []string
	for k := range cfg.ExtraFields {
		if reserved[k] || strict && !standardFields[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		why := "planrun sets them itself"
		if strict {
			why = "this gateway accepts only standard OpenAI fields (and planrun sets model, messages, prompt, stream itself)"
		}
		return nil, fmt.Errorf("backend %s: extra fields %s not allowed: %s", cfg.Name, strings.Join(bad, ", "), why)
	}
	if strict && cfg.EngineExtensions {
		return nil, fmt.Errorf("backend %s: engine extensions (ignore_eos, min_tokens) are not allowed: this gateway rejects unknown fields", cfg.Name)
	}
	b.Shell = backends.NewShell(cfg, b, opts...)
	return b, nil
}

// CallsDue implements backends.DueCaller: the timing core calls Request.Due.
func (b *Backend) CallsDue() {}

// Body is the JSON request body for req.
func (b *Backend) Body(req backends.Request) ([]byte, error) {
	m := make(map[string]any, 8+len(b.cfg.ExtraFields))
	for k, v := range b.cfg.ExtraFields {
		m[k] = v
	}
	m["model"] = req.Model
	if b.embed {
		m["input"] = backends.EmbeddingInputs(req)
		return json.Marshal(m)
	}
	if b.responses {
		b.responsesBody(m, req)
		return json.Marshal(m)
	}
	completions := b.completions(req)
	switch {
	case req.PromptIDs != nil && completions:
		m["prompt"] = req.PromptIDs
	case completions:
		m["prompt"] = req.Prompt
	default:
		m["messages"] = chatMessages(req)
		toolFields(m, req)
	}
	b.logProbFields(m, req, completions)
	m["stream"] = !req.NoStream
	if !req.NoStream {
		m["stream_options"] = map[string]bool{"include_usage": true}
	}
	if req.MaxTokens > 0 {
		m["max_tokens"] = req.MaxTokens
		if req.ForceMaxTokens && b.cfg.EngineExtensions {
			m["ignore_eos"] = true
			m["min_tokens"] = req.MaxTokens
		}
	}
	if req.Temperature != nil {
		m["temperature"] = *req.Temperature
	}
	if req.Seed != nil {
		m["seed"] = *req.Seed
	}
	if req.Greedy {
		m["temperature"] = 0
		if b.cfg.EngineExtensions {
			m["repetition_penalty"] = 1 // vLLM's default, said so a server's own default cannot differ
		}
	}
	if req.ReasoningEffort != "" {
		m["reasoning_effort"] = req.ReasoningEffort
	}
	return json.Marshal(m)
}

// NewRequest implements backends.Adapter.
func (b *Backend) NewRequest(ctx context.Context, req backends.Request) (*http.Request, error) {
	body, err := b.Body(req)
	if err != nil {
		return nil, err
	}
	endpoint := b.endpoint
	if b.chat && b.completions(req) {
		endpoint = b.base + "/completions"
	}
	return b.Core().NewPost(ctx, endpoint, body, "text/event-stream", b.cfg.Headers)
}

// completions reports whether req goes to /v1/completions: the backend's api, or a raw
// request (a prompt without a chat template, or token ids), whatever the api.
func (b *Backend) completions(req backends.Request) bool {
	return !b.chat || req.Raw || req.PromptIDs != nil
}

// logProbFields asks for the log-probabilities req wants: chat's logprobs and
// top_logprobs, the completions API's logprobs count, and vLLM's prompt_logprobs and
// return_tokens_as_token_ids where engine extensions are allowed.
func (b *Backend) logProbFields(m map[string]any, req backends.Request, completions bool) {
	switch {
	case req.TopLogProbs > 0 && completions:
		m["logprobs"] = req.TopLogProbs
	case req.TopLogProbs > 0:
		m["logprobs"], m["top_logprobs"] = true, req.TopLogProbs
	}
	if !b.cfg.EngineExtensions {
		return
	}
	if req.PromptLogProbs > 0 && completions {
		m["prompt_logprobs"] = req.PromptLogProbs
	}
	if req.TokenIDs {
		m["return_tokens_as_token_ids"] = true
	}
}

// NewDecoder implements backends.Adapter.
func (b *Backend) NewDecoder(r *bufio.Reader) backends.Decoder {
	if b.embed {
		return &backends.EmbeddingsDecoder{R: r} // never streamed
	}
	d := newDecoder(r)
	if b.responses {
		d.parse = parseEvent
	}
	return d
}

// Explain implements backends.Adapter: an unknown model gets the server's model list,
// a wrong path gets a hint about /v1.
func (b *Backend) Explain(ctx context.Context, e *backends.Error, req backends.Request) {
	models, absent, ok := backends.ModelAbsent(ctx, e, req.Model, b.Models)
	switch {
	case !ok:
	case absent:
		e.Message += " Model " + quote(req.Model) + " is not served here; the server has: " + backends.ModelList(models) + "." +
			backends.NearestModel(req.Model, models)
	case e.Class == backends.ErrNotFound:
		e.Message += " The model " + quote(req.Model) + " exists, so the path is wrong: the url must end in /v1 (e.g. http://127.0.0.1:8000/v1)."
	}
}

// Models returns the server's model ids (GET /models), fetched once and cached.
func (b *Backend) Models(ctx context.Context) ([]string, *backends.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.models != nil {
		return b.models, nil
	}
	var v struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
			Root        string `json:"root"`
		} `json:"data"`
	}
	if e := b.Core().GetJSON(ctx, strings.TrimSuffix(b.cfg.URL, "/")+"/models", &v); e != nil {
		return nil, e
	}
	ids := make([]string, 0, len(v.Data))
	b.contexts, b.roots = map[string]int{}, map[string]string{}
	for _, m := range v.Data {
		ids = append(ids, m.ID)
		if m.MaxModelLen > 0 {
			b.contexts[m.ID] = m.MaxModelLen
		}
		if m.Root != "" {
			b.roots[m.ID] = m.Root
		}
	}
	b.models = ids
	return ids, nil
}

// WarmConnections implements backends.ConnectionWarmer with GETs of /models, which
// every OpenAI-compatible server answers cheaply.
func (b *Backend) WarmConnections(ctx context.Context, n int) int {
	return b.Core().Warm(ctx, strings.TrimSuffix(b.cfg.URL, "/")+"/models", n)
}

// ContextLength implements backends.ContextLimiter: vLLM's max_model_len from the
// model list.
func (b *Backend) ContextLength(ctx context.Context, model string) (int, bool) {
	if _, e := b.Models(ctx); e != nil {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.contexts[model]
	return n, ok
}

// MetricsURL implements backends.MetricsSource: where vLLM (and SGLang) serve Prometheus
// /metrics. Empty for a strict gateway, which exposes none.
func (b *Backend) MetricsURL() string {
	if b.strict {
		return ""
	}
	return MetricsURL(b.cfg.URL)
}

// MetricsURL is where vLLM serves /metrics for an OpenAI base URL: at the root, not
// under /v1.
func MetricsURL(baseURL string) string {
	u := strings.TrimSuffix(baseURL, "/")
	u = strings.TrimSuffix(u, "/v1")
	return u + "/metrics"
}

func quote(s string) string { return strconv.Quote(s) }

// Tokenize implements backends.Tokenizer with vLLM's /tokenize (at the server root, not
// under /v1), special tokens added as a completions prompt gets them. A server without
// it (Ollama's /v1, a gateway) answers 404, which the caller takes as "no ids here".
func (b *Backend) Tokenize(ctx context.Context, model, text string) ([]int, error) {
	if b.strict {
		return nil, &backends.Error{Class: backends.ErrNotFound, Message: "a gateway has no /tokenize"}
	}
	var v struct {
		Tokens []int `json:"tokens"`
	}
	url := strings.TrimSuffix(b.base, "/v1") + "/tokenize"
	if e := b.Core().PostJSON(ctx, url, map[string]any{"model": model, "prompt": text}, &v); e != nil {
		return nil, e
	}
	return v.Tokens, nil
}
