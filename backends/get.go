package backends

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// defaultGetLimit bounds side requests (model lists, versions) when no total timeout is
// configured, so a probe never hangs.
const defaultGetLimit = 30 * time.Second

// GetJSON fetches url with the backend's key and decodes the JSON answer into v. Its
// failures are classified and worded like a measured request's. It is for side requests
// (model lists, versions): it is not timed.
func (c *Core) GetJSON(ctx context.Context, url string, v any) *Error {
	e := c.getJSON(ctx, url, v)
	if e != nil {
		e.Message = redact(e.Message, c.key)
	}
	return e
}

func (c *Core) getJSON(ctx context.Context, url string, v any) *Error {
	if e := c.KeyError(); e != nil {
		return e
	}
	limit := c.timeouts.Total
	if limit <= 0 {
		limit = defaultGetLimit
	}
	rctx, cancel := context.WithTimeoutCause(ctx, limit, &timeoutError{phase: "total", limit: limit})
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return &Error{Class: ErrOther, Message: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	c.Authorize(req.Header)
	resp, err := c.client.Do(req)
	if err != nil {
		return c.transportError(ctx, rctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode/100 != 2 {
		return c.StatusError(resp, body)
	}
	if err != nil {
		if e := c.canceledOrTimeout(ctx, rctx); e != nil {
			return e
		}
		return &Error{Class: ErrStreamCut, Message: "GET " + req.URL.Redacted() + ": the answer was cut: " + err.Error()}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &Error{Class: ErrMalformed, Status: resp.StatusCode, Message: "GET " + req.URL.Redacted() +
			": the answer is not the JSON expected (" + err.Error() + "): " + Excerpt(body)}
	}
	return nil
}
