package backends

import (
	"encoding/json"
	"strconv"
	"time"
)

// Request is one generation request, resolved from a plan cell. Adapters turn it into
// their wire format; the timing core sends it and measures the answer.
type Request struct {
	// ID identifies the request in raw output (e.g. "run2/req17").
	ID string
	// Model is the name the server knows the model by (the cell's model_id).
	Model string
	// Prompt is the full input text (user message for chat endpoints).
	Prompt string
	// MaxTokens caps the output length; 0 leaves it to the server.
	MaxTokens int
	// ForceMaxTokens asks the server to keep generating until MaxTokens (ignore_eos /
	// min_tokens / num_predict), where the backend allows it.
	ForceMaxTokens bool
	// Temperature and Seed are sent when set.
	Temperature *float64
	Seed        *int64
	// Greedy decodes by the logits' argmax alone: temperature 0 and no repetition
	// penalty (Ollama's repeat_penalty is 1.1 unless told), so each generated token is
	// its position's most likely one by the log-probabilities the server returns.
	Greedy bool
	// NoStream asks for the whole answer in one response (a workload's stream = false):
	// E2E and token counts are measured, TTFT and TPOT cannot be.
	NoStream bool
	// History is the conversation before Prompt (a session's earlier turns: user
	// prompts and the server's own answers, in order). Chat endpoints send it as
	// messages ahead of Prompt; a completions or generate endpoint cannot carry it.
	History []Message
	// ReasoningEffort is reasoning_effort ("low", "medium", "high", ...), sent where the
	// API takes it (Ollama's think takes it as a level); empty leaves the server's default.
	ReasoningEffort string
	// Think is Ollama's think switch (the Messages API's thinking); nil leaves the
	// server's default.
	Think *bool
	// Tools are the functions the model may call, and ToolChoice whether it must:
	// ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone or a tool's name ("" leaves it
	// to the server). A stream's calls are timed and checked against these (Sample.ToolCalls).
	Tools      []Tool
	ToolChoice string
	// Inputs are the texts of an embeddings request (a backend with api "embeddings").
	Inputs []string
	// TopLogProbs, when > 0, asks for each generated token's log-probability with this
	// many of the most likely tokens at its position (Ollama's and OpenAI's logprobs and
	// top_logprobs; Sample.LogProbs). 0 asks for none: the stream then carries none and
	// the per-chunk path does no extra work.
	TopLogProbs int
	// PromptLogProbs, when > 0, asks for the prompt's own tokens' log-probabilities with
	// this many alternatives each (vLLM's prompt_logprobs, an engine extension, on
	// /v1/completions; Sample.PromptLogProbs). vLLM gives them only unstreamed (NoStream).
	PromptLogProbs int
	// PromptIDs, when set, is the prompt as token ids, sent in place of Prompt where the
	// API takes ids (OpenAI's /v1/completions): a text does not always tokenize back into
	// the tokens it was decoded from.
	PromptIDs []int
	// TokenIDs asks the server to name log-probabilities' tokens by id (vLLM's
	// return_tokens_as_token_ids, an engine extension): "token_id:N".
	TokenIDs bool
	// Raw sends Prompt as it is, with no chat template, whatever the backend's api:
	// Ollama's /api/generate with raw, an OpenAI server's /v1/completions. What a
	// continuation of a text needs.
	Raw bool
	// KeepText asks the timing core to keep the answer's content text (not reasoning)
	// on Sample.Text: what a session's next turn sends back as history. Off, the
	// per-chunk path does no extra work.
	KeepText bool
	// Due, when set, takes the request's start stamp on the core's clock: the timing
	// core calls it once the request is built (its body encoded, its HTTP request
	// made), and a paced request waits there for its send time and its turn, so building
	// it never makes it late and a burst's stamps keep its order. Backends whose Do
	// honours it say so (DueCaller); for others the caller waits before Do.
	Due func(Clock) time.Time `json:"-"`
	// Wrote, when set, is called once the request has gone out: written (httptrace's
	// WroteRequest, when net/http has the whole request in the connection's write buffer,
	// which it flushes to the socket next; a body larger than the buffer is mostly on the
	// socket by then), or its sending failed. A DueCaller calls it after Due; a paced
	// request holds the next one of a later time back until then, so the server sees them
	// in order.
	Wrote func() `json:"-"`
	// Turn, when set with Due, has the request sent before its time, its first write
	// held on its connection for the pacer to make at its time (see Turn): Due is then
	// called only where the connection cannot hold it, or the request never got to
	// write. Wrote is called once that write is made.
	Turn Turn `json:"-"`
}

// Message is one chat message of a conversation. (Content comes first so the wire
// format stays what it was when messages were maps: keys in sorted order.)
type Message struct {
	Content string `json:"content"`
	Role    string `json:"role"` // RoleUser, RoleAssistant or RoleTool
	// ToolCalls are the calls an assistant message made (an agent loop's step), sent back
	// as the model made them. Each adapter writes them in its protocol's shape
	// (ToolMessages), never as these fields.
	ToolCalls []ToolCall `json:"-"`
	// ToolCallID and ToolName name the call a RoleTool message is the result of.
	ToolCallID string `json:"-"`
	ToolName   string `json:"-"`
}

// The roles of a conversation's messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool is a tool's result, answering an assistant message's call.
	RoleTool = "tool"
)

// Messages is the chat messages of req: its History, then Prompt as the user's message;
// a history that ends in tools' results (an agent loop's next step) with no Prompt is
// sent as it is, for the model to go on from them.
func (r *Request) Messages() []Message {
	out := make([]Message, 0, len(r.History)+1)
	out = append(out, r.History...)
	if r.Prompt == "" && len(r.History) > 0 && r.History[len(r.History)-1].Role == RoleTool {
		return out
	}
	return append(out, Message{Role: RoleUser, Content: r.Prompt})
}

// WireMessages is r's messages as a chat body carries them: the plain {content, role}
// pairs, unless one is a tool call or a tool's result, which each protocol writes in its
// own shape: then every message as wire makes it from its place in the conversation.
func WireMessages[T any](r Request, wire func(i int, m Message) T) any {
	msgs := r.Messages()
	if !toolMessages(msgs) {
		return msgs
	}
	out := make([]T, len(msgs))
	for i, m := range msgs {
		out[i] = wire(i, m)
	}
	return out
}

// toolMessages reports whether msgs carry a tool call or a tool's result.
func toolMessages(msgs []Message) bool {
	for i := range msgs {
		if len(msgs[i].ToolCalls) > 0 || msgs[i].Role == RoleTool {
			return true
		}
	}
	return false
}

// CallID is the id a call is answered under: the server's own, else one made from the
// call's place in the conversation (Ollama's calls carry none).
func (tc *ToolCall) CallID(msg int) string {
	if tc.ID != "" {
		return tc.ID
	}
	return "call_" + strconv.Itoa(msg) + "_" + strconv.Itoa(tc.Index)
}

// ArgsObject is the call's arguments as a JSON object for a protocol that takes them as
// one (Ollama, the Messages API): "{}" when they do not parse as one.
func (tc *ToolCall) ArgsObject() json.RawMessage {
	if tc.ArgsJSON && tc.Args != "" {
		return json.RawMessage(tc.Args)
	}
	return json.RawMessage("{}")
}

// TokenSource says where Sample.OutputTokens came from.
type TokenSource string

const (
	// TokensUsage: the OpenAI-style usage object (usage.completion_tokens).
	TokensUsage TokenSource = "usage"
	// TokensServer: a server-native count (Ollama's eval_count).
	TokensServer TokenSource = "server"
	// TokensChunks: the server reported no count; content chunks were counted instead.
	TokensChunks TokenSource = "chunks"
)

// ErrorClass is the kind of failure of one request. The empty class means success.
type ErrorClass string

const (
	ErrNone         ErrorClass = ""
	ErrMissingKey   ErrorClass = "missing_key" // the api_key_env variable is unset
	ErrRefused      ErrorClass = "refused"     // connection refused / unreachable
	ErrUnauthorized ErrorClass = "401"         // bad or missing key
	ErrForbidden    ErrorClass = "403"         // key not allowed
	ErrNotFound     ErrorClass = "404"         // unknown model or endpoint
	ErrRateLimited  ErrorClass = "429"         // rate limited (RetryAfter kept)
	ErrHTTP4xx      ErrorClass = "4xx"         // other client errors
	ErrServer       ErrorClass = "5xx"         // server errors
	ErrStreamCut    ErrorClass = "stream_cut"  // body ended before the stream was complete
	ErrMalformed    ErrorClass = "malformed"   // a chunk that does not decode
	ErrTimeout      ErrorClass = "timeout"     // connect / first token / idle / total (see Error.Phase)
	ErrCanceled     ErrorClass = "canceled"    // the run was interrupted
	ErrServerDied   ErrorClass = "server_died" // a plan-managed server exited mid-cell
	ErrOther        ErrorClass = "other"
)

// Error is a failed request's failure, recorded on its Sample: errors are data.
type Error struct {
	Class ErrorClass `json:"class"`
	// Phase narrows timeouts: "connect", "first_token", "idle", "total".
	Phase string `json:"phase,omitempty"`
	// Status is the HTTP status, when there was one.
	Status int `json:"status,omitempty"`
	// RetryAfter is the server's Retry-After header, verbatim (429/503).
	RetryAfter string `json:"retry_after,omitempty"`
	// Message is what a person can act on. It never contains an API key.
	Message string `json:"message"`
}

func (e *Error) Error() string { return string(e.Class) + ": " + e.Message }

// ServerTimings are the server's own figures, when it reports them (Ollama's done line).
type ServerTimings struct {
	LoadDuration       time.Duration `json:"load_ns,omitempty"`
	PromptEvalCount    int           `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration time.Duration `json:"prompt_eval_ns,omitempty"`
	EvalCount          int           `json:"eval_count,omitempty"`
	EvalDuration       time.Duration `json:"eval_ns,omitempty"`
	TotalDuration      time.Duration `json:"total_ns,omitempty"`
}

// Sample is the measurement of one request: exactly one per attempt, success or not.
// All offsets are from Start (the moment the request starts being written).
type Sample struct {
	ID    string    `json:"id"`
	Start time.Time `json:"start"`

	// ResponseID is the server's id for the response (OpenAI's "id", e.g. chatcmpl-…)
	// and RequestID its X-Request-Id header, where sent: what finds the request in the
	// server's log.
	ResponseID string `json:"response_id,omitempty"`
	RequestID  string `json:"x_request_id,omitempty"`

	// Phases from net/http/httptrace. Connect is when a new connection was ready (dial,
	// TLS): zero when a pooled one was reused, or when a paced request with a Turn found
	// it ready before its time (it delayed nothing of it). Wrote is when the request was
	// fully written (WroteRequest: into net/http's connection buffer, flushed to the
	// socket next), or, for a request whose first write its Turn held, when that write
	// returned, if later; Wrote − Connect is the client's own send delay (SendDelay).
	// Headers, then FirstByte and FirstToken split the rest into network and server
	// time.
	Connect   time.Duration `json:"connect_ns,omitempty"`
	Wrote     time.Duration `json:"wrote_ns,omitempty"`
	Headers   time.Duration `json:"headers_ns,omitempty"`    // response headers received
	FirstByte time.Duration `json:"first_byte_ns,omitempty"` // first byte of the response
	// FirstToken is the arrival of the first chunk carrying generated content (TTFT):
	// reasoning or answer, whichever came first.
	FirstToken time.Duration `json:"first_token_ns,omitempty"`
	// FirstAnswer is the arrival of the first chunk carrying answer content, not
	// reasoning (TTFO, time to first output token); FirstToken when the model does not
	// reason.
	FirstAnswer time.Duration `json:"first_answer_ns,omitempty"`
	// End is the arrival of the last content chunk, or the end of the stream when later
	// chunks carried no content (E2E).
	End time.Duration `json:"end_ns"`
	// BodyEnd is when the timing core was done with the response: its body read to the
	// end (a gateway's usage chunk and [DONE] after the last token included) and closed,
	// or the request given up. A closed loop's slot is held until here, so the request
	// counts as in flight until here; never before End.
	BodyEnd time.Duration `json:"body_end_ns,omitempty"`
	// ChunkArrivals holds the arrival offset of every content chunk, in order (reasoning
	// chunks included: they are generated tokens).
	ChunkArrivals []time.Duration `json:"chunk_arrivals_ns,omitempty"`
	// KernelStamps says chunk arrivals are the kernel's receive timestamps of the
	// socket (SO_TIMESTAMPNS) rather than the moment planrun's reader ran.
	KernelStamps bool `json:"kernel_stamps,omitempty"`

	OutputTokens int         `json:"output_tokens"`
	TokenSource  TokenSource `json:"token_source,omitempty"`
	PromptTokens int         `json:"prompt_tokens,omitempty"` // as the server counted them
	// CachedTokens is the part of PromptTokens the server's prefix cache served, as its
	// usage says (prompt_tokens_details.cached_tokens, cache_read_input_tokens); 0 when
	// it says none.
	CachedTokens int `json:"cached_tokens,omitempty"`
	Chunks       int `json:"chunks"` // content chunks
	// ReasoningChunks / ReasoningTokens count reasoning (reasoning_content, reasoning,
	// Ollama's thinking) apart from content; ReasoningTokenSource says where the count
	// came from: TokensUsage for usage.completion_tokens_details.reasoning_tokens,
	// TokensChunks when the server gave none and reasoning chunks were counted.
	ReasoningChunks      int         `json:"reasoning_chunks,omitempty"`
	ReasoningTokens      int         `json:"reasoning_tokens,omitempty"`
	ReasoningTokenSource TokenSource `json:"reasoning_token_source,omitempty"`
	TextBytes            int         `json:"text_bytes"`
	ReasoningBytes       int         `json:"reasoning_bytes,omitempty"` // reasoning text length, apart from TextBytes
	FinishReason         string      `json:"finish_reason,omitempty"`   // "stop", "length", ...
	// Slot is the closed-loop worker that sent the request, from 1 (the executor's): the
	// gap between one request's BodyEnd and the next Start in one slot is the client's own
	// turnaround. 0 for paced and session requests.
	Slot int `json:"slot,omitempty"`
	// Model is the model name a workload's model mix sent the request to; empty without
	// a mix (the row's model_id).
	Model string `json:"model,omitempty"`
	// Inputs is the number of embeddings the server returned (embeddings requests).
	Inputs int `json:"inputs,omitempty"`
	// MaxTokens is the request's own output length when it had one drawn (a length
	// distribution or a dataset); 0 when it was the level's.
	MaxTokens int `json:"max_tokens,omitempty"`
	// PromptTokensAsked is the prompt length the request was built to when it had its
	// own (a trace row's input length, a drawn length); 0 when it was the level's.
	PromptTokensAsked int `json:"prompt_tokens_asked,omitempty"`
	// ToolChunks counts the events that carried part of a tool call (its name or a
	// fragment of its arguments): generated output like content chunks, in
	// ChunkArrivals, apart from Chunks.
	ToolChunks int `json:"tool_chunks,omitempty"`
	// ToolCalls are the tool calls of the answer, in order; ToolsOffered is how many
	// tools the request offered (Request.Tools).
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	ToolsOffered int        `json:"tools_offered,omitempty"`
	// Text is the answer's content (reasoning apart), kept only when the request asked
	// (Request.KeepText); it stays out of requests.jsonl.
	Text string `json:"-"`
	// LogProbs are the generated tokens' log-probabilities, in order, where the request
	// asked (Request.TopLogProbs); PromptLogProbs the prompt's (Request.PromptLogProbs),
	// one per prompt token, the first empty (no token precedes it), each position's Top
	// holding every token the server returned there, ranked (the prompt's own token
	// among them). Both stay out of requests.jsonl.
	LogProbs       []TokenLogProbs `json:"-"`
	PromptLogProbs []TokenLogProbs `json:"-"`
	// Unstreamed marks a non-streamed request: its one arrival is the whole answer, so it
	// has no TTFT, TPOT or ITL (never the answer's end passed off as a first token).
	Unstreamed bool `json:"unstreamed,omitempty"`

	Server *ServerTimings `json:"server,omitempty"`
	Err    *Error         `json:"error,omitempty"`
}

// OK reports whether the request succeeded.
func (s *Sample) OK() bool { return s.Err == nil }

// TTFT is the time to the first content chunk; ok is false when none arrived. Reasoning
// chunks are generated tokens too (usage.completion_tokens counts them), so a reasoning
// model's first token is its first reasoning chunk.
func (s *Sample) TTFT() (d time.Duration, ok bool) {
	return s.FirstToken, s.Chunks+s.ReasoningChunks+s.ToolChunks > 0 && !s.Unstreamed
}

// TTFO is the time to the first answer chunk (time to first output token, reasoning
// excluded; a tool call's first part is output); ok is false when no answer content
// arrived.
func (s *Sample) TTFO() (d time.Duration, ok bool) {
	return s.FirstAnswer, s.Chunks+s.ToolChunks > 0 && !s.Unstreamed
}

// ReasoningSpan is the time from the first token to the first answer token: how long
// the model reasoned before it began its answer. ok is false unless both arrived and
// reasoning came first.
func (s *Sample) ReasoningSpan() (d time.Duration, ok bool) {
	if s.ReasoningChunks == 0 || s.Chunks+s.ToolChunks == 0 || s.Unstreamed {
		return 0, false
	}
	return s.FirstAnswer - s.FirstToken, true
}

// AnswerTokens is the output tokens that were answer, not reasoning.
func (s *Sample) AnswerTokens() int { return max(s.OutputTokens-s.ReasoningTokens, 0) }

// SendDelay is the client's own delay in sending: from the start stamp to the request
// fully written, less connection set-up. ok is false when the request was never written.
func (s *Sample) SendDelay() (d time.Duration, ok bool) {
	if s.Wrote <= 0 {
		return 0, false
	}
	return max(s.Wrote-s.Connect, 0), true
}

// E2E is request start to the last content chunk (or end of stream).
func (s *Sample) E2E() time.Duration { return s.End }

// TPOT is vLLM's time per output token: (E2E − TTFT) / (output tokens − 1), defined only
// when more than one token was produced.
func (s *Sample) TPOT() (d time.Duration, ok bool) {
	if s.OutputTokens <= 1 || s.Chunks+s.ReasoningChunks+s.ToolChunks == 0 || s.Unstreamed {
		return 0, false
	}
	return (s.End - s.FirstToken) / time.Duration(s.OutputTokens-1), true
}

// AnswerTPOT is TPOT over the answer alone: (E2E − TTFO) / (answer tokens − 1), defined
// when more than one answer token was produced. Without reasoning it equals TPOT.
func (s *Sample) AnswerTPOT() (d time.Duration, ok bool) {
	n := s.AnswerTokens()
	if n <= 1 || s.Chunks+s.ToolChunks == 0 || s.Unstreamed {
		return 0, false
	}
	return (s.End - s.FirstAnswer) / time.Duration(n-1), true
}

// ITL returns the gaps between consecutive content chunks (inter-chunk latency). With a
// server that coalesces several tokens into one chunk this is not per-token latency.
func (s *Sample) ITL() []time.Duration {
	if len(s.ChunkArrivals) < 2 {
		return nil
	}
	gaps := make([]time.Duration, len(s.ChunkArrivals)-1)
	for i := 1; i < len(s.ChunkArrivals); i++ {
		gaps[i-1] = s.ChunkArrivals[i] - s.ChunkArrivals[i-1]
	}
	return gaps
}

// DecodeRate is the per-request decode rate in tokens/s after the first token:
// (output tokens − 1) / (E2E − TTFT).
func (s *Sample) DecodeRate() (tokPerSec float64, ok bool) {
	d, ok := s.TPOT()
	if !ok || d <= 0 {
		return 0, false
	}
	return float64(time.Second) / float64(d), true
}
