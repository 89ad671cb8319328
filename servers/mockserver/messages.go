package mockserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// messagesEncoder writes the Anthropic Messages API (POST /v1/messages) as vLLM's
// anthropic entrypoint and Anthropic's API do: message_start with the input usage (the
// prompt less what the prefix cache held, cache_read_input_tokens apart), a thinking
// block for the reasoning tokens, a text block for the answer, one content_block_delta
// per chunk part, then content_block_stop, message_delta with the stop reason and
// output_tokens, and message_stop. A ping follows message_start, as Anthropic's does.
type messagesEncoder struct{}

type messagesRequest struct {
	request[json.RawMessage]
	System    json.RawMessage `json:"system"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
}

func (s *Server) messagesHandler() http.HandlerFunc {
	enc := messagesEncoder{}
	return func(w http.ResponseWriter, r *http.Request) {
		s.generate(w, r, enc, true, func(r *http.Request) (params, error) {
			var req messagesRequest
			p, err := req.decode(r, &req, true, s.cfg.PrefixCache, contentTexts)
			if len(req.System) > 0 {
				p.promptTokens += countContentWords(req.System)
				if s.cfg.PrefixCache {
					p.promptText = contentText(req.System) + " " + p.promptText
				}
			}
			p.stream, p.maxTokens, p.includeUsage = req.Stream, req.MaxTokens, true
			return p, err
		})
	}
}

func (messagesEncoder) contentType(stream bool) string {
	if stream {
		return "text/event-stream; charset=utf-8"
	}
	return "application/json"
}

func (messagesEncoder) earlyHeaders() bool { return true }
func (messagesEncoder) reasons() bool      { return true }

// event starts an SSE event of type typ: its event line and the data's type field.
func (messagesEncoder) event(b []byte, typ string) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	return append(b, '"')
}

// textIndex is the content index of the answer's text block: after the thinking block
// when there is reasoning.
func textIndex(g *generation) int {
	if g.reasoning > 0 {
		return 1
	}
	return 0
}

// appendUsage writes the usage object's counts: input_tokens is the prompt less what
// the cache read, as the Messages API counts it.
func (messagesEncoder) appendUsage(b []byte, g *generation, output int) []byte {
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(g.p.promptTokens-g.cached), 10)
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, int64(g.cached), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(output), 10)
	return append(b, '}')
}

func (e messagesEncoder) begin(b []byte, g *generation) []byte {
	b = e.event(b, "message_start")
	b = append(b, `,"message":{"id":"msg_`...)
	b = append(b, g.quotedID[1:]...)
	b = append(b, `,"type":"message","role":"assistant","content":[],"model":`...)
	b = append(b, g.quotedModel...)
	b = append(b, `,"stop_reason":null,"stop_sequence":null,"usage":`...)
	b = e.appendUsage(b, g, 0)
	b = append(b, "}}\n\n"...)
	b = e.event(b, "ping")
	b = append(b, "}\n\n"...)
	b = e.event(b, "content_block_start")
	if g.tool != nil {
		b = append(b, `,"index":0,"content_block":{"type":"tool_use","id":"toolu_`...)
		b = append(b, g.quotedID[1:]...)
		b = append(b, `,"name":`...)
		b = append(b, g.quotedToolName()...)
		return append(b, `,"input":{}}}`+"\n\n"...)
	}
	if g.reasoning > 0 {
		return append(b, `,"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`+"\n\n"...)
	}
	return append(b, `,"index":0,"content_block":{"type":"text","text":""}}`+"\n\n"...)
}

func (e messagesEncoder) chunk(b []byte, g *generation, from, to int, _ bool, _ time.Time) []byte {
	if g.tool != nil {
		b = e.event(b, "content_block_delta")
		b = append(b, `,"index":0,"delta":{"type":"input_json_delta","partial_json":"`...)
		b = appendArgs(b, g, from, to, true)
		return append(b, "\"}}\n\n"...)
	}
	rFrom, rTo, aFrom, aTo := g.split(from, to)
	if rTo > rFrom {
		b = e.event(b, "content_block_delta")
		b = append(b, `,"index":0,"delta":{"type":"thinking_delta","thinking":"`...)
		b = appendTokens(b, rFrom, rTo)
		b = append(b, "\"}}\n\n"...)
	}
	if aTo == aFrom {
		return b
	}
	idx := strconv.Itoa(textIndex(g))
	if g.reasoning > 0 && aFrom == g.reasoning {
		// The answer's first token: the thinking block ends and the text block begins.
		b = e.event(b, "content_block_stop")
		b = append(b, `,"index":0}`+"\n\n"...)
		b = e.event(b, "content_block_start")
		b = append(b, `,"index":1,"content_block":{"type":"text","text":""}}`+"\n\n"...)
	}
	b = e.event(b, "content_block_delta")
	b = append(b, `,"index":`...)
	b = append(b, idx...)
	b = append(b, `,"delta":{"type":"text_delta","text":"`...)
	b = appendTokens(b, aFrom, aTo)
	return append(b, "\"}}\n\n"...)
}

// stopReason is the Messages API's name for g's finish.
func (messagesEncoder) stopReason(g *generation) string {
	switch {
	case g.tool != nil:
		return "tool_use"
	case g.finish == "length":
		return "max_tokens"
	}
	return "end_turn"
}

func (e messagesEncoder) end(b []byte, g *generation, _ time.Time) []byte {
	last := textIndex(g)
	if g.reasoning >= g.tokens || g.tool != nil {
		last = 0 // all reasoning: the thinking block is the last
	}
	b = e.event(b, "content_block_stop")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(last), 10)
	b = append(b, "}\n\n"...)
	b = e.event(b, "message_delta")
	b = append(b, `,"delta":{"stop_reason":"`...)
	b = append(b, e.stopReason(g)...)
	b = append(b, `","stop_sequence":null},"usage":`...)
	b = e.appendUsage(b, g, g.tokens)
	b = append(b, "}\n\n"...)
	b = e.event(b, "message_stop")
	return append(b, "}\n\n"...)
}

func (e messagesEncoder) malformed(b []byte, g *generation) []byte {
	b = e.event(b, "content_block_delta")
	return append(b, `,"index":0,"delta":{"type":"text_delta","text":"`+"\n\n"...)
}

func (e messagesEncoder) whole(b []byte, g *generation, _ time.Time) []byte {
	b = append(b, `{"id":"msg_`...)
	b = append(b, g.quotedID[1:]...)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = append(b, g.quotedModel...)
	b = append(b, `,"content":[`...)
	rFrom, rTo, aFrom, aTo := g.split(0, g.tokens)
	if rTo > rFrom {
		b = append(b, `{"type":"thinking","thinking":"`...)
		b = appendTokens(b, rFrom, rTo)
		b = append(b, `","signature":""},`...)
	}
	b = append(b, `{"type":"text","text":"`...)
	b = appendTokens(b, aFrom, aTo)
	b = append(b, `"}],"stop_reason":"`...)
	b = append(b, e.stopReason(g)...)
	b = append(b, `","stop_sequence":null,"usage":`...)
	b = e.appendUsage(b, g, g.tokens)
	return append(b, '}')
}

// writeError answers in Anthropic's error shape; 503 becomes Anthropic's 529
// overloaded_error.
func (messagesEncoder) writeError(w http.ResponseWriter, status int, msg, _ string) {
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		status, typ = 529, "overloaded_error"
	}
	type body struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	writeJSON(w, status, struct {
		Type  string `json:"type"`
		Error body   `json:"error"`
	}{"error", body{typ, msg}})
}
