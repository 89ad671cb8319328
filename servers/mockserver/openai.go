package mockserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// openaiKind selects /v1/chat/completions or /v1/completions.
type openaiKind int

const (
	openaiChat openaiKind = iota
	openaiText
)

// openaiEncoder writes the stream byte for byte as vLLM's OpenAI server does: a role-only
// first chunk (chat), content chunks, the last one carrying finish_reason, a usage chunk
// with "choices":[] when stream_options.include_usage is set, then "data: [DONE]".
type openaiEncoder struct {
	kind openaiKind
	// reasoningField is the delta field reasoning goes in (Config.ReasoningField).
	reasoningField string
	// reasoningUsage adds completion_tokens_details.reasoning_tokens to the usage.
	reasoningUsage bool
	// cachedUsage adds prompt_tokens_details.cached_tokens (Config.PrefixCache).
	cachedUsage bool
}

type openaiRequest struct {
	request[json.RawMessage]
	MaxTokens           int  `json:"max_tokens"`
	MaxCompletionTokens int  `json:"max_completion_tokens"`
	Stream              bool `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
	MinTokens int  `json:"min_tokens"`
}

// countContentWords counts the words in a string, or in the "text" of an array of parts.
func countContentWords(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return countWords(s)
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) == nil {
		n := 0
		for _, p := range parts {
			n += countWords(p.Text) + countContentWords(p.result())
		}
		return n
	}
	var ss []string // completions accept a list of prompts; the mock counts them all
	if json.Unmarshal(raw, &ss) == nil {
		n := 0
		for _, p := range ss {
			n += countWords(p)
		}
		return n
	}
	return 0
}

// contentHead is the start of a content or prompt that is a plain string ("" otherwise).
func contentHead(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return head(s)
}

func (s *Server) openaiHandler(kind openaiKind) http.HandlerFunc {
	enc := openaiEncoder{kind: kind, reasoningField: s.cfg.ReasoningField, reasoningUsage: s.cfg.ReasoningUsage, cachedUsage: s.cfg.PrefixCache}
	return func(w http.ResponseWriter, r *http.Request) {
		s.generate(w, r, enc, true, func(r *http.Request) (params, error) {
			var req openaiRequest
			p, err := req.decode(r, &req, kind == openaiChat, s.cfg.PrefixCache, contentTexts)
			p.stream, p.maxTokens = req.Stream, req.MaxTokens
			p.ignoreEOS, p.minTokens = req.IgnoreEOS, req.MinTokens
			if req.MaxCompletionTokens > 0 {
				p.maxTokens = req.MaxCompletionTokens
			}
			if req.StreamOptions != nil {
				p.includeUsage = req.StreamOptions.IncludeUsage
			}
			return p, err
		})
	}
}

func (openaiEncoder) contentType(stream bool) string {
	if stream {
		return "text/event-stream; charset=utf-8"
	}
	return "application/json"
}

func (openaiEncoder) earlyHeaders() bool { return true }

func (e openaiEncoder) reasons() bool { return e.kind == openaiChat }

// appendDelta writes the fields of a chat delta (or message) for tokens [from, to):
// reasoning in its field, then content, each only when it has tokens (content always
// when there is no reasoning, as vLLM writes it).
func (e openaiEncoder) appendDelta(b []byte, g *generation, from, to int) []byte {
	rFrom, rTo, aFrom, aTo := g.split(from, to)
	if rTo > rFrom {
		b = append(b, '"')
		b = append(b, e.reasoningField...)
		b = append(b, `":"`...)
		b = appendTokens(b, rFrom, rTo)
		b = append(b, '"')
		if aTo == aFrom {
			return b
		}
		b = append(b, ',')
	}
	b = append(b, `"content":"`...)
	b = appendTokens(b, aFrom, aTo)
	return append(b, '"')
}

// head appends the fields every chunk of this request shares.
func (e openaiEncoder) head(b []byte, g *generation) []byte {
	b = append(b, `data: {"id":`...)
	if e.kind == openaiChat {
		b = append(b, `"chatcmpl-`...)
	} else {
		b = append(b, `"cmpl-`...)
	}
	b = append(b, g.quotedID[1:]...)
	if e.kind == openaiChat {
		b = append(b, `,"object":"chat.completion.chunk","created":`...)
	} else {
		b = append(b, `,"object":"text_completion","created":`...)
	}
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, g.quotedModel...)
	return b
}

func (e openaiEncoder) begin(b []byte, g *generation) []byte {
	if e.kind != openaiChat {
		return b
	}
	b = e.head(b, g)
	return append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

func (e openaiEncoder) chunk(b []byte, g *generation, from, to int, last bool, _ time.Time) []byte {
	b = e.head(b, g)
	if e.kind == openaiChat {
		b = append(b, `,"choices":[{"index":0,"delta":{`...)
		if g.tool != nil {
			b = appendToolDelta(b, g, from, to)
		} else {
			b = e.appendDelta(b, g, from, to)
		}
		b = append(b, `},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":"`...)
		b = appendTokens(b, from, to)
		b = append(b, `","logprobs":null,"finish_reason":`...)
	}
	if last {
		b = append(b, '"')
		b = append(b, g.finish...)
		b = append(b, `","stop_reason":null}]}`+"\n\n"...)
	} else if e.kind == openaiChat {
		b = append(b, `null}]}`+"\n\n"...)
	} else {
		b = append(b, `null,"stop_reason":null}]}`+"\n\n"...)
	}
	return b
}

func (e openaiEncoder) end(b []byte, g *generation, _ time.Time) []byte {
	if g.p.includeUsage {
		b = e.head(b, g)
		b = append(b, `,"choices":[],"usage":`...)
		b = e.appendUsage(b, g)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

func (e openaiEncoder) appendUsage(b []byte, g *generation) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(g.p.promptTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(g.p.promptTokens+g.tokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(g.tokens), 10)
	if e.cachedUsage {
		// vLLM's --enable-prompt-tokens-details: the prompt tokens its cache served.
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(g.cached), 10)
		b = append(b, '}')
	}
	if e.reasoningUsage && g.reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(g.reasoning), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

func (e openaiEncoder) malformed(b []byte, g *generation) []byte {
	// A chunk cut inside its JSON, then the SSE event ends: what a broken proxy produces.
	b = e.head(b, g)
	return append(b, `,"choices":[{"index":0,"delta":{"content":"`+"\n\n"...)
}

func (e openaiEncoder) whole(b []byte, g *generation, _ time.Time) []byte {
	if e.kind == openaiChat {
		b = append(b, `{"id":"chatcmpl-`...)
	} else {
		b = append(b, `{"id":"cmpl-`...)
	}
	b = append(b, g.quotedID[1:]...)
	if e.kind == openaiChat {
		b = append(b, `,"object":"chat.completion","created":`...)
	} else {
		b = append(b, `,"object":"text_completion","created":`...)
	}
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, g.quotedModel...)
	if e.kind == openaiChat {
		b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant",`...)
		b = e.appendDelta(b, g, 0, g.tokens)
		b = append(b, `},"logprobs":null,"finish_reason":"`...)
	} else {
		b = append(b, `,"choices":[{"index":0,"text":"`...)
		b = appendTokens(b, 0, g.tokens)
		b = append(b, `","logprobs":null,"finish_reason":"`...)
	}
	b = append(b, g.finish...)
	b = append(b, `","stop_reason":null}],"usage":`...)
	b = e.appendUsage(b, g)
	return append(b, '}')
}

func (openaiEncoder) writeError(w http.ResponseWriter, status int, msg, typ string) {
	if status == http.StatusUnauthorized {
		writeJSON(w, status, map[string]string{"error": msg}) // vLLM's api-key middleware
		return
	}
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	}
	writeJSON(w, status, struct {
		Error body `json:"error"`
	}{body{Message: msg, Type: typ, Code: status}})
}

func (s *Server) openaiModels(w http.ResponseWriter, r *http.Request) {
	type model struct {
		ID          string  `json:"id"`
		Object      string  `json:"object"`
		Created     int64   `json:"created"`
		OwnedBy     string  `json:"owned_by"`
		Root        string  `json:"root"`
		Parent      *string `json:"parent"`
		MaxModelLen int     `json:"max_model_len"`
	}
	var list struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}
	list.Object = "list"
	now := s.cfg.clock.Now().Unix()
	names := s.modelNames()
	if len(s.cfg.Models) == 0 {
		// Any name is served: a wildcard entry says so, as a gateway's wildcard route
		// does, so a client checking its model against the list finds it there.
		names = append(names, "*")
	}
	for _, m := range names {
		list.Data = append(list.Data, model{ID: m, Object: "model", Created: now, OwnedBy: "vllm",
			Root: m, MaxModelLen: contextLength})
	}
	writeJSON(w, http.StatusOK, list)
}

// appendToolDelta writes a chat delta's tool_calls for tokens [from, to) of g's call, as
// vLLM does: the first carries the call's id, type and name.
func appendToolDelta(b []byte, g *generation, from, to int) []byte {
	b = append(b, `"tool_calls":[{"index":0,`...)
	if from == 0 {
		b = append(b, `"id":"call_`...)
		b = append(b, g.quotedID[1:]...)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = append(b, g.quotedToolName()...)
		b = append(b, `,"arguments":"`...)
	} else {
		b = append(b, `"function":{"arguments":"`...)
	}
	b = appendArgs(b, g, from, to, true)
	return append(b, `"}}]`...)
}
