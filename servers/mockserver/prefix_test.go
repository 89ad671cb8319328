package mockserver

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPrefixCacheHoldsLeadingWords(t *testing.T) {
	var c prefixCache
	for i, st := range []struct {
		text   string
		cached int
	}{
		{"a b c d", 0},
		{"a b x y z", 2},
		{"a b c d e", 4},
		{"b c d", 0}, // the same words, not at the start
		{"a  b\tx q", 3},
	} {
		if got := c.add(st.text); got != st.cached {
			t.Errorf("prompt %d %q: %d cached words, want %d", i, st.text, got, st.cached)
		}
	}
}

// With a prefix cache, a prompt's first token is due PrefillPerToken later per word the
// cache did not hold, on both protocols.
func TestPrefillSkipsCachedWords(t *testing.T) {
	prefix := strings.Repeat("shared ", 30)
	s := New(Config{TTFT: time.Millisecond, PrefillPerToken: time.Millisecond, PrefixCache: true, RecordTruth: true, clock: fixedClock()})
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"` + prefix + `one two"}],"max_tokens":2}`,
		`{"model":"m","prompt":"` + prefix + `three four five","max_tokens":2}`,
	} {
		path := "/v1/chat/completions"
		if strings.Contains(body, `"prompt"`) {
			path = "/api/generate"
		}
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", path, strings.NewReader(body)))
	}
	truths := s.Truths()
	for i, want := range []struct{ cached, prefill int }{{0, 32}, {30, 3}} {
		tr := truths[i]
		if tr.CachedTokens != want.cached || len(tr.Chunks) == 0 {
			t.Fatalf("request %d: %d cached tokens, %d chunks; want %d cached", i, tr.CachedTokens, len(tr.Chunks), want.cached)
		}
		if due := tr.Chunks[0].Due.Sub(tr.Admitted); due != time.Duration(1+want.prefill)*time.Millisecond {
			t.Errorf("request %d: first token due %v after admission, want TTFT 1ms + %d uncached words × 1ms", i, due, want.prefill)
		}
	}
}
