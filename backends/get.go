package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// defaultGetLimit bounds side requests (model lists, versions) when no total timeout is
// configured, so a probe never hangs.
const defaultGetLimit = 30 * time.Second

// GetJSON fetches url with the backend's key and decodes the JSON answer into v. Its
// failures are classified and worded like a measured request's. It is for side requests
// (model lists, versions): it is not timed.
func (c *Core) GetJSON(ctx context.Context, url string, v any) *Error {
	return c.redacted(c.sideJSON(ctx, http.MethodGet, url, nil, v))
}

// PostJSON sends body as JSON to url and decodes the JSON answer into v, like GetJSON
// (for side requests such as Ollama's /api/show).
func (c *Core) PostJSON(ctx context.Context, url string, body, v any) *Error {
	return c.redacted(c.sideJSON(ctx, http.MethodPost, url, body, v))
}

// PostStream sends body as JSON to url and returns the answer's body for the caller to
// read and close: a long side request such as Ollama's /api/pull, bounded only by ctx.
func (c *Core) PostStream(ctx context.Context, url string, body any) (io.ReadCloser, *Error) {
	resp, e := c.send(ctx, ctx, http.MethodPost, url, body)
	if e != nil {
		return nil, c.redacted(e)
	}
	return resp.Body, nil
}

func (c *Core) redacted(e *Error) *Error {
	if e != nil {
		e.Message = redact(e.Message, c.key)
	}
	return e
}

func (c *Core) sideJSON(ctx context.Context, method, url string, body, v any) *Error {
	limit := c.timeouts.Total
	if limit <= 0 {
		limit = defaultGetLimit
	}
	rctx, cancel := context.WithTimeoutCause(ctx, limit, &timeoutError{phase: "total", limit: limit})
	defer cancel()
	resp, e := c.send(ctx, rctx, method, url, body)
	if e != nil {
		return e
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	where := method + " " + resp.Request.URL.Redacted()
	if err != nil {
		if e := c.canceledOrTimeout(ctx, rctx); e != nil {
			return e
		}
		return &Error{Class: ErrStreamCut, Message: where + ": the answer was cut: " + err.Error()}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &Error{Class: ErrMalformed, Status: resp.StatusCode, Message: where +
			": the answer is not the JSON expected (" + err.Error() + "): " + Excerpt(data)}
	}
	return nil
}

// send makes one side request with the backend's headers and key under rctx (derived
// from ctx) and classifies its failures; a non-2xx answer is an error with the server's
// words.
func (c *Core) send(ctx, rctx context.Context, method, url string, body any) (*http.Response, *Error) {
	if e := c.KeyError(); e != nil {
		return nil, e
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, &Error{Class: ErrOther, Message: err.Error()}
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(rctx, method, url, r)
	if err != nil {
		return nil, &Error{Class: ErrOther, Message: err.Error()}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	c.Authorize(req.Header)
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, rctx, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, c.StatusError(resp, data)
	}
	return resp, nil
}

// Warm opens up to n connections to url's server and leaves them idle in the pool, so
// requests sent at set times (a trace replay) do not pay a connection set-up then: n
// GETs of url at once, each holding its connection until every one has its answer (a
// connection is busy until its body is closed). It returns how many succeeded.
func (c *Core) Warm(ctx context.Context, url string, n int) int {
	// One deadline for all: a response's body must outlive its own goroutine.
	rctx, cancel := context.WithTimeout(ctx, defaultGetLimit)
	defer cancel()
	resps := make([]*http.Response, n)
	var wg sync.WaitGroup
	for i := range resps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, e := c.send(ctx, rctx, http.MethodGet, url, nil); e == nil {
				resps[i] = resp // its body unread, its connection stays busy
			}
		}()
	}
	wg.Wait()
	opened := 0
	for _, resp := range resps {
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 8<<20)) // read to the end, the connection goes back to the pool
			resp.Body.Close()
			opened++
		}
	}
	return opened
}
