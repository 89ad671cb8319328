package runreport

import (
	"math"
	"strconv"

	"github.com/planrun/planrun/internal/mdtable"
	"github.com/planrun/planrun/ledger"
)

// toolCallNote says how the tool-call figures are counted (a Markdown line).
const toolCallNote = "Over the successful requests that offered tools: **call rate** = those whose answer called a tool; **valid** = of those, the share whose every call was complete, with arguments that parse as a JSON object and match the tool's schema; in parentheses their Clopper–Pearson interval at the row's confidence. **First fragment** = request start to the first call's first part, **complete** = to that call complete (streamed answers only)."

// prefixCacheNote says what the prefix cache's figures are (a Markdown line).
const prefixCacheNote = "**Prefix cache** is what was done to the server's cache before the level: `reset` (emptied), `bust` (every prompt led by a nonce of the level's own), `warm` (nothing done, and it was warm before the level: the row's notes say how that is known), — (nothing done, nothing says it was warm). **Cached tokens** are the prompt tokens the server's usage says its prefix cache served, **cache hit** their share of the counted prompt tokens (— when the server reports no cached count, not 0%); **shared prefix** the share the level's own requests shared with each other; **server hit** vLLM's own prefix-cache hit rate from `/metrics` over the window."

// toolCallCells is the tool-call table of the rows whose requests offered tools; no
// body when none did.
func toolCallCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Requests with tools", "Called", "Call rate (%)", "Valid (%)",
		"First fragment p50 / p90 (s)", "Complete p50 / p90 (s)"}
	for _, r := range rows {
		if r.ToolRequests == 0 {
			continue
		}
		body = append(body, []string{r.CellID, concurrency(r), strconv.Itoa(r.ToolRequests), strconv.Itoa(r.ToolCalls),
			withEnds(r.ToolCallRatePct, r.ToolCallRateCI), withEnds(r.ToolCallValidPct, r.ToolCallValidCI),
			mdtable.Num(r.ToolCallFirst.P50, 1, 3) + " / " + mdtable.Num(r.ToolCallFirst.P90, 1, 3),
			mdtable.Num(r.ToolCallDone.P50, 1, 3) + " / " + mdtable.Num(r.ToolCallDone.P90, 1, 3)})
	}
	return head, body
}

// cacheFigures reports whether a row says anything of the server's prefix cache: what
// was done to it, or a count or rate of its hits.
func cacheFigures(r ledger.Row) bool {
	return r.PrefixCache != "" || r.CachedTokens > 0 || !math.IsNaN(r.CacheHitPct) || !math.IsNaN(r.PrefixCacheHitPct)
}

// prefixCacheCells is the prefix-cache table of the rows with cacheFigures; no body
// when none has.
func prefixCacheCells(rows []ledger.Row) (head []string, body [][]string) {
	head = []string{"Cell", "Conc.", "Prefix cache", "Cached tokens", "Cache hit (%)", "Shared prefix (%)", "Server hit (%)"}
	for _, r := range rows {
		if !cacheFigures(r) {
			continue
		}
		cached := "—" // the server reported no cached count: not 0 tokens
		if !math.IsNaN(r.CacheHitPct) {
			cached = strconv.Itoa(r.CachedTokens)
		}
		body = append(body, []string{r.CellID, concurrency(r), mdtable.Dash(r.PrefixCache), cached,
			mdtable.Num(r.CacheHitPct, 1, 1), mdtable.Num(r.SharedPrefixPct, 1, 1), mdtable.Num(r.PrefixCacheHitPct, 1, 1)})
	}
	return head, body
}
