// Package mockserver is a scriptable LLM-serving server with known timing. It speaks the
// OpenAI-compatible protocol the way vLLM writes it and the Ollama protocol the way Ollama
// writes it, emits tokens on a precise schedule (TTFT, TPOT, jitter, coalescing, queue
// slots), injects faults deterministically from a seed, and records when it wrote every
// chunk so a client's measurements can be checked against the truth.
package mockserver

import (
	"fmt"
	"time"
)

// Config scripts the server. The zero value is usable: instant tokens, 128 of them, one
// per chunk, any model accepted, no faults.
type Config struct {
	// TTFT is the time from admission (request received, and a queue slot held) to the
	// write of the first content chunk.
	TTFT time.Duration
	// TPOT is the gap between consecutive tokens. Token i (from 0) is due at
	// TTFT + i*TPOT, so vLLM's TPOT = (E2E − TTFT)/(tokens − 1) recovers it exactly.
	TPOT time.Duration
	// ModelTimings give the named models their own TTFT and TPOT in place of the two
	// above, as a gateway routing each name to its own server would (or LoRA adapters of
	// different cost); nil: every model has TTFT and TPOT.
	ModelTimings map[string]Timing
	// Phases change TTFT and TPOT part way through: from request number From on (the
	// server numbers generation requests from 1 as they arrive), the phase's timing in
	// place of the two above, the last phase begun winning, as a server another tenant
	// starts sharing during a benchmark. ModelTimings still win for their models.
	Phases []Phase
	// Jitter adds a uniform offset in [−Jitter, +Jitter] to TTFT and to every token gap,
	// drawn from Seed and the request number (gaps never go below zero).
	Jitter time.Duration
	// TokensPerChunk coalesces tokens like a real server's stream interval: the first
	// chunk carries one token, each later chunk up to TokensPerChunk, written when its
	// last token is due. 0 means 1.
	TokensPerChunk int
	// OutputTokens is the length when the request sets no max_tokens / num_predict.
	// 0 means 128.
	OutputTokens int
	// EndDelay holds the stream's end (OpenAI's usage chunk and [DONE], Ollama's done
	// line) back this long after the last content chunk, as a gateway in front of the
	// engine (LiteLLM) does: the response is not over at its last token. 0: none.
	EndDelay time.Duration
	// EOSAt makes the "model" stop by itself after this many tokens (finish_reason
	// "stop") unless the request caps it lower or sets ignore_eos. 0: never.
	EOSAt int
	// QueueSlots bounds how many requests decode at once; others wait (and their TTFT
	// grows), as on a real server. 0: unbounded.
	QueueSlots int
	// Models are the names served; a request for another gets 404 with the list. Empty
	// accepts any model name: the listings show "mock", and /v1/models a wildcard "*" too.
	Models []string
	// APIKey, when set, is required as "Authorization: Bearer <key>" on /v1/* (as vLLM's
	// --api-key does; the Messages API's "x-api-key: <key>" too); otherwise 401.
	APIKey string
	// Faults are per-request fault rates.
	Faults Faults
	// Seed makes jitter and fault choice repeatable.
	Seed uint64
	// RecordTruth keeps a Truth (chunk write times) per request, read with Server.Truth.
	// Off by default so a long-running server does not grow without bound.
	RecordTruth bool
	// PrefillPerToken adds prefill time to TTFT: this much per prompt token (the mock's
	// count, words) that the prefix cache does not hold; every token without PrefixCache.
	PrefillPerToken time.Duration
	// PrefixCache keeps the word prefixes of every prompt received: a prompt's leading
	// words that an earlier prompt began with are cached (Truth.CachedTokens), and cost
	// no prefill, as on a server with prefix caching. The usage then says how many
	// (prompt_tokens_details.cached_tokens; the Messages API's cache_read_input_tokens
	// always), and POST /reset_prefix_cache empties it.
	PrefixCache bool
	// Version is what /version and /api/version report; empty means Version(). A test of
	// results across time sets it to play a server upgrade.
	Version string
	// ReasoningTokens makes the first this many tokens of every chat answer (and
	// Ollama generate answer) reasoning: sent as the delta's ReasoningField (Ollama:
	// "thinking"), the rest as content, a chunk that straddles the two carrying both, as
	// vLLM's reasoning parsers do. 0: no reasoning.
	ReasoningTokens int
	// ReasoningField names the OpenAI delta field of reasoning: "reasoning_content"
	// (DeepSeek's, vLLM's before 0.10; the default) or "reasoning".
	ReasoningField string
	// ReasoningUsage adds usage.completion_tokens_details.reasoning_tokens (OpenAI's);
	// off, the usage counts all output tokens together, as vLLM's does.
	ReasoningUsage bool
	// ToolCallRate is the share of streamed chat requests offering tools with
	// tool_choice auto (or none given) whose answer is a call of the first tool, drawn
	// from Seed and the request number; "required", "any" or a named tool always call
	// (the named one), "none" never. A call's generated tokens are its arguments'
	// value, {"<first string property>":"<tokens>"}, on the same schedule as text. 0: an
	// auto request answers in text.
	ToolCallRate float64
	// ToolCalls scripts an agent loop: a streamed chat request offering tools whose
	// conversation carries fewer than ToolCalls tools' results since its last user
	// prompt (tool role messages, the Messages API's tool_result blocks) calls a tool, whatever tool_choice says short of
	// "none"; one that carries ToolCalls answers in text. So a loop that answers every
	// call takes ToolCalls + 1 steps. 0: ToolCallRate and tool_choice decide.
	ToolCalls int
	// HoldBytes is memory the server allocates and keeps resident from New on, standing
	// for a model's weights, so a memory figure read from its process (locally, through a
	// process exporter, or as a Slurm job's MaxRSS) has a known part. 0: none.
	HoldBytes int64

	// clock is replaced in tests so golden streams carry fixed timestamps.
	clock clock
}

// Timing is one model's scripted TTFT and TPOT (Config.ModelTimings).
type Timing struct{ TTFT, TPOT time.Duration }

// Phase is the timing from request number From on (Config.Phases).
type Phase struct {
	From uint64
	Timing
}

// Faults are the probabilities (0..1, summing to at most 1) that a generation request
// fails in each way. Which request gets which fault follows from Config.Seed and the
// request number alone (see FaultFor).
type Faults struct {
	Forbidden   float64 // 403
	NotFound    float64 // 404 (as if the model were unknown)
	RateLimited float64 // 429 with Retry-After
	Internal    float64 // 500
	Unavailable float64 // 503 with Retry-After
	StreamCut   float64 // connection closed after AfterChunks chunks
	Malformed   float64 // a chunk that is not valid JSON, after AfterChunks chunks
	Stall       float64 // no bytes for StallFor, after AfterChunks chunks
	// AfterChunks is where mid-stream faults strike (content chunks written before).
	// 0 means 2.
	AfterChunks int
	// StallFor is the length of a stall. 0 means 10s.
	StallFor time.Duration
	// RetryAfter is the Retry-After header on 429 and 503. Empty means "1".
	RetryAfter string
}

// Fault is the failure chosen for one request; FaultNone is success.
type Fault string

// The faults, named as a client classifies them.
const (
	FaultNone        Fault = ""
	FaultForbidden   Fault = "403"
	FaultNotFound    Fault = "404"
	FaultRateLimited Fault = "429"
	FaultInternal    Fault = "500"
	FaultUnavailable Fault = "503"
	FaultStreamCut   Fault = "stream_cut"
	FaultMalformed   Fault = "malformed"
	FaultStall       Fault = "stall"
)

// ParseFault reads a fault name as written by Fault's constants.
func ParseFault(s string) (Fault, error) {
	switch f := Fault(s); f {
	case FaultNone, FaultForbidden, FaultNotFound, FaultRateLimited, FaultInternal,
		FaultUnavailable, FaultStreamCut, FaultMalformed, FaultStall:
		return f, nil
	}
	return FaultNone, fmt.Errorf("unknown fault %q", s)
}

// midStream reports whether the fault strikes after the response has begun.
func (f Fault) midStream() bool {
	return f == FaultStreamCut || f == FaultMalformed || f == FaultStall
}

// withDefaults fills the zero fields with their documented defaults.
func (c Config) withDefaults() Config {
	if c.TokensPerChunk <= 0 {
		c.TokensPerChunk = 1
	}
	if c.OutputTokens <= 0 {
		c.OutputTokens = 128
	}
	if c.Faults.AfterChunks <= 0 {
		c.Faults.AfterChunks = 2
	}
	if c.Faults.StallFor <= 0 {
		c.Faults.StallFor = 10 * time.Second
	}
	if c.Faults.RetryAfter == "" {
		c.Faults.RetryAfter = "1"
	}
	if c.clock == nil {
		c.clock = realClock{}
	}
	if c.ReasoningField == "" {
		c.ReasoningField = "reasoning_content"
	}
	return c
}

// Validate reports the first nonsensical setting.
func (c Config) Validate() error {
	if c.TTFT < 0 || c.TPOT < 0 || c.Jitter < 0 {
		return fmt.Errorf("ttft, tpot and jitter must not be negative")
	}
	for m, t := range c.ModelTimings {
		if t.TTFT < 0 || t.TPOT < 0 {
			return fmt.Errorf("model %q: ttft and tpot must not be negative", m)
		}
	}
	for _, p := range c.Phases {
		if p.TTFT < 0 || p.TPOT < 0 {
			return fmt.Errorf("phase from request %d: ttft and tpot must not be negative", p.From)
		}
	}
	if c.EOSAt < 0 || c.QueueSlots < 0 || c.TokensPerChunk < 0 || c.OutputTokens < 0 || c.ReasoningTokens < 0 || c.HoldBytes < 0 {
		return fmt.Errorf("eos-at, queue slots, tokens per chunk, output and reasoning tokens, and held memory must not be negative")
	}
	if c.ToolCalls < 0 {
		return fmt.Errorf("tool calls %d is negative", c.ToolCalls)
	}
	if c.ToolCallRate < 0 || c.ToolCallRate > 1 {
		return fmt.Errorf("tool call rate %g is not in [0, 1]", c.ToolCallRate)
	}
	switch c.ReasoningField {
	case "", "reasoning_content", "reasoning":
	default:
		return fmt.Errorf("reasoning field %q is not reasoning_content or reasoning", c.ReasoningField)
	}
	return c.Faults.validate()
}

// validate reports a fault rate that is not a probability, or rates that sum past 1.
func (f Faults) validate() error {
	sum := 0.0
	for _, r := range f.rates() {
		if r.p < 0 || r.p > 1 {
			return fmt.Errorf("fault rate %s = %g is not in [0, 1]", r.f, r.p)
		}
		sum += r.p
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("fault rates sum to %g, more than 1", sum)
	}
	return nil
}

type faultRate struct {
	f Fault
	p float64
}

// rates lists the fault rates in a fixed order, so the choice for a request number never
// depends on map order.
func (f Faults) rates() [8]faultRate {
	return [8]faultRate{
		{FaultForbidden, f.Forbidden}, {FaultNotFound, f.NotFound},
		{FaultRateLimited, f.RateLimited}, {FaultInternal, f.Internal},
		{FaultUnavailable, f.Unavailable}, {FaultStreamCut, f.StreamCut},
		{FaultMalformed, f.Malformed}, {FaultStall, f.Stall},
	}
}

// FaultFor is the fault that request number n (from 1, in arrival order of generation
// requests) gets under seed: a pure function, so tests can predict it.
func (f Faults) FaultFor(seed, n uint64) Fault {
	u := unitFloat(mix(seed, n, 0x6661756c74)) // "fault"
	acc := 0.0
	for _, r := range f.rates() {
		acc += r.p
		if r.p > 0 && u < acc {
			return r.f
		}
	}
	return FaultNone
}

// mix is splitmix64 over (seed, n, stream): a cheap, well-spread hash so that nearby
// request numbers get independent draws.
func mix(seed, n, stream uint64) uint64 {
	z := seed ^ (n * 0x9e3779b97f4a7c15) ^ (stream * 0xbf58476d1ce4e5b9)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unitFloat maps a hash to [0, 1).
func unitFloat(x uint64) float64 { return float64(x>>11) / (1 << 53) }
