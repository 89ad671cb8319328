// Package anthropic measures servers of the Anthropic Messages API (POST /v1/messages):
// Anthropic's own, Ollama's /v1/messages and vLLM's anthropic entrypoint. It builds the
// request and decodes the stream's typed events (message_start, content_block_start,
// content_block_delta with text_delta, thinking_delta or input_json_delta,
// content_block_stop, message_delta with the usage, message_stop; ping skipped) into
// chunks; backends.Core sends and times it, so TTFT, TTFO and ITL mean here what they
// mean for every other protocol.
package anthropic

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

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/backends/openai"
)

// Version is the anthropic-version header every request carries: the API version whose
// shapes this adapter reads (Anthropic's API requires the header; other servers ignore it).
const Version = "2023-06-01"

// DefaultMaxTokens is max_tokens when the workload sets none: the Messages API requires
// one, and this leaves the answer's length to the model.
const DefaultMaxTokens = 4096

// minThinkingBudget is the least thinking budget Anthropic's API accepts.
const minThinkingBudget = 1024

// reserved are body fields the adapter owns; extra_fields may not set them.
var reserved = map[string]bool{"model": true, "messages": true, "max_tokens": true, "stream": true,
	"tools": true, "tool_choice": true, "thinking": true}

// Kind declares the anthropic backend kind: a Messages API server at a url the plan must
// give, ending in /v1 as the other kinds' do; the key goes in x-api-key unless the plan
// says bearer (vLLM's --api-key checks Authorization: Bearer).
var Kind = backends.Kind{
	Name: "anthropic", URLRequired: true, APIs: []string{"messages"}, Reasoning: []string{"think"},
	ExtraFields: true, ServerLabel: "vllm", Endpoints: []string{"/messages"}, BasePath: "/v1",
	KeyHeaders:     []string{backends.KeyXAPIKey, backends.KeyBearer},
	ReservedFields: slices.Sorted(maps.Keys(reserved)),
	New:            backends.Constructor(New),
}

// Backend is one Messages API server. Safe for concurrent use.
type Backend struct {
	backends.Shell
	cfg      backends.Config
	endpoint string
	// side asks the server's OpenAI-compatible side what the Messages API has no
	// endpoint for on every server (the model list, the version): Anthropic's API,
	// Ollama and vLLM all serve GET /v1/models.
	side *openai.Backend
}

// New builds the backend.
func New(cfg backends.Config, opts ...backends.Option) (*Backend, error) {
	if cfg.Kind == "" {
		cfg.Kind = "anthropic"
	}
	if cfg.KeyHeader == "" {
		cfg.KeyHeader = backends.KeyXAPIKey
	}
	if err := backends.CheckURL(cfg, "http://127.0.0.1:11434/v1"); err != nil {
		return nil, err
	}
	if cfg.API != "" && cfg.API != "messages" {
		return nil, fmt.Errorf("backend %s: api %q is not \"messages\"", cfg.Name, cfg.API)
	}
	var bad []string
	for k := range cfg.ExtraFields {
		if reserved[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("backend %s: extra fields %s not allowed: planrun sets them itself", cfg.Name, strings.Join(bad, ", "))
	}
	b := &Backend{cfg: cfg, endpoint: strings.TrimSuffix(cfg.URL, "/") + "/messages"}
	sideCfg := cfg
	sideCfg.API, sideCfg.ExtraFields, sideCfg.EngineExtensions = "chat", nil, false
	side, err := openai.New(sideCfg, opts...)
	if err != nil {
		return nil, err
	}
	b.side = side
	b.Shell = backends.NewShell(cfg, b, opts...)
	return b, nil
}

// CallsDue implements backends.DueCaller: the timing core calls Request.Due.
func (b *Backend) CallsDue() {}

// message is one Messages API message: content as a string, or as blocks where it holds
// tool calls or tools' results (messagesOf).
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// tool is a Messages API tool.
type tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

// Body is the JSON request body for req.
func (b *Backend) Body(req backends.Request) ([]byte, error) {
	m := make(map[string]any, 8+len(b.cfg.ExtraFields))
	maps.Copy(m, b.cfg.ExtraFields)
	m["model"] = req.Model
	msgs, system := messagesOf(req.Messages())
	m["messages"] = msgs
	if system != "" {
		m["system"] = system
	}
	m["stream"] = !req.NoStream
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	m["max_tokens"] = maxTokens
	if req.Temperature != nil {
		m["temperature"] = *req.Temperature
	}
	if req.Think != nil {
		if *req.Think {
			// The budget must be below max_tokens on Anthropic's API; servers that map
			// thinking onto a switch (Ollama) ignore it.
			m["thinking"] = map[string]any{"type": "enabled", "budget_tokens": max(minThinkingBudget, maxTokens-1)}
		} else {
			m["thinking"] = map[string]any{"type": "disabled"}
		}
	}
	if len(req.Tools) > 0 {
		ts := make([]tool, len(req.Tools))
		for i, t := range req.Tools {
			ts[i] = tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters}
			if ts[i].InputSchema == nil {
				ts[i].InputSchema = map[string]any{"type": "object"}
			}
		}
		m["tools"] = ts
	}
	switch req.ToolChoice {
	case "":
	case backends.ToolChoiceAuto:
		m["tool_choice"] = map[string]string{"type": "auto"}
	case backends.ToolChoiceRequired:
		m["tool_choice"] = map[string]string{"type": "any"}
	case backends.ToolChoiceNone:
		m["tool_choice"] = map[string]string{"type": "none"}
	default:
		m["tool_choice"] = map[string]string{"type": "tool", "name": req.ToolChoice}
	}
	return json.Marshal(m)
}

// NewRequest implements backends.Adapter.
func (b *Backend) NewRequest(ctx context.Context, req backends.Request) (*http.Request, error) {
	body, err := b.Body(req)
	if err != nil {
		return nil, err
	}
	hr, err := b.Core().NewPost(ctx, b.endpoint, body, "text/event-stream", b.cfg.Headers)
	if err != nil {
		return nil, err
	}
	if hr.Header.Get("Anthropic-Version") == "" {
		hr.Header.Set("Anthropic-Version", Version)
	}
	return hr, nil
}

// NewDecoder implements backends.Adapter.
func (b *Backend) NewDecoder(r *bufio.Reader) backends.Decoder {
	st := &stream{}
	return openai.NewEventDecoder(r, st.parse)
}

// NewWholeDecoder implements backends.WholeDecoder: a non-streamed answer is one message
// object.
func (b *Backend) NewWholeDecoder(r *bufio.Reader) backends.Decoder {
	return &wholeDecoder{r: r}
}

// Explain implements backends.Adapter: an unknown model gets the server's model list.
func (b *Backend) Explain(ctx context.Context, e *backends.Error, req backends.Request) {
	models, absent, ok := backends.ModelAbsent(ctx, e, req.Model, b.side.Models)
	if ok && absent {
		e.Message += " Model " + fmt.Sprintf("%q", req.Model) + " is not served here; the server has: " + backends.ModelList(models) + "." +
			backends.NearestModel(req.Model, models)
	}
}

// Probe implements backends.Backend: the server's OpenAI-compatible side gives the model
// list and version (no test request there), then one tiny Messages request per present
// model shows whether usage is reported.
func (b *Backend) Probe(ctx context.Context, modelIDs []string) backends.ProbeResult {
	r := b.side.Probe(ctx, nil)
	r.Backend, r.URL = b.cfg.Name, b.cfg.URL
	if !r.Reachable || r.ErrorClass != "" {
		return r
	}
	r.ModelsPresent, r.UsageReported, r.Problems, r.ErrorClass = backends.ProbeModels(ctx, b, r.Models, modelIDs, b.cfg.URL)
	return r
}

// WarmConnections implements backends.ConnectionWarmer with GETs of /models.
func (b *Backend) WarmConnections(ctx context.Context, n int) int {
	return b.Core().Warm(ctx, strings.TrimSuffix(b.cfg.URL, "/")+"/models", n)
}

// ContextLength implements backends.ContextLimiter: vLLM's max_model_len from the model
// list.
func (b *Backend) ContextLength(ctx context.Context, model string) (int, bool) {
	return b.side.ContextLength(ctx, model)
}
