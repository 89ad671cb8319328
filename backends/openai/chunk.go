package openai

import (
	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// parseChunk reads the fields planrun needs from one chat.completion.chunk or
// text_completion chunk: content, reasoning, finish_reason, usage, and an error object
// (vLLM reports mid-stream failures as a data event with "error"). Everything else is
// skipped but validated. A repeated key counts once, its last value winning, as with
// encoding/json, so the fuzz test can hold the two to the same answers. A non-nil id
// receives the event's "id" string (the decoder asks on the first event only).
func parseChunk(sc *jsonscan.Scanner, data []byte, c *backends.Chunk, id *string) error {
	sc.Reset(data)
	var errMsg string
	isErr := false
	if !sc.Object() {
		if sc.Err() == nil {
			return malformed(data, "null event")
		}
		return malformed(data, sc.Err().Error())
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "choices":
			c.Text, c.Reasoning, c.FinishReason, c.Content = 0, 0, "", nil
			if sc.Array() {
				for sc.More() {
					if err := parseChoice(sc, c); err != nil {
						return err
					}
				}
			}
		case "usage":
			c.Tokens, c.PromptTokens, c.OutputTokens, c.ReasoningTokens = "", 0, 0, 0
			if sc.Object() {
				c.Tokens = backends.TokensUsage
				parseUsage(sc, c, chatUsage)
			}
		case "error":
			isErr = true
			errMsg = errorText(sc)
		case "id":
			if id != nil && sc.Peek() == '"' {
				raw, _ := sc.String()
				*id = string(raw)
			} else {
				sc.Skip()
			}
		default:
			sc.Skip()
		}
	}
	sc.End()
	if err := sc.Err(); err != nil {
		return malformed(data, err.Error())
	}
	if isErr {
		return &backends.Error{Class: backends.ErrServer, Message: "the server reported an error mid-stream: " + errMsg}
	}
	return nil
}

// usageKeys name a usage object's counts: chat and completions call them
// prompt_tokens, completion_tokens and completion_tokens_details; the Responses API
// input_tokens, output_tokens and output_tokens_details.
type usageKeys struct{ prompt, output, details, promptDetails string }

var (
	chatUsage      = usageKeys{"prompt_tokens", "completion_tokens", "completion_tokens_details", "prompt_tokens_details"}
	responsesUsage = usageKeys{"input_tokens", "output_tokens", "output_tokens_details", "input_tokens_details"}
)

// parseUsage reads a usage object by u's names (comparisons, not a switch on a converted
// key, so nothing is allocated).
func parseUsage(sc *jsonscan.Scanner, c *backends.Chunk, u usageKeys) {
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch {
		case string(key) == u.prompt:
			n, _ := sc.Int()
			c.PromptTokens = int(n)
		case string(key) == u.output:
			n, _ := sc.Int()
			c.OutputTokens = int(n)
		case string(key) == u.promptDetails:
			c.CachedTokens = cachedTokens(sc)
		case string(key) == u.details:
			c.ReasoningTokens = 0
			if sc.Object() {
				for key, ok := sc.Key(); ok; key, ok = sc.Key() {
					if string(key) == "reasoning_tokens" {
						n, _ := sc.Int()
						c.ReasoningTokens = int(n)
					} else {
						sc.Skip()
					}
				}
			}
		default:
			sc.Skip()
		}
	}
}

// message is the text lengths of one delta (or message) object, and its raw content.
type message struct {
	content, reasoningContent, reasoning int
	raw                                  []byte
	tools                                []backends.ToolPart // tool_calls, rare: allocated when present
}

func (m message) text() int     { return m.content }
func (m message) thinking() int { return m.reasoningContent + m.reasoning }
func parseMessage(sc *jsonscan.Scanner) (m message) {
	if !sc.Object() {
		return m
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "content":
			m.raw, m.content, _ = sc.StringRaw()
		case "reasoning_content":
			m.reasoningContent, _ = sc.StringLen()
		case "reasoning":
			m.reasoning, _ = sc.StringLen()
		case "tool_calls":
			m.tools = parseToolCalls(sc, m.tools)
		default:
			sc.Skip()
		}
	}
	return m
}

func parseChoice(sc *jsonscan.Scanner, c *backends.Chunk) error {
	if !sc.Object() {
		return nil
	}
	var delta, msg message
	text := 0
	var textRaw []byte
	finish := ""
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "delta":
			delta = parseMessage(sc)
		case "message":
			msg = parseMessage(sc)
		case "text":
			textRaw, text, _ = sc.StringRaw()
		case "finish_reason":
			finish = ""
			if raw, ok := sc.String(); ok {
				finish = finishReason(raw)
			}
		case "logprobs":
			// vLLM sends "logprobs": null on every chat chunk; a value only where the
			// request asked (Request.TopLogProbs).
			if sc.Null() {
				continue
			}
			if raw := sc.Raw(); raw != nil {
				lp, err := parseLogProbs(raw)
				if err != nil {
					return err
				}
				c.LogProbs = append(c.LogProbs, lp...)
			}
		default:
			sc.Skip()
		}
	}
	c.Text += delta.text() + msg.text() + text
	for _, raw := range [...][]byte{delta.raw, msg.raw, textRaw} {
		if len(raw) > 0 {
			c.Content = raw
		}
	}
	c.Reasoning += delta.thinking() + msg.thinking()
	c.Tools = append(append(c.Tools, delta.tools...), msg.tools...)
	if finish != "" {
		c.FinishReason = finish
	}
	return nil
}

// finishReason returns the common values without allocating.
func finishReason(raw []byte) string {
	switch string(raw) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	case "abort":
		return "abort"
	case "":
		return ""
	}
	return jsonscan.Unquote(raw)
}

// errorText reads an error value: a string, or an object with "message". Errors are
// rare, so allocating here is fine.
func errorText(sc *jsonscan.Scanner) string {
	switch sc.Peek() {
	case '"':
		raw, _ := sc.String()
		return jsonscan.Unquote(raw)
	case '{':
		msg := ""
		sc.Object()
		for key, ok := sc.Key(); ok; key, ok = sc.Key() {
			if string(key) == "message" && sc.Peek() == '"' {
				raw, _ := sc.String()
				msg = jsonscan.Unquote(raw)
			} else {
				sc.Skip()
			}
		}
		return msg
	}
	sc.Skip()
	return ""
}

func malformed(data []byte, why string) error {
	return &backends.Error{Class: backends.ErrMalformed, Message: "malformed chunk (" + why + "): " + backends.Excerpt(data)}
}
