package stats

import (
	"math"
	"time"

	"github.com/planrun/planrun/backends"
)

// Window is the measured wall-clock window of a run: first request start to last
// request end. Throughput and requests/s divide by its length.
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Seconds is the window's length in seconds.
func (w Window) Seconds() float64 { return w.End.Sub(w.Start).Seconds() }

// IsZero reports whether the window was left unset.
func (w Window) IsZero() bool { return w.Start.IsZero() && w.End.IsZero() }

// WindowOf derives the measured window from the samples themselves: the earliest Start
// to the latest Start+End. Failed requests count too: they occupied the window.
func WindowOf(samples []backends.Sample) Window {
	var w Window
	for i := range samples {
		s := &samples[i]
		end := s.Start.Add(s.End)
		if w.Start.IsZero() || s.Start.Before(w.Start) {
			w.Start = s.Start
		}
		if end.After(w.End) {
			w.End = end
		}
	}
	return w
}

// Target is what the workload asked for; Summarize holds the samples against it.
type Target struct {
	// PromptTokens is the requested input length (0: not stated).
	PromptTokens int
	// MaxTokens is the requested output length; a successful request that produced fewer
	// tokens is an early stop (0: not stated, no early stops counted).
	MaxTokens int
}

// Level is the summary of the requests of one concurrency level (one run, or all runs
// pooled). Times are in seconds, rates in per-second units. Distributions cover
// successful requests only; failures are counted by class.
type Level struct {
	Requests  int `json:"requests"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	// Failures counts failed requests by error class.
	Failures map[backends.ErrorClass]int `json:"failures,omitempty"`

	// WindowSeconds is the measured window the rates divide by.
	WindowSeconds float64 `json:"window_s"`

	TTFT Dist `json:"ttft_s"`
	// TPOT is (E2E − TTFT)/(output tokens − 1) per request (requests with > 1 token).
	TPOT Dist `json:"tpot_s"`
	// ITL pools the gaps between consecutive content chunks of every request.
	ITL Dist `json:"itl_s"`
	E2E Dist `json:"e2e_s"`
	// DecodeRate is the per-request decode rate, tokens/s after the first token.
	DecodeRate Dist `json:"decode_tok_s"`

	// OutputTokens is Σ output tokens of successful requests.
	OutputTokens int `json:"output_tokens"`
	// OutputTokS is OutputTokens / WindowSeconds.
	OutputTokS float64 `json:"output_tok_s"`
	// RequestsPerSec is successful requests / WindowSeconds.
	RequestsPerSec float64 `json:"requests_s"`

	// TokenSource is "usage", "server" or "chunks" when every successful request counted
	// its tokens the same way, "mixed" when they differ, "" when none succeeded.
	TokenSource string `json:"token_source"`
	// TokensPerChunk is Σ output tokens / Σ content chunks; above 1 the server coalesces
	// several tokens into one chunk (so ITL is not per-token latency).
	TokensPerChunk float64 `json:"tokens_per_chunk"`

	// PromptTokensRequested is Target.PromptTokens; PromptTokensActual is the mean of
	// the server-counted prompt tokens (NaN when the server counted none).
	PromptTokensRequested int     `json:"prompt_tokens_requested"`
	PromptTokensActual    float64 `json:"prompt_tokens_actual"`
	// EarlyStops counts successful requests that produced fewer than Target.MaxTokens.
	EarlyStops int `json:"early_stops"`
}

// Summarize computes a Level from the samples of one run. A zero window is derived
// from the samples (WindowOf).
func Summarize(samples []backends.Sample, w Window, t Target) Level {
	if w.IsZero() {
		w = WindowOf(samples)
	}
	a := newAccumulator(len(samples))
	for i := range samples {
		a.add(&samples[i], t)
	}
	return a.level(w.Seconds(), t)
}

// accumulator gathers the figures of many samples in one pass; level() derives the
// distributions once, so adding a sample is cheap.
type accumulator struct {
	l                          Level
	ttft, tpot, itl, e2e, rate []float64
	chunks                     int
	promptSum, promptN         int
	sources                    map[backends.TokenSource]bool
}

func newAccumulator(n int) *accumulator {
	return &accumulator{
		ttft: make([]float64, 0, n),
		tpot: make([]float64, 0, n),
		e2e:  make([]float64, 0, n),
		rate: make([]float64, 0, n),
	}
}

func (a *accumulator) add(s *backends.Sample, t Target) {
	a.l.Requests++
	if !s.OK() {
		a.l.Failed++
		if a.l.Failures == nil {
			a.l.Failures = map[backends.ErrorClass]int{}
		}
		a.l.Failures[s.Err.Class]++
		return
	}
	a.l.Succeeded++
	if d, ok := s.TTFT(); ok {
		a.ttft = append(a.ttft, d.Seconds())
	}
	if d, ok := s.TPOT(); ok {
		a.tpot = append(a.tpot, d.Seconds())
	}
	if r, ok := s.DecodeRate(); ok {
		a.rate = append(a.rate, r)
	}
	for i := 1; i < len(s.ChunkArrivals); i++ {
		a.itl = append(a.itl, (s.ChunkArrivals[i] - s.ChunkArrivals[i-1]).Seconds())
	}
	a.e2e = append(a.e2e, s.E2E().Seconds())
	a.l.OutputTokens += s.OutputTokens
	a.chunks += s.Chunks
	if s.PromptTokens > 0 {
		a.promptSum += s.PromptTokens
		a.promptN++
	}
	if t.MaxTokens > 0 && s.OutputTokens < t.MaxTokens {
		a.l.EarlyStops++
	}
	if s.TokenSource != "" {
		if a.sources == nil {
			a.sources = map[backends.TokenSource]bool{}
		}
		a.sources[s.TokenSource] = true
	}
}

func (a *accumulator) level(windowSeconds float64, t Target) Level {
	l := a.l
	l.WindowSeconds = windowSeconds
	l.TTFT = NewDist(a.ttft)
	l.TPOT = NewDist(a.tpot)
	l.ITL = NewDist(a.itl)
	l.E2E = NewDist(a.e2e)
	l.DecodeRate = NewDist(a.rate)
	l.OutputTokS = ratio(float64(l.OutputTokens), windowSeconds)
	l.RequestsPerSec = ratio(float64(l.Succeeded), windowSeconds)
	l.TokensPerChunk = ratio(float64(l.OutputTokens), float64(a.chunks))
	l.PromptTokensRequested = t.PromptTokens
	l.PromptTokensActual = ratio(float64(a.promptSum), float64(a.promptN))
	switch len(a.sources) {
	case 0:
	case 1:
		for s := range a.sources {
			l.TokenSource = string(s)
		}
	default:
		l.TokenSource = "mixed"
	}
	return l
}

// ratio is n/d, NaN when d is not positive (a figure that could not be measured).
func ratio(n, d float64) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return n / d
}
