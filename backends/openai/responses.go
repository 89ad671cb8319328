package openai

import (
	"bufio"
	"io"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// The Responses API (api = "responses", POST /v1/responses) streams typed events
// rather than chunks: response.output_text.delta carries answer text,
// response.reasoning_text.delta (and the summary's) reasoning, and response.completed
// (or response.incomplete, when max_output_tokens cut it) the usage. The same SSE
// framing and the same timing core read them.

// responsesBody is the request for the Responses API: the conversation as input
// messages, max_output_tokens (forced with vLLM's ignore_eos, which its Responses
// endpoint takes; min_tokens it does not), reasoning.effort, and store off so the server
// keeps no copy of every benchmark response.
func (b *Backend) responsesBody(m map[string]any, req backends.Request) {
	m["input"] = req.Messages()
	m["stream"] = !req.NoStream
	m["store"] = false
	if req.MaxTokens > 0 {
		m["max_output_tokens"] = req.MaxTokens
		if req.ForceMaxTokens && b.cfg.EngineExtensions {
			m["ignore_eos"] = true
		}
	}
	if req.Temperature != nil {
		m["temperature"] = *req.Temperature
	}
	if req.Seed != nil {
		m["seed"] = *req.Seed
	}
	if req.ReasoningEffort != "" {
		m["reasoning"] = map[string]string{"effort": req.ReasoningEffort}
	}
}

// eventFields are the parts of one Responses stream event planrun reads.
type eventFields struct {
	typ, delta []byte
	deltaLen   int
	errMsg     string
	// incomplete: the response's status is "incomplete" (max_output_tokens reached);
	// vLLM says so on response.completed, OpenAI with response.incomplete.
	incomplete bool
}

// parseEvent reads one Responses API stream event into c. Like parseChunk it allocates
// nothing on the per-delta path; a non-nil id receives the response's id (on
// response.created, the first event).
func parseEvent(sc *jsonscan.Scanner, data []byte, c *backends.Chunk, id *string) error {
	sc.Reset(data)
	if !sc.Object() {
		if sc.Err() == nil {
			return malformed(data, "null event")
		}
		return malformed(data, sc.Err().Error())
	}
	var f eventFields
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "type":
			f.typ, _ = sc.String()
		case "delta":
			f.delta, f.deltaLen, _ = sc.StringRaw()
		case "response":
			parseResponse(sc, c, id, &f)
		case "message":
			f.errMsg = errorText(sc)
		default:
			sc.Skip()
		}
	}
	sc.End()
	if err := sc.Err(); err != nil {
		return malformed(data, err.Error())
	}
	switch string(f.typ) {
	case "response.output_text.delta":
		c.Text, c.Content = f.deltaLen, f.delta
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.reasoning.delta":
		c.Reasoning = f.deltaLen
	case "response.completed":
		c.Done, c.FinishReason = true, "stop"
		if f.incomplete {
			c.FinishReason = "length"
		}
	case "response.incomplete":
		c.Done, c.FinishReason = true, "length"
	case "response.failed", "error":
		return &backends.Error{Class: backends.ErrServer, Message: "the server reported an error mid-stream: " + f.errMsg}
	}
	return nil
}

// parseResponse reads an event's response object: its id, its usage (on the final
// event), and its error.
func parseResponse(sc *jsonscan.Scanner, c *backends.Chunk, id *string, f *eventFields) {
	if !sc.Object() {
		return
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "id":
			if id != nil && sc.Peek() == '"' {
				raw, _ := sc.String()
				*id = string(raw)
			} else {
				sc.Skip()
			}
		case "usage":
			if sc.Object() {
				c.Tokens = backends.TokensUsage
				parseUsage(sc, c, responsesUsage)
			}
		case "status":
			raw, _ := sc.String()
			f.incomplete = string(raw) == "incomplete"
		case "error":
			if sc.Peek() == '{' {
				f.errMsg = errorText(sc)
			} else {
				sc.Skip()
			}
		default:
			sc.Skip()
		}
	}
}

// wholeResponse is a non-streamed Responses API answer: output items of type message
// (output_text parts) and reasoning (reasoning_text parts, or a summary).
type wholeResponsesAnswer struct {
	ID                string `json:"id"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
	} `json:"output"`
	Usage *struct {
		InputTokens         int `json:"input_tokens"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
	Error *answerError `json:"error"`
}

// wholeResponsesDecoder reads a non-streamed Responses API answer as one chunk.
type wholeResponsesDecoder struct {
	r    *bufio.Reader
	id   string
	done bool
}

// ResponseID implements backends.ResponseIDer.
func (d *wholeResponsesDecoder) ResponseID() string { return d.id }

// Next implements backends.Decoder.
func (d *wholeResponsesDecoder) Next(c *backends.Chunk) error {
	if d.done {
		return io.EOF
	}
	d.done = true
	var v wholeResponsesAnswer
	if err := decodeWhole(d.r, &v, func() *answerError { return v.Error }); err != nil {
		return err
	}
	d.id = v.ID
	var text string
	for _, item := range v.Output {
		for _, part := range item.Content {
			switch {
			case item.Type == "message" && part.Type == "output_text":
				text += part.Text
			case item.Type == "reasoning":
				c.Reasoning += len(part.Text)
			}
		}
		for _, s := range item.Summary {
			c.Reasoning += len(s.Text)
		}
	}
	c.Text = len(text)
	if text != "" {
		c.Content = escaped(text)
	}
	c.FinishReason = "stop"
	if v.Status == "incomplete" {
		c.FinishReason = "length"
	}
	if u := v.Usage; u != nil {
		c.Tokens, c.PromptTokens, c.OutputTokens = backends.TokensUsage, u.InputTokens, u.OutputTokens
		if u.OutputTokensDetails != nil {
			c.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
		}
	}
	c.Done = true
	return nil
}
