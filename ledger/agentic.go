package ledger

import (
	"math"

	"github.com/planrun/planrun/stats"
)

// Agentic are a row's tool-call figures and the prefix cache's part of its prompts
// (stats.Agentic's), with what was done about the cache before the level was measured.
type Agentic struct {
	// ToolRequests is the successful requests that offered tools; ToolCalls those whose
	// answer called one; ToolCallsValid those whose every call was complete, with
	// arguments that parse and match the tool's schema. The rates are in %, NaN with
	// nothing to share; their intervals Clopper–Pearson at the row's confidence.
	ToolRequests, ToolCalls, ToolCallsValid int
	ToolCallRatePct, ToolCallValidPct       float64
	ToolCallRateCI, ToolCallValidCI         stats.Interval
	// ToolCallFirst and ToolCallDone: request start to the first call's first part, and
	// to that call complete.
	ToolCallFirst, ToolCallDone stats.Dist
	// CachedTokens is Σ the prompt tokens the server's usage said its prefix cache
	// served, CacheHitPct their share of the counted prompt tokens (NaN when the server
	// reported no cached count: not a 0% hit rate).
	CachedTokens int
	CacheHitPct  float64
	// PrefixCache says what the level's prefix cache was: "reset" (emptied before it),
	// "bust" (every prompt led by a nonce of the level's own), PrefixCacheWarm (nothing
	// was done and it was warm before the level: the notes say how that is known), or ""
	// (nothing done, and nothing says it was warm).
	PrefixCache string
}

// PrefixCacheWarm is a row's PrefixCache when its level was measured on a cache warmed
// before it.
const PrefixCacheWarm = "warm"

func newAgentic() Agentic {
	nan, d, u := math.NaN(), stats.NewDist(nil), stats.Unbounded(0)
	return Agentic{ToolCallRatePct: nan, ToolCallValidPct: nan, ToolCallRateCI: u, ToolCallValidCI: u,
		ToolCallFirst: d, ToolCallDone: d, CacheHitPct: nan}
}

// setAgentic fills the row's Agentic figures from its pooled summary.
func (r *Row) setAgentic(p stats.Summary) {
	a := &r.Agentic
	a.ToolRequests, a.ToolCalls, a.ToolCallsValid = p.ToolRequests, p.ToolCalls, p.ToolCallsValid
	a.ToolCallRatePct, a.ToolCallValidPct = p.ToolCallRatePct, p.ToolCallValidPct
	a.ToolCallRateCI, a.ToolCallValidCI = p.ToolCallRateCI, p.ToolCallValidCI
	a.ToolCallFirst, a.ToolCallDone = p.ToolCallFirst, p.ToolCallDone
	a.CachedTokens, a.CacheHitPct = p.CachedTokens, math.NaN()
	if p.CacheReported {
		a.CacheHitPct = p.CacheHitPct
	}
}

// toolDists are the tool calls' timing distributions.
var toolDists = []RowDist{
	{"tool_call_first", "s", "request start to the first tool call's first part", 1, 3, func(r *Row) *stats.Dist { return &r.ToolCallFirst }},
	{"tool_call_done", "s", "request start to the first tool call complete", 1, 3, func(r *Row) *stats.Dist { return &r.ToolCallDone }},
}

// agenticColumns are the ledger columns of Agentic, after every earlier format's.
func agenticColumns() []column {
	c := []column{
		intCol("tool_requests", func(r *Row) *int { return &r.ToolRequests }),
		intCol("tool_called_requests", func(r *Row) *int { return &r.ToolCalls }),
		intCol("tool_valid_requests", func(r *Row) *int { return &r.ToolCallsValid }),
		floatCol("tool_call_rate_pct", 1, func(r *Row) *float64 { return &r.ToolCallRatePct }),
		floatCol("tool_call_rate_pct_lo", 1, func(r *Row) *float64 { return &r.ToolCallRateCI.Lo }),
		floatCol("tool_call_rate_pct_hi", 1, func(r *Row) *float64 { return &r.ToolCallRateCI.Hi }),
		floatCol("tool_call_valid_pct", 1, func(r *Row) *float64 { return &r.ToolCallValidPct }),
		floatCol("tool_call_valid_pct_lo", 1, func(r *Row) *float64 { return &r.ToolCallValidCI.Lo }),
		floatCol("tool_call_valid_pct_hi", 1, func(r *Row) *float64 { return &r.ToolCallValidCI.Hi }),
	}
	for _, d := range toolDists {
		c = append(c, distCols(d.Prefix, d.Unit, d.Scale, d.Get)...)
	}
	return append(c,
		intCol("cached_tokens", func(r *Row) *int { return &r.CachedTokens }),
		floatCol("cache_hit_pct", 1, func(r *Row) *float64 { return &r.CacheHitPct }),
		strCol("prefix_cache", func(r *Row) *string { return &r.PrefixCache }),
	)
}

// agenticFields are result.tool_call_rate_pct and the rest of Agentic's scalars.
var agenticFields = []ResultField{
	intField("tool_called_requests", "requests whose answer called a tool", func(r *Row) int { return r.ToolCalls }),
	numField("tool_call_rate_pct", "%", "share of the requests offering tools whose answer called one", 1, func(r *Row) float64 { return r.ToolCallRatePct }),
	numField("tool_call_valid_pct", "%", "share of the calling requests whose calls were complete, JSON, and matched the tool's schema", 1, func(r *Row) float64 { return r.ToolCallValidPct }),
	intField("cached_tokens", "prompt tokens the server's prefix cache served, by its usage", func(r *Row) int { return r.CachedTokens }),
	numField("cache_hit_pct", "%", "cached prompt tokens over prompt tokens, by the server's usage", 1, func(r *Row) float64 { return r.CacheHitPct }),
	strField("prefix_cache", "the level's prefix cache: reset or bust before it, warm (nothing done, warmed before it), or empty", func(r *Row) string { return r.PrefixCache }),
}
