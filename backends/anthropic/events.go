package anthropic

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/internal/jsonscan"
)

// stream is one response's decoding state: the usage message_start gave (message_delta
// repeats or completes it), and what kind of block each content index is, so that a
// content_block_stop can end a tool call.
type stream struct {
	input, cacheRead, cacheCreate, output int
	// calls maps a content block's index to its tool call's number (from 0), -1 for a
	// block that is not a tool_use.
	calls []int
	tools int
	part  [1]backends.ToolPart // the chunk's Tools, reused
}

// event is the parts of one stream event the adapter reads, as raw bytes valid while
// the event is parsed.
type event struct {
	typ, deltaType, blockType []byte
	index                     int
	text                      []byte // text_delta's text, or a text block's initial text
	textLen                   int
	thinking                  int    // thinking_delta's (or a thinking block's) length
	partial                   []byte // input_json_delta's partial_json
	id, name                  []byte // a tool_use block's
	stop                      []byte
	usage                     bool
	errType                   []byte
	errMsg                    string
}

// parse reads one event into c. Like the OpenAI chunk parser it allocates nothing on the
// per-delta path; id receives the message's id from message_start.
func (st *stream) parse(sc *jsonscan.Scanner, data []byte, c *backends.Chunk, id *string) error {
	sc.Reset(data)
	if !sc.Object() {
		if sc.Err() == nil {
			return malformed(data, "null event")
		}
		return malformed(data, sc.Err().Error())
	}
	var ev event
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "type":
			ev.typ, _ = sc.String()
		case "index":
			n, _ := sc.Int()
			ev.index = int(n)
		case "message":
			st.message(sc, id)
		case "content_block":
			st.block(sc, &ev)
		case "delta":
			st.delta(sc, &ev)
		case "usage":
			ev.usage = true
			st.readUsage(sc)
		case "error":
			st.error(sc, &ev)
		default:
			sc.Skip()
		}
	}
	sc.End()
	if err := sc.Err(); err != nil {
		return malformed(data, err.Error())
	}
	return st.apply(&ev, c)
}

// apply turns a parsed event into the chunk.
func (st *stream) apply(ev *event, c *backends.Chunk) error {
	switch string(ev.typ) {
	case "content_block_start":
		st.setBlock(ev.index, string(ev.blockType) == "tool_use")
		switch string(ev.blockType) {
		case "tool_use":
			c.Tools = st.tool(backends.ToolPart{Index: st.calls[ev.index], ID: ev.id, Name: ev.name})
		case "text":
			c.Text, c.Content = ev.textLen, ev.text
		case "thinking":
			c.Reasoning = ev.thinking
		}
	case "content_block_delta":
		switch string(ev.deltaType) {
		case "text_delta":
			c.Text, c.Content = ev.textLen, ev.text
		case "thinking_delta":
			c.Reasoning = ev.thinking
		case "input_json_delta":
			if call := st.call(ev.index); call >= 0 {
				c.Tools = st.tool(backends.ToolPart{Index: call, Args: ev.partial})
			}
		}
	case "content_block_stop":
		if call := st.call(ev.index); call >= 0 {
			c.Tools = st.tool(backends.ToolPart{Index: call, End: true})
		}
	case "message_delta":
		if len(ev.stop) > 0 {
			c.FinishReason = stopReason(ev.stop)
		}
		if ev.usage {
			c.Tokens = backends.TokensUsage
			c.OutputTokens = st.output
			c.PromptTokens = st.input + st.cacheRead + st.cacheCreate
			c.CachedTokens = st.cacheRead
		}
	case "message_stop":
		c.Done = true
	case "error":
		return &backends.Error{Class: errorClass(ev.errType), Message: "the server reported an error mid-stream (" +
			string(ev.errType) + "): " + ev.errMsg}
	}
	return nil
}

// tool is p as a chunk's Tools, in the stream's own array (no allocation per event).
func (st *stream) tool(p backends.ToolPart) []backends.ToolPart {
	st.part[0] = p
	return st.part[:]
}

// setBlock records content block index as a tool call or not.
func (st *stream) setBlock(index int, tool bool) {
	for len(st.calls) <= index {
		st.calls = append(st.calls, -1)
	}
	if index < 0 {
		return
	}
	if tool {
		st.calls[index] = st.tools
		st.tools++
	}
}

// call is the tool call number of content block index, or -1.
func (st *stream) call(index int) int {
	if index < 0 || index >= len(st.calls) {
		return -1
	}
	return st.calls[index]
}

// message reads message_start's message: its id and usage.
func (st *stream) message(sc *jsonscan.Scanner, id *string) {
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
			st.readUsage(sc)
		default:
			sc.Skip()
		}
	}
}

// readUsage reads a usage object: message_start's, then message_delta's, which repeats
// or completes it (Ollama counts the prompt only by then). A count given again replaces
// the earlier one; output_tokens is cumulative.
func (st *stream) readUsage(sc *jsonscan.Scanner) {
	if !sc.Object() {
		return
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		n, isNum := int64(0), false
		if p := sc.Peek(); p >= '0' && p <= '9' {
			n, isNum = sc.Int()
		} else {
			sc.Skip()
		}
		if !isNum {
			continue
		}
		switch string(key) {
		case "input_tokens":
			st.input = int(n)
		case "cache_read_input_tokens":
			st.cacheRead = int(n)
		case "cache_creation_input_tokens":
			st.cacheCreate = int(n)
		case "output_tokens":
			st.output = int(n)
		}
	}
}

// block reads content_block_start's block.
func (st *stream) block(sc *jsonscan.Scanner, ev *event) {
	if !sc.Object() {
		return
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "type":
			ev.blockType, _ = sc.String()
		case "text":
			ev.text, ev.textLen, _ = sc.StringRaw()
		case "thinking":
			ev.thinking, _ = sc.StringLen()
		case "id":
			ev.id, _ = sc.String()
		case "name":
			ev.name, _ = sc.String()
		default:
			sc.Skip() // input: {} at the start; its JSON follows in input_json_delta
		}
	}
}

// delta reads content_block_delta's or message_delta's delta.
func (st *stream) delta(sc *jsonscan.Scanner, ev *event) {
	if !sc.Object() {
		return
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "type":
			ev.deltaType, _ = sc.String()
		case "text":
			ev.text, ev.textLen, _ = sc.StringRaw()
		case "thinking":
			ev.thinking, _ = sc.StringLen()
		case "partial_json":
			ev.partial, _ = sc.String()
		case "stop_reason":
			if sc.Peek() == '"' {
				ev.stop, _ = sc.String()
			} else {
				sc.Skip()
			}
		default:
			sc.Skip()
		}
	}
}

// error reads an error event's error object (rare: allocating is fine).
func (st *stream) error(sc *jsonscan.Scanner, ev *event) {
	if !sc.Object() {
		return
	}
	for key, ok := sc.Key(); ok; key, ok = sc.Key() {
		switch string(key) {
		case "type":
			ev.errType, _ = sc.String()
		case "message":
			raw, _ := sc.String()
			ev.errMsg = jsonscan.Unquote(raw)
		default:
			sc.Skip()
		}
	}
}

// stopReason maps the Messages API's stop reasons onto the finish reasons every row
// reads: end_turn and stop_sequence are "stop", max_tokens "length", tool_use
// "tool_calls"; others as they are.
func stopReason(raw []byte) string {
	switch string(raw) {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens":
		return "length"
	case "tool_use":
		return "tool_calls"
	}
	return jsonscan.Unquote(raw)
}

// errorClass classifies an error event by its type as its HTTP status would be:
// overloaded_error (529) and api_error are the server's, rate_limit_error is 429,
// invalid_request_error a 4xx.
func errorClass(typ []byte) backends.ErrorClass {
	switch string(typ) {
	case "rate_limit_error":
		return backends.ErrRateLimited
	case "invalid_request_error", "request_too_large":
		return backends.ErrHTTP4xx
	case "authentication_error":
		return backends.ErrUnauthorized
	case "permission_error":
		return backends.ErrForbidden
	case "not_found_error":
		return backends.ErrNotFound
	}
	return backends.ErrServer // overloaded_error, api_error, and any other
}

func malformed(data []byte, why string) error {
	return &backends.Error{Class: backends.ErrMalformed, Message: "malformed event (" + why + "): " + backends.Excerpt(data)}
}

// wholeAnswer is a non-streamed Messages API answer.
type wholeAnswer struct {
	ID      string `json:"id"`
	Content []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking string          `json:"thinking"`
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Input    json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      *struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// wholeDecoder reads a non-streamed answer as one chunk, its tool calls one part each
// after it.
type wholeDecoder struct {
	r     *bufio.Reader
	id    string
	parts []backends.ToolPart
	next  int
	done  bool
}

// ResponseID implements backends.ResponseIDer.
func (d *wholeDecoder) ResponseID() string { return d.id }

// Next implements backends.Decoder.
func (d *wholeDecoder) Next(c *backends.Chunk) error {
	if d.done {
		if d.next < len(d.parts) {
			c.Tools = d.parts[d.next : d.next+1]
			d.next++
			c.Done = d.next == len(d.parts)
			return nil
		}
		return io.EOF
	}
	d.done = true
	var v wholeAnswer
	body, err := io.ReadAll(io.LimitReader(d.r, 64<<20))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return malformed(body, err.Error())
	}
	if v.Error != nil {
		return &backends.Error{Class: errorClass([]byte(v.Error.Type)), Message: "the server reported an error (" + v.Error.Type + "): " + v.Error.Message}
	}
	d.id = v.ID
	var text string
	for _, b := range v.Content {
		switch b.Type {
		case "text":
			text += b.Text
		case "thinking":
			c.Reasoning += len(b.Thinking)
		case "tool_use":
			d.parts = append(d.parts, backends.ToolPart{Index: len(d.parts), ID: escaped(b.ID), Name: escaped(b.Name),
				Args: b.Input, ArgsJSON: true, End: true})
		}
	}
	c.Text = len(text)
	if text != "" {
		c.Content = escaped(text)
	}
	c.FinishReason = stopReason([]byte(v.StopReason))
	if u := v.Usage; u != nil {
		c.Tokens, c.OutputTokens = backends.TokensUsage, u.OutputTokens
		c.PromptTokens = u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		c.CachedTokens = u.CacheReadInputTokens
	}
	c.Done = len(d.parts) == 0
	return nil
}

// escaped is s as a JSON string's content, without its quotes: how a stream carries it.
func escaped(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}
