package mockserver

import (
	"sort"
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
	Admitted time.Time // queue slot held (zero if the request never got one)

	PromptTokens int
	OutputTokens int
	FinishReason string
	// Chunks are the content chunks in order. A non-streaming response is one chunk.
	Chunks []ChunkTruth
	// Complete is true when the stream ended the way the protocol ends it ([DONE], or
	// Ollama's done line).
	Complete bool
	// Canceled is true when the client went away before the end.
	Canceled bool
}

// ChunkTruth is one content chunk: how many tokens it carried, when the schedule said it
// was due, and when the flush that wrote it returned.
type ChunkTruth struct {
	Tokens  int
	Due     time.Time
	Written time.Time
}

// TTFT is the truth for a client's TTFT: request received to first content chunk written.
func (t *Truth) TTFT() (time.Duration, bool) {
	if len(t.Chunks) == 0 {
		return 0, false
	}
	return t.Chunks[0].Written.Sub(t.Received), true
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
