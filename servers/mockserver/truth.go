package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Truth is what the server knows about one generation request: when it arrived, when it
// got a queue slot, and when each chunk was written (after the flush). A client's TTFT
// and TPOT are checked against it.
type Truth struct {
	ID     string // X-Request-Id, or "req-<Number>"
	Number uint64 // arrival order of generation requests, from 1
	Path   string
	Model  string
	Stream bool
	Fault  Fault
	Status int // HTTP status written

	Received time.Time // handler entered
	// Arrived is when the request's first bytes reached the server's socket: the
	// kernel's software receive stamp (ArrivedKernel; Linux TCP), so that the mock's own
	// lateness in reading a connection is not taken for the client's; Received where
	// there is none.
	Arrived       time.Time
	ArrivedKernel bool
	Admitted      time.Time // queue slot held (zero if the request never got one)

	// Prompt is the start of the prompt text (of the first message, for chat), so a
	// client that puts a unique marker first can find its request here.
	Prompt       string
	PromptTokens int
	// Messages is the number of chat messages the request carried (a session's turn k
	// carries 2k−1); 0 for a bare prompt.
	Messages int
	// CachedTokens are the prompt's leading tokens the prefix cache held
	// (Config.PrefixCache).
	CachedTokens int
	OutputTokens int
	FinishReason string
	// ToolCall is the tool the answer called (its tokens its arguments), "" for a text
	// answer.
	ToolCall string
	// Chunks are the content chunks in order. A non-streaming response is one chunk.
	Chunks []ChunkTruth
	// Complete is true when the stream ended the way the protocol ends it ([DONE], or
	// Ollama's done line).
	Complete bool
	// Ended is when the flush of the stream's end returned (after Config.EndDelay), or of
	// a whole answer: the server's end of the request. Zero when it never ended so.
	Ended time.Time
	// Canceled is true when the client went away before the end.
	Canceled bool
}

// ChunkTruth is one content chunk: how many tokens it carried, when the schedule said it
// was due, when the mock began to write it and when the flush that wrote it returned.
// The bytes left between Writing and Written: on a loaded machine the mock can be taken
// off the CPU after its write and before its stamp, so a client may read a chunk before
// Written, never before Writing.
type ChunkTruth struct {
	Tokens int
	// Reasoning is how many of Tokens were reasoning (Config.ReasoningTokens).
	Reasoning int
	Due       time.Time
	Writing   time.Time
	Written   time.Time
}

// TTFT is the truth for a client's TTFT: request received to first content chunk written.
func (t *Truth) TTFT() (time.Duration, bool) {
	if len(t.Chunks) == 0 {
		return 0, false
	}
	return t.Chunks[0].Written.Sub(t.Received), true
}

// TTFO is the truth for a client's TTFO: request received to the first chunk carrying
// answer (not reasoning) tokens written.
func (t *Truth) TTFO() (time.Duration, bool) {
	for _, c := range t.Chunks {
		if c.Tokens > c.Reasoning {
			return c.Written.Sub(t.Received), true
		}
	}
	return 0, false
}

// ReasoningTokens is the reasoning tokens written.
func (t *Truth) ReasoningTokens() int {
	n := 0
	for _, c := range t.Chunks {
		n += c.Reasoning
	}
	return n
}

// E2E is request received to last content chunk written.
func (t *Truth) E2E() (time.Duration, bool) {
	if len(t.Chunks) == 0 {
		return 0, false
	}
	return t.Chunks[len(t.Chunks)-1].Written.Sub(t.Received), true
}

// TPOT is vLLM's definition over the written times: (last − first) / (tokens − 1).
func (t *Truth) TPOT() (time.Duration, bool) {
	tokens := 0
	for _, c := range t.Chunks {
		tokens += c.Tokens
	}
	if tokens <= 1 || len(t.Chunks) == 0 {
		return 0, false
	}
	return t.Chunks[len(t.Chunks)-1].Written.Sub(t.Chunks[0].Written) / time.Duration(tokens-1), true
}

// Lateness is how far each chunk's write trailed its due time: the server's own emission
// error. Max and mean over the request's chunks.
func (t *Truth) Lateness() (maxLate, meanLate time.Duration) {
	if len(t.Chunks) == 0 {
		return 0, 0
	}
	var sum time.Duration
	for _, c := range t.Chunks {
		l := c.Written.Sub(c.Due)
		sum += l
		maxLate = max(maxLate, l)
	}
	return maxLate, sum / time.Duration(len(t.Chunks))
}

// record stores a finished request's truth.
func (s *Server) record(t *Truth) {
	if t == nil {
		return
	}
	s.truthMu.Lock()
	s.truths = append(s.truths, t)
	s.truthMu.Unlock()
}

// Truth returns the last recorded request with this ID (Config.RecordTruth must be on).
func (s *Server) Truth(id string) (Truth, bool) {
	s.truthMu.Lock()
	defer s.truthMu.Unlock()
	for i := len(s.truths) - 1; i >= 0; i-- {
		if s.truths[i].ID == id {
			return *s.truths[i], true
		}
	}
	return Truth{}, false
}

// Truths returns every recorded request, in arrival order.
func (s *Server) Truths() []Truth {
	s.truthMu.Lock()
	out := make([]Truth, len(s.truths))
	for i, t := range s.truths {
		out[i] = *t
	}
	s.truthMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// ResetTruth forgets the recorded requests (between measured runs).
func (s *Server) ResetTruth() {
	s.truthMu.Lock()
	s.truths = nil
	s.truthMu.Unlock()
}

// Summary is a Truth reduced to what a client's figures are checked against, small
// enough to ship thousands of them over /mock/truth from a mock in another process.
type Summary struct {
	ID       string `json:"id"`
	Prompt   string `json:"prompt"`
	Status   int    `json:"status"`
	Complete bool   `json:"complete"`
	Tokens   int    `json:"tokens"` // output tokens written in content chunks
	Chunks   int    `json:"chunks"`
	// Received is when the handler got the request and FirstWritten when the first
	// content chunk's flush returned: against a client's own clock readings (same
	// machine) they split its TTFT into sending and reading.
	Received     time.Time `json:"received"`
	FirstWritten time.Time `json:"first_written"`
	// Arrived and ArrivedKernel are Truth's: when the request's first bytes reached the
	// socket, by the kernel's stamp where ArrivedKernel.
	Arrived       time.Time `json:"arrived"`
	ArrivedKernel bool      `json:"arrived_kernel,omitempty"`
	// TTFT and TPOT are the truths as Truth.TTFT and Truth.TPOT define them; 0 when
	// undefined.
	TTFT time.Duration `json:"ttft_ns"`
	TPOT time.Duration `json:"tpot_ns"`
	// TTFO is Truth.TTFO and ReasoningTokens Truth.ReasoningTokens (Config.ReasoningTokens);
	// TTFO is 0 when no answer chunk was written.
	TTFO            time.Duration `json:"ttfo_ns,omitempty"`
	ReasoningTokens int           `json:"reasoning_tokens,omitempty"`
	// LateP50 and LateMax are the median and largest lateness of this request's chunks
	// against their schedule: the server's own emission error.
	LateP50 time.Duration `json:"late_p50_ns"`
	LateMax time.Duration `json:"late_max_ns"`
}

// Summarize reduces t.
func (t *Truth) Summarize() Summary {
	s := Summary{ID: t.ID, Prompt: t.Prompt, Status: t.Status, Complete: t.Complete, Chunks: len(t.Chunks),
		Received: t.Received, Arrived: t.Arrived, ArrivedKernel: t.ArrivedKernel}
	for _, c := range t.Chunks {
		s.Tokens += c.Tokens
	}
	s.TTFT, _ = t.TTFT()
	s.TPOT, _ = t.TPOT()
	s.TTFO, _ = t.TTFO()
	s.ReasoningTokens = t.ReasoningTokens()
	if len(t.Chunks) > 0 {
		s.FirstWritten = t.Chunks[0].Written
		late := make([]time.Duration, len(t.Chunks))
		for i, c := range t.Chunks {
			late[i] = c.Written.Sub(c.Due)
		}
		sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
		s.LateP50, s.LateMax = late[len(late)/2], late[len(late)-1]
	}
	return s
}

// Summaries returns every recorded request, reduced, in arrival order; reset forgets
// them in the same step so no request is lost or counted twice between two readings.
func (s *Server) Summaries(reset bool) []Summary {
	s.truthMu.Lock()
	ts := s.truths
	if reset {
		s.truths = nil
	}
	s.truthMu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].Number < ts[j].Number })
	out := make([]Summary, len(ts))
	for i, t := range ts {
		out[i] = t.Summarize()
	}
	return out
}

// truthHandler serves GET /mock/truth (add ?reset=1 to forget what was read): the
// summaries as a JSON array, for a load benchmark whose mock runs in another process.
func (s *Server) truthHandler(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.RecordTruth {
		http.Error(w, "mock: truth is not recorded (start the server with truth recording on)", http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, s.Summaries(r.URL.Query().Get("reset") == "1"))
}

// FetchSummaries reads GET <base>/mock/truth from a mock server in another process.
func FetchSummaries(ctx context.Context, c *http.Client, base string, reset bool) ([]Summary, error) {
	u := strings.TrimSuffix(base, "/") + "/mock/truth"
	if reset {
		u += "?reset=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	var out []Summary
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return out, nil
}
