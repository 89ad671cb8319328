package mockserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// contextLength is the context window the mock claims on every listing endpoint.
const contextLength = 4096

type ollamaKind int

const (
	ollamaChat ollamaKind = iota
	ollamaGenerate
)

// ollamaEncoder writes NDJSON as Ollama does: one object per line, content lines with
// "done":false, and a done line carrying the server timings.
type ollamaEncoder struct{ kind ollamaKind }

type ollamaRequest struct {
	request[string]
	Stream  *bool `json:"stream"`
	Options struct {
		NumPredict int `json:"num_predict"`
	} `json:"options"`
}

func (s *Server) ollamaHandler(kind ollamaKind) http.HandlerFunc {
	enc := ollamaEncoder{kind: kind}
	return func(w http.ResponseWriter, r *http.Request) {
		s.generate(w, r, enc, false, func(r *http.Request) (params, error) {
			var req ollamaRequest
			p, err := req.decode(r, &req, kind == ollamaChat, s.cfg.PrefixCache, plainTexts)
			p.stream = req.Stream == nil || *req.Stream
			if req.Options.NumPredict > 0 { // -1 and 0 mean "no limit" to Ollama
				p.maxTokens = req.Options.NumPredict
			}
			return p, err
		})
	}
}

func (ollamaEncoder) contentType(stream bool) string {
	if stream {
		return "application/x-ndjson"
	}
	return "application/json; charset=utf-8"
}

func (ollamaEncoder) earlyHeaders() bool { return false }

func (ollamaEncoder) begin(b []byte, _ *generation) []byte { return b }

func (ollamaEncoder) reasons() bool { return true }

// appendThinking writes `,"thinking":"..."` for the reasoning tokens of [from, to), as
// Ollama does for a model that thinks (omitted when there are none).
func appendThinking(b []byte, g *generation, from, to int) []byte {
	rFrom, rTo, _, _ := g.split(from, to)
	if rTo == rFrom {
		return b
	}
	b = append(b, `,"thinking":"`...)
	b = appendTokens(b, rFrom, rTo)
	return append(b, '"')
}

func (e ollamaEncoder) chunk(b []byte, g *generation, from, to int, _ bool, now time.Time) []byte {
	if g.tool != nil && to < g.tokens {
		return b // Ollama sends a call whole, once parsed: nothing before its last token
	}
	b = append(b, `{"model":`...)
	b = append(b, g.quotedModel...)
	b = append(b, `,"created_at":"`...)
	b = now.UTC().AppendFormat(b, time.RFC3339Nano)
	_, _, aFrom, aTo := g.split(from, to)
	if g.tool != nil {
		return appendOllamaToolCall(b, g, to)
	}
	if e.kind == ollamaChat {
		b = append(b, `","message":{"role":"assistant","content":"`...)
		b = appendTokens(b, aFrom, aTo)
		b = append(b, '"')
		b = appendThinking(b, g, from, to)
		b = append(b, `},"done":false}`+"\n"...)
	} else {
		b = append(b, `","response":"`...)
		b = appendTokens(b, aFrom, aTo)
		b = append(b, '"')
		b = appendThinking(b, g, from, to)
		b = append(b, `,"done":false}`+"\n"...)
	}
	return b
}

// metrics are the done line's timings: load = waiting for a slot, prompt eval = admission
// to the first token, eval = first to last token.
func (g *generation) metrics(end time.Time) api.Metrics {
	return api.Metrics{
		TotalDuration:      end.Sub(g.received),
		LoadDuration:       g.admitted.Sub(g.received),
		PromptEvalCount:    g.p.promptTokens,
		PromptEvalDuration: g.first.Sub(g.admitted),
		EvalCount:          g.tokens,
		EvalDuration:       g.last.Sub(g.first),
	}
}

// final renders the done line (or the whole non-streaming answer) with Ollama's own
// types, so the field order is Ollama's. Once per request, so json.Marshal is fine here.
func (e ollamaEncoder) final(b []byte, g *generation, now time.Time, text, thinking string) []byte {
	var v any
	reason := g.finish
	if g.tool != nil {
		reason = "stop" // Ollama says nothing of a call in done_reason
	}
	if e.kind == ollamaChat {
		v = api.ChatResponse{Model: g.p.model, CreatedAt: now.UTC(),
			Message: api.Message{Role: "assistant", Content: text, Thinking: thinking},
			Done:    true, DoneReason: reason, Metrics: g.metrics(now)}
	} else {
		v = api.GenerateResponse{Model: g.p.model, CreatedAt: now.UTC(), Response: text, Thinking: thinking,
			Done: true, DoneReason: reason, Metrics: g.metrics(now)}
	}
	out, _ := json.Marshal(v)
	b = append(b, out...)
	return append(b, '\n')
}

func (e ollamaEncoder) end(b []byte, g *generation, now time.Time) []byte {
	return e.final(b, g, now, "", "")
}

func (e ollamaEncoder) whole(b []byte, g *generation, now time.Time) []byte {
	rFrom, rTo, aFrom, aTo := g.split(0, g.tokens)
	return e.final(b, g, now, string(appendTokens(nil, aFrom, aTo)), string(appendTokens(nil, rFrom, rTo)))
}

func (ollamaEncoder) malformed(b []byte, g *generation) []byte {
	b = append(b, `{"model":`...)
	b = append(b, g.quotedModel...)
	return append(b, `,"created_at":"`+"\n"...)
}

func (ollamaEncoder) writeError(w http.ResponseWriter, status int, msg, _ string) {
	if status == http.StatusNotFound && strings.HasPrefix(msg, "The model `") {
		// Ollama's wording, with the list a person needs to fix the plan.
		name, rest, _ := strings.Cut(strings.TrimPrefix(msg, "The model `"), "`")
		_, list, _ := strings.Cut(rest, "Available models: ")
		msg = fmt.Sprintf("model %q not found, try pulling it first (available: %s)", name, list)
	}
	writeJSON(w, status, map[string]string{"error": msg})
}

// details describes every mock model the same way: an 8B llama at Q4_K_M.
var details = api.ModelDetails{Format: "gguf", Family: "llama", Families: []string{"llama"},
	ParameterSize: "8.0B", QuantizationLevel: "Q4_K_M"}

func digest(model string) string {
	h := sha256.Sum256([]byte(model))
	return hex.EncodeToString(h[:])
}

// modifiedAt is fixed so listings are stable across runs.
var modifiedAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const modelSize = 4_920_753_328

func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request) {
	var list api.ListResponse
	list.Models = []api.ListModelResponse{}
	for _, m := range s.modelNames() {
		list.Models = append(list.Models, api.ListModelResponse{Name: m, Model: m,
			ModifiedAt: modifiedAt, Size: modelSize, Digest: digest(m), Details: details})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) ollamaPS(w http.ResponseWriter, r *http.Request) {
	var list api.ProcessResponse
	list.Models = []api.ProcessModelResponse{}
	expires := s.cfg.clock.Now().Add(5 * time.Minute).UTC()
	for _, m := range s.modelNames() {
		list.Models = append(list.Models, api.ProcessModelResponse{Name: m, Model: m,
			Size: modelSize, Digest: digest(m), Details: details, ExpiresAt: expires,
			SizeVRAM: modelSize, ContextLength: contextLength})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"` // the older spelling
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if req.Model == "" {
		req.Model = req.Name
	}
	if !s.modelKnown(req.Model) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", req.Model)})
		return
	}
	writeJSON(w, http.StatusOK, api.ShowResponse{
		Modelfile:  "# Modelfile generated by planrun mock-server\nFROM " + req.Model + "\n",
		Parameters: "num_ctx                        4096",
		Template:   "{{ .Prompt }}",
		Details:    details,
		ModelInfo: map[string]any{
			"general.architecture":                   "llama",
			"general.parameter_count":                8030261248,
			"general.file_type":                      15,
			"llama.attention.head_count":             32,
			"llama.attention.head_count_kv":          8,
			"llama.attention.layer_norm_rms_epsilon": 1e-05,
			"llama.block_count":                      32,
			"llama.context_length":                   contextLength,
			"llama.embedding_length":                 4096,
			"llama.feed_forward_length":              14336,
			"llama.rope.freq_base":                   500000,
			"llama.vocab_size":                       128256,
		},
		Capabilities: nil,
		ModifiedAt:   modifiedAt,
	})
}
