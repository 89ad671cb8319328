package mockserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// prefixCache is the mock's prefix cache: the word prefixes of every prompt received
// (by a running hash at each word), so the leading words a new prompt shares with an
// earlier one are known to be cached, as a server's prefix cache would hold their KV.
type prefixCache struct {
	mu   sync.Mutex
	seen map[uint64]struct{}
}

// add records text's word prefixes and returns how many of its leading words an
// earlier prompt began with.
func (c *prefixCache) add(text string) (cached int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[uint64]struct{}{}
	}
	h, matching := uint64(14695981039346656037), true // FNV-1a over the words
	for i, w := range strings.Fields(text) {
		for j := 0; j < len(w); j++ {
			h = (h ^ uint64(w[j])) * 1099511628211
		}
		h = (h ^ ' ') * 1099511628211
		if _, ok := c.seen[h]; ok && matching {
			cached = i + 1
		} else {
			matching = false
		}
		c.seen[h] = struct{}{}
	}
	return cached
}

// prefill is the time PrefillPerToken adds before g's first token: one step per prompt
// token the prefix cache did not hold. With RecordTruth, t gets the cached count.
func (s *Server) prefill(g *generation, t *Truth) time.Duration {
	cached := 0
	if s.cfg.PrefixCache {
		cached = min(s.prefixes.add(g.p.promptText), g.p.promptTokens)
	}
	g.cached = cached
	if t != nil {
		t.CachedTokens = cached
	}
	return s.cfg.PrefillPerToken * time.Duration(g.p.promptTokens-cached)
}

// text is the request's prompt as the prefix cache reads it: the prompt, or the chat's
// messages in order.
func (q *request[T]) text(chat bool, textOf func(T) string) string {
	if !chat {
		return textOf(q.Prompt)
	}
	parts := make([]string, len(q.Messages))
	for i, m := range q.Messages {
		parts[i] = textOf(m.Content)
	}
	return strings.Join(parts, " ")
}

// contentText is a content or prompt's text: a string, or the "text" of its parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentPart
	json.Unmarshal(raw, &parts)
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
		if r := p.result(); r != nil {
			texts = append(texts, contentText(r))
		}
	}
	return strings.Join(texts, " ")
}

// contentPart is a part of a message's content: a text, or (the Messages API) a
// tool_result block, whose content is a string or parts in turn.
type contentPart struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
}

// result is a tool_result part's content; nil for any other part.
func (p contentPart) result() json.RawMessage {
	if p.Type != "tool_result" {
		return nil
	}
	return p.Content
}

// countToolResults is the tool_result parts of a Messages API content.
func countToolResults(raw json.RawMessage) int {
	var parts []contentPart
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return 0
	}
	n := 0
	for _, p := range parts {
		if p.Type == "tool_result" {
			n++
		}
	}
	return n
}

func plainText(s string) string { return s }

// reset empties the cache, as vLLM's /reset_prefix_cache does.
func (c *prefixCache) reset() {
	c.mu.Lock()
	c.seen = nil
	c.mu.Unlock()
}

// resetPrefixCache serves POST /reset_prefix_cache: {"success": true}, as vLLM's dev
// router answers.
func (s *Server) resetPrefixCache(w http.ResponseWriter, r *http.Request) {
	s.prefixes.reset()
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}
