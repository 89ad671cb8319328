package backends

import (
	"bufio"
	"context"
	"net/http"
)

// Chunk is what a decoder yields for one stream event (an SSE event or an NDJSON line).
// It holds lengths and counts, never the text, so decoding allocates nothing.
type Chunk struct {
	// Text is the byte length of generated content in this event (0 for a role-only
	// chunk, an empty delta or a usage-only chunk: those are not tokens).
	Text int
	// Content is the raw (still JSON-escaped) bytes of the event's generated content, not
	// reasoning, valid only until the decoder's next Next: the core copies them when a
	// request keeps its text (Request.KeepText). When several fields of one event carry
	// content (several choices), it is the last of them.
	Content []byte
	// Reasoning is the byte length of reasoning content (reasoning_content, Ollama's
	// thinking); it is generated output too, counted apart.
	Reasoning int
	// FinishReason is set on the event that ends generation ("stop", "length", ...).
	FinishReason string
	// Done marks the stream's own end marker: SSE [DONE] or Ollama's done line.
	Done bool
	// Tokens is non-empty when the event carries the server's counts below:
	// TokensUsage for an OpenAI usage object, TokensServer for Ollama's eval_count.
	Tokens          TokenSource
	PromptTokens    int
	OutputTokens    int
	ReasoningTokens int
	// CachedTokens is the part of PromptTokens the server's prefix cache served
	// (OpenAI's prompt_tokens_details.cached_tokens, the Messages API's
	// cache_read_input_tokens), set with Tokens.
	CachedTokens int
	// Tools are the event's parts of tool calls (an OpenAI delta can carry several calls'),
	// none when it carries none; valid until the decoder's next Next.
	Tools []ToolPart
	// Server holds Ollama's done-line timings; nil otherwise.
	Server *ServerTimings
	// Inputs is the number of embeddings an embeddings response returned.
	Inputs int
	// LogProbs are the log-probabilities of the tokens this event generated, and
	// PromptLogProbs the prompt's (Sample's fields of the same names), where the request
	// asked for them; nil otherwise, so an event without them costs nothing more.
	LogProbs, PromptLogProbs []TokenLogProbs
}

// Decoder turns a response body into chunks. Next fills c (which the caller has zeroed)
// with the next event and returns io.EOF at the end of the body. Any other error ends
// the stream; a *Error keeps its class (ErrMalformed, ErrServer for an error event).
type Decoder interface {
	Next(c *Chunk) error
}

// WholeDecoder is an Adapter whose non-streamed responses (Request.NoStream) need a
// decoder of their own; it yields the whole answer as one chunk. An adapter whose
// streaming decoder also reads the whole answer (Ollama's NDJSON) need not implement it.
type WholeDecoder interface {
	NewWholeDecoder(r *bufio.Reader) Decoder
}

// ResponseIDer is a Decoder that reads the server's id for the response from the
// stream (OpenAI's "id"); the core records it on the Sample after the stream ends, so
// the per-chunk path does not carry it.
type ResponseIDer interface {
	ResponseID() string
}

// Adapter is what a backend gives the timing core: how to build the HTTP request and how
// to read the stream. The core sends, times and classifies.
type Adapter interface {
	// NewRequest builds the streaming HTTP request for req, with ctx attached. An error
	// of type *Error keeps its class; any other becomes ErrOther.
	NewRequest(ctx context.Context, req Request) (*http.Request, error)
	// NewDecoder wraps the buffered response body.
	NewDecoder(r *bufio.Reader) Decoder
	// Explain adds what only the adapter knows to a failed request's error, e.g. the
	// server's model list on a 404. ctx is the caller's, not the timed-out request's.
	Explain(ctx context.Context, e *Error, req Request)
}
