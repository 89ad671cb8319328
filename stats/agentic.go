package stats

import "github.com/planrun/planrun/backends"

// Agentic are the figures of requests that offer tools, and of the prompt tokens the
// server's prefix cache served.
type Agentic struct {
	// ToolCalls is the successful requests whose answer called a tool, ToolCallsValid
	// those whose every call was complete, with arguments that parse as JSON and match
	// the offered tool's schema. ToolCallRatePct is ToolCalls' share of the successful
	// requests that offered tools, ToolCallValidPct ToolCallsValid's share of
	// ToolCalls, in %; NaN with nothing to share. Their intervals are Clopper–Pearson at
	// the row's confidence, in %.
	ToolRequests     int      `json:"tool_requests,omitempty"`
	ToolCalls        int      `json:"tool_calls,omitempty"`
	ToolCallsValid   int      `json:"tool_calls_valid,omitempty"`
	ToolCallRatePct  float64  `json:"tool_call_rate_pct"`
	ToolCallValidPct float64  `json:"tool_call_valid_pct"`
	ToolCallRateCI   Interval `json:"tool_call_rate_ci"`
	ToolCallValidCI  Interval `json:"tool_call_valid_ci"`
	// ToolCallFirst is the time from a request's start to its first call's first part
	// (its name, or its first argument fragment), ToolCallDone to that call complete, over
	// the requests that called a tool (streamed).
	ToolCallFirst Dist `json:"tool_call_first_s"`
	ToolCallDone  Dist `json:"tool_call_done_s"`
	// CachedTokens is Σ prompt tokens the server said its prefix cache served
	// (cached_tokens, cache_read_input_tokens) over the successful requests whose prompt
	// it counted, and CacheHitPct their share of those prompts' tokens, in %; NaN when
	// no request's prompt was counted. CacheReported says whether any request's usage
	// carried a cached count at all (a server that reports none is not a 0% hit rate).
	CachedTokens  int     `json:"cached_tokens"`
	CacheHitPct   float64 `json:"cache_hit_pct"`
	CacheReported bool    `json:"cache_reported,omitempty"`
}

// agenticStore accumulates Agentic's figures.
type agenticStore struct {
	first, done valueStore
	reported    bool
}

// addAgentic counts a successful request's tool calls and cached tokens.
func (a *Accumulator) addAgentic(s *backends.Sample) {
	if counted(s) {
		a.l.CachedTokens += s.CachedTokens
		a.agentic.reported = a.agentic.reported || s.CachedTokens > 0
	}
	if s.ToolsOffered == 0 {
		return
	}
	a.l.ToolRequests++
	if !s.ToolCalled() {
		return
	}
	a.l.ToolCalls++
	if s.ToolCallValid() {
		a.l.ToolCallsValid++
	}
	if first, done, ok := s.ToolCallTimes(); ok {
		a.agentic.first.add(first.Seconds())
		a.agentic.done.add(done.Seconds())
	}
}

// mergeAgentic adds o's figures to a's.
func (a *Accumulator) mergeAgentic(o *Accumulator) {
	a.l.ToolRequests += o.l.ToolRequests
	a.l.ToolCalls += o.l.ToolCalls
	a.l.ToolCallsValid += o.l.ToolCallsValid
	a.l.CachedTokens += o.l.CachedTokens
	a.agentic.reported = a.agentic.reported || o.agentic.reported
	a.agentic.first.merge(&o.agentic.first)
	a.agentic.done.merge(&o.agentic.done)
}

// agenticSummary sets l's Agentic figures at confidence conf.
func (a *Accumulator) agenticSummary(l *Summary, conf float64) {
	l.ToolCallFirst, l.ToolCallDone = a.agentic.first.dist(), a.agentic.done.dist()
	l.ToolCallFirst.CI = a.agentic.first.ci(conf, a.agentic.first.count())
	l.ToolCallDone.CI = a.agentic.done.ci(conf, a.agentic.done.count())
	l.ToolCallRatePct = ratio(float64(l.ToolCalls)*100, float64(l.ToolRequests))
	l.ToolCallValidPct = ratio(float64(l.ToolCallsValid)*100, float64(l.ToolCalls))
	l.ToolCallRateCI = ProportionInterval(l.ToolCalls, l.ToolRequests, conf).Scale(100)
	l.ToolCallValidCI = ProportionInterval(l.ToolCallsValid, l.ToolCalls, conf).Scale(100)
	l.CacheHitPct = ratio(float64(l.CachedTokens)*100, float64(a.promptSum))
	l.CacheReported = a.agentic.reported
}
