package mockserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// responsesEncoder writes the OpenAI Responses API (POST /v1/responses) as vLLM does:
// response.created, then one response.reasoning_text.delta or
// response.output_text.delta event per chunk part, and response.completed (or
// response.incomplete when max_output_tokens cut the answer) with the usage.
type responsesEncoder struct{ openai openaiEncoder }

type responsesRequest struct {
	Model string `json:"model"`
	// Input is a string or a list of messages {role, content}.
	Input           json.RawMessage `json:"input"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens int             `json:"max_output_tokens"`
}

func (s *Server) responsesHandler() http.HandlerFunc {
	enc := responsesEncoder{openaiEncoder{kind: openaiChat, reasoningUsage: s.cfg.ReasoningUsage}}
	return func(w http.ResponseWriter, r *http.Request) {
		s.generate(w, r, enc, true, func(r *http.Request) (params, error) {
			var req responsesRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				return params{}, err
			}
			q := request[json.RawMessage]{Model: req.Model, Prompt: req.Input}
			chat := false
			var msgs []message[json.RawMessage]
			if json.Unmarshal(req.Input, &msgs) == nil {
				chat, q.Messages = true, msgs
			}
			p, err := q.params(chat, contentTexts)
			p.stream, p.maxTokens, p.includeUsage = req.Stream, req.MaxOutputTokens, true
			return p, err
		})
	}
}

func (e responsesEncoder) contentType(stream bool) string { return e.openai.contentType(stream) }
func (responsesEncoder) earlyHeaders() bool               { return true }
func (responsesEncoder) reasons() bool                    { return true }

// event starts an SSE event of type typ: its event line and the data's first fields.
func (responsesEncoder) event(b []byte, typ string) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	return append(b, '"')
}

func (e responsesEncoder) begin(b []byte, g *generation) []byte {
	b = e.event(b, "response.created")
	b = append(b, `,"response":{"id":"resp_`...)
	b = append(b, g.quotedID[1:]...)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, g.quotedModel...)
	return append(b, `,"status":"in_progress","output":[],"usage":null}}`+"\n\n"...)
}

func (e responsesEncoder) chunk(b []byte, g *generation, from, to int, _ bool, _ time.Time) []byte {
	rFrom, rTo, aFrom, aTo := g.split(from, to)
	if rTo > rFrom {
		b = e.event(b, "response.reasoning_text.delta")
		b = append(b, `,"item_id":"rs_1","output_index":0,"content_index":0,"delta":"`...)
		b = appendTokens(b, rFrom, rTo)
		b = append(b, "\"}\n\n"...)
	}
	if aTo > aFrom {
		b = e.event(b, "response.output_text.delta")
		b = append(b, `,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"`...)
		b = appendTokens(b, aFrom, aTo)
		b = append(b, `","logprobs":[]}`+"\n\n"...)
	}
	return b
}

// appendResponse writes the response object's status, output text and usage.
func (e responsesEncoder) appendResponse(b []byte, g *generation, whole bool) []byte {
	b = append(b, `{"id":"resp_`...)
	b = append(b, g.quotedID[1:]...)
	b = append(b, `,"object":"response","model":`...)
	b = append(b, g.quotedModel...)
	if g.finish == "length" {
		b = append(b, `,"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, `,"status":"completed","incomplete_details":null`...)
	}
	b = append(b, `,"output":[`...)
	if whole {
		rFrom, rTo, aFrom, aTo := g.split(0, g.tokens)
		b = append(b, `{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"`...)
		b = appendTokens(b, rFrom, rTo)
		b = append(b, `"}]},{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"`...)
		b = appendTokens(b, aFrom, aTo)
		b = append(b, `","annotations":[]}]}`...)
	}
	b = append(b, `],"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(g.p.promptTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(g.tokens), 10)
	if e.openai.reasoningUsage && g.reasoning > 0 {
		b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(g.reasoning), 10)
		b = append(b, '}')
	}
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(g.p.promptTokens+g.tokens), 10)
	return append(b, "}}"...)
}

func (e responsesEncoder) end(b []byte, g *generation, _ time.Time) []byte {
	typ := "response.completed"
	if g.finish == "length" {
		typ = "response.incomplete"
	}
	b = e.event(b, typ)
	b = append(b, `,"response":`...)
	b = e.appendResponse(b, g, false)
	return append(b, "}\n\n"...)
}

func (e responsesEncoder) malformed(b []byte, g *generation) []byte {
	b = e.event(b, "response.output_text.delta")
	return append(b, `,"delta":"`+"\n\n"...)
}

func (e responsesEncoder) whole(b []byte, g *generation, _ time.Time) []byte {
	return e.appendResponse(b, g, true)
}

func (e responsesEncoder) writeError(w http.ResponseWriter, status int, msg, typ string) {
	e.openai.writeError(w, status, msg, typ)
}
