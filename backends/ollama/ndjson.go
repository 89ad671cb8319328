package ollama

import (
	"bufio"
	"bytes"
	"time"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// decoder reads Ollama's NDJSON stream: one JSON object per line, the last one with
// "done":true and the server's timings. Blank lines are skipped; a last line without
// "\n" is still decoded.
type decoder struct {
	lines backends.LineReader
	sc    jsonscan.Scanner
}

func newDecoder(r *bufio.Reader) *decoder { return &decoder{lines: backends.LineReader{R: r}} }

// Next implements backends.Decoder.
func (d *decoder) Next(c *backends.Chunk) error {
	for {
		line, err := d.lines.ReadLine()
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		return parseLine(&d.sc, line, c)
	}
}

// parseLine reads one line of /api/chat or /api/generate. A repeated key counts once,
// its last value winning, as with encoding/json.
func parseLine(sc *jsonscan.Scanner, line []byte, c *backends.Chunk) error {
	sc.Reset(line)
	if !sc.Object() {
		return malformed(line, "not an object")
	}
	var t backends.ServerTimings
	var msgText, msgThinking, response, thinking int
	var msgRaw, responseRaw []byte
	hasEval, errMsg, isErr := false, "", false
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "message":
			msgText, msgThinking, msgRaw = 0, 0, nil
			if sc.Object() {
				for key, ok := sc.Key(); ok; key, ok = sc.Key() {
					switch string(key) {
					case "content":
						msgRaw, msgText, _ = sc.StringRaw()
					case "thinking":
						msgThinking, _ = sc.StringLen()
					case "tool_calls":
						c.Tools = parseToolCalls(sc, c.Tools[:0])
					default:
						sc.Skip()
					}
				}
			}
		case "response":
			responseRaw, response, _ = sc.StringRaw()
		case "thinking":
			thinking, _ = sc.StringLen()
		case "done":
			c.Done = sc.Bool()
		case "done_reason":
			c.FinishReason = ""
			if raw, ok := sc.String(); ok {
				c.FinishReason = doneReason(raw)
			}
		case "total_duration":
			t.TotalDuration = duration(sc)
		case "load_duration":
			t.LoadDuration = duration(sc)
		case "prompt_eval_count":
			t.PromptEvalCount = integer(sc)
		case "prompt_eval_duration":
			t.PromptEvalDuration = duration(sc)
		case "eval_count":
			t.EvalCount = integer(sc)
			hasEval = true
		case "eval_duration":
			t.EvalDuration = duration(sc)
		case "logprobs":
			// Present only where the request asked (Request.TopLogProbs).
			if raw := sc.Raw(); raw != nil && sc.Err() == nil {
				lp, err := backends.ParseLogProbs(raw)
				if err != nil {
					return err
				}
				c.LogProbs = lp
			}
		case "error":
			isErr = true
			if raw, ok := sc.String(); ok {
				errMsg = jsonscan.Unquote(raw)
			} else if sc.Err() != nil {
				return malformed(line, sc.Err().Error())
			}
		default:
			sc.Skip()
		}
	}
	sc.End()
	if err := sc.Err(); err != nil {
		return malformed(line, err.Error())
	}
	if isErr {
		return &backends.Error{Class: backends.ErrServer, Message: "the server reported an error mid-stream: " + errMsg}
	}
	c.Text = msgText + response
	c.Content = msgRaw
	if len(responseRaw) > 0 {
		c.Content = responseRaw
	}
	c.Reasoning = msgThinking + thinking
	if c.Done {
		// The done line carries the server's own figures; only it allocates. (Taking
		// &t directly would move t to the heap on every line.)
		server := t
		c.Server = &server
		if hasEval {
			c.Tokens = backends.TokensServer
			c.OutputTokens = t.EvalCount
			c.PromptTokens = t.PromptEvalCount
		}
	}
	return nil
}

func integer(sc *jsonscan.Scanner) int {
	n, _ := sc.Int()
	return int(n)
}

func duration(sc *jsonscan.Scanner) time.Duration {
	n, _ := sc.Int()
	return time.Duration(n)
}

func doneReason(raw []byte) string {
	switch string(raw) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "load":
		return "load"
	case "unload":
		return "unload"
	}
	return jsonscan.Unquote(raw)
}

func malformed(line []byte, why string) error {
	return &backends.Error{Class: backends.ErrMalformed, Message: "malformed line (" + why + "): " + backends.Excerpt(line)}
}
