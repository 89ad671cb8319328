package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// maxServerText bounds how much of a server's error body goes into a message.
const maxServerText = 300

// timeoutMessage says which limit fired and what it usually means.
func (c *Core) timeoutMessage(t *timeoutError) string {
	switch t.phase {
	case "connect":
		return fmt.Sprintf("no connection to %s within %s (timeouts.connect): is the host reachable?", c.url, t.limit)
	case "first_token":
		return fmt.Sprintf("no generated token within %s of the request start (timeouts.first_token): the server may be loading the model or queueing requests", t.limit)
	case "idle":
		return fmt.Sprintf("the stream stalled: no chunk for %s (timeouts.idle)", t.limit)
	default:
		return fmt.Sprintf("the request took longer than %s (timeouts.total)", t.limit)
	}
}

// canceledOrTimeout classifies a failure caused by a context: one of our phase timers,
// or the caller stopping the run.
func (c *Core) canceledOrTimeout(parent, rctx context.Context) *Error {
	var t *timeoutError
	if errors.As(context.Cause(rctx), &t) {
		return &Error{Class: ErrTimeout, Phase: t.phase, Message: c.timeoutMessage(t)}
	}
	if parent.Err() != nil {
		return &Error{Class: ErrCanceled, Message: "the run was interrupted: " + context.Cause(parent).Error()}
	}
	return nil
}

// transportError classifies a failure before any response arrived.
func (c *Core) transportError(parent, rctx context.Context, err error) *Error {
	if e := c.canceledOrTimeout(parent, rctx); e != nil {
		return e
	}
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Error{Class: ErrRefused, Message: "connection refused: is the server running at " + c.url + "?"}
	case errors.As(err, &dns):
		return &Error{Class: ErrRefused, Message: "cannot resolve host " + dns.Name + " of " + c.url + ": check the url"}
	case errors.As(err, &op) && op.Op == "dial":
		return &Error{Class: ErrRefused, Message: "cannot reach " + c.url + ": " + op.Err.Error()}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return &Error{Class: ErrStreamCut, Message: "the server at " + c.url + " closed the connection before answering"}
	}
	return &Error{Class: ErrOther, Message: err.Error()}
}

// readError classifies a failure while reading the stream.
func (c *Core) readError(parent, rctx context.Context, err error, s *Sample) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if e := c.canceledOrTimeout(parent, rctx); e != nil {
		return e
	}
	why := "the body ended"
	if err != io.EOF {
		why = err.Error()
	}
	return &Error{Class: ErrStreamCut, Message: fmt.Sprintf(
		"the stream was cut mid-way after %d content chunks, before its end marker (finish_reason, usage, [DONE] or done line): %s",
		len(s.ChunkArrivals), why)}
}

// StatusError turns a non-2xx response into an Error a person can act on. body is the
// start of the response body.
func (c *Core) StatusError(resp *http.Response, body []byte) *Error {
	said := ServerMessage(body)
	if said != "" {
		said = " Server said: " + said
		// Other sentences may follow (the models the server has): end this one.
		if !strings.ContainsAny(said[len(said)-1:], ".!?") {
			said += "."
		}
	}
	e := &Error{Status: resp.StatusCode}
	code := strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e.Class = ErrUnauthorized
		if resp.StatusCode == http.StatusForbidden {
			e.Class = ErrForbidden
		}
		if c.keyEnv == "" {
			e.Message = "the server refused the request (" + code + ") and no key was sent: set api_key_env on backend " +
				c.name + " to the environment variable holding the key; it is sent as the header " + c.keyHeaderText() + "."
		} else {
			e.Message = "the server refused the key (" + code + "): it must be sent as the header " + c.keyHeaderText() + "; " +
				"the key was read from $" + c.keyEnv + ": check that it holds a valid key" +
				map[bool]string{true: " allowed to use this model", false: ""}[resp.StatusCode == http.StatusForbidden] + "."
		}
	case resp.StatusCode == http.StatusNotFound:
		e.Class = ErrNotFound
		e.Message = "not found (" + code + ") at " + resp.Request.URL.Redacted() + "."
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Class = ErrRateLimited
		e.RetryAfter = resp.Header.Get("Retry-After")
		e.Message = "rate limited (" + code + ")"
		if e.RetryAfter != "" {
			e.Message += "; the server asks to retry after " + e.RetryAfter
		}
		e.Message += ": lower the concurrency or request rate."
	case resp.StatusCode >= 500:
		e.Class = ErrServer
		e.RetryAfter = resp.Header.Get("Retry-After")
		e.Message = "server error (" + code + ")."
	default:
		e.Class = ErrHTTP4xx
		e.Message = "the server rejected the request (" + code + ")."
	}
	e.Message += said
	return e
}

// ServerMessage pulls the human part out of an error body: OpenAI's
// {"error":{"message":...}}, vLLM's {"object":"error","message":...}, Ollama's
// {"error":"..."}, FastAPI's {"detail":...}; otherwise the text itself, truncated.
func ServerMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		var s string
		var o struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case json.Unmarshal(v.Error, &o) == nil && o.Message != "":
			msg = o.Message
		case v.Message != "":
			msg = v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			msg = s
		default: // a detail that is not a string, as it is ("" without one: the body, below)
			msg = string(v.Detail)
		}
	}
	if msg == "" {
		msg = string(body)
	}
	return truncate(strings.Join(strings.Fields(msg), " "), maxServerText)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "… (truncated)"
}

// Excerpt is a short, printable quote of a bad chunk for a malformed-chunk message.
func Excerpt(b []byte) string {
	return strconv.Quote(truncate(string(b), 80))
}

// redact removes the key from a message: servers sometimes echo what they were sent.
func redact(msg, key string) string {
	if key == "" {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[redacted]")
}
