package executor

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// wordFit is the fit of a server that counts words, with the request marker as its
// overhead: a prompt built for n tokens has exactly n words.
var wordFit = Fit{Overhead: 1, TokensPerWord: 1}

func TestGroupedPromptsShareTheirPrefixThenTheMarker(t *testing.T) {
	p := &Prompts{Fit: wordFit, Salt: "cell"}
	sh := Shape{PromptTokens: 50, PrefixTokens: 20, PrefixGroup: 1}
	a, b := p.Shaped("run0/req1", sh), p.Shaped("run0/req3", sh)
	for _, x := range []string{a, b} {
		if n := len(strings.Fields(x)); n != 50 {
			t.Fatalf("prompt has %d words, want the whole length 50: %q", n, x)
		}
		if w := strings.Fields(x)[20]; !strings.HasPrefix(w, "[") {
			t.Fatalf("word 21 is %q, want the request's marker right after the 20-word prefix", w)
		}
	}
	if a == b || !strings.HasPrefix(b, prefixWords(a, 20)) {
		t.Fatalf("one group's requests: want the same 20-word prefix and unique prompts:\n%q\n%q", a, b)
	}
	other := p.Shaped("run0/req2", Shape{PromptTokens: 50, PrefixTokens: 20, PrefixGroup: 2})
	nextRun := p.Shaped("run1/req1", sh)
	for _, x := range []string{other, nextRun} {
		if prefixWords(x, 20) == prefixWords(a, 20) {
			t.Fatalf("another group or run got the same prefix: %q", x)
		}
	}
	if plain := p.Shaped("run0/req1", Shape{PromptTokens: 50}); !strings.HasPrefix(plain, "[") {
		t.Fatalf("without a prefix the marker still comes first: %q", plain)
	}
}

func TestHashBlocksAreSharedTextCutToTheLength(t *testing.T) {
	p := &Prompts{Fit: wordFit, BlockSize: 8}
	a := p.Shaped("run0/req0", Shape{PromptTokens: 20, HashIDs: []int64{7, 8, 9}})
	b := p.Shaped("run0/req1", Shape{PromptTokens: 30, HashIDs: []int64{7, 8, 10, 11}})
	if n := len(strings.Fields(a)); n != 20 {
		t.Fatalf("prompt has %d words, want input length 20: %q", n, a)
	}
	if n := len(strings.Fields(b)); n != 30 {
		t.Fatalf("prompt has %d words, want input length 30: %q", n, b)
	}
	if prefixWords(a, 16) != prefixWords(b, 16) || prefixWords(a, 17) == prefixWords(b, 17) {
		t.Fatalf("want blocks 7 and 8 (16 words) shared, block 9 and 10 apart:\n%q\n%q", a, b)
	}
	// 19 words of blocks (the last cut to 3), then the marker.
	if w := strings.Fields(a)[19]; !strings.HasPrefix(w, "[") {
		t.Fatalf("last word %q, want the marker after the blocks", w)
	}
}

func TestSentCountsWhatAnEarlierRequestSent(t *testing.T) {
	var s Sent
	p := &Prompts{Fit: wordFit, BlockSize: 4} // a prompt of n tokens has n-1 words and a marker
	steps := []struct {
		sh   Shape
		want int
	}{
		{Shape{PromptTokens: 50, PrefixTokens: 20, PrefixGroup: 0}, 0},
		{Shape{PromptTokens: 50, PrefixTokens: 20, PrefixGroup: 1}, 0},
		{Shape{PromptTokens: 60, PrefixTokens: 20, PrefixGroup: 0}, 20},
		{Shape{PromptTokens: 10}, 0},
		{Shape{PromptTokens: 10, HashIDs: []int64{1, 2, 3}}, 0},     // blocks of 4, 4, 1 words
		{Shape{PromptTokens: 12, HashIDs: []int64{1, 2, 4}}, 8},     // 4, 4, 3
		{Shape{PromptTokens: 10, HashIDs: []int64{1, 2, 3}}, 9},     // all sent before
		{Shape{PromptTokens: 13, HashIDs: []int64{1, 2, 3}}, 9},     // 4, 4, 4: block 3's last 3 words are new
		{Shape{PromptTokens: 13, HashIDs: []int64{1, 2, 3, 9}}, 12}, // now the whole of block 3 was sent
		{Shape{PromptTokens: 8, HashIDs: []int64{5, 2}}, 0},         // 2 is behind a new block: no prefix
		{Shape{PromptTokens: 8, HashIDs: []int64{0}}, 0},            // block 0 is not group 0
	}
	for i, st := range steps {
		if got := s.Add(p, st.sh); got != st.want {
			t.Fatalf("step %d: shared %d, want %d", i, got, st.want)
		}
	}
}

// Sent remembers the parts used most recently, up to its limit: a part forgotten counts
// as not sent, as an evicted prefix cache entry would.
func TestSentForgetsTheLeastRecentPart(t *testing.T) {
	s := Sent{limit: 2}
	p := &Prompts{Fit: wordFit, BlockSize: 4}
	block := func(id int64) Shape { return Shape{PromptTokens: 5, HashIDs: []int64{id}} } // one block of 4 words
	for i, st := range []struct {
		id   int64
		want int
	}{{1, 0}, {2, 0}, {1, 4}, {3, 0}, {1, 4}, {2, 0}, {3, 0}} { // 3 evicts 2; 2 evicts 3
		if got := s.Add(p, block(st.id)); got != st.want {
			t.Fatalf("step %d (block %d): shared %d, want %d", i, st.id, got, st.want)
		}
	}
	if len(s.seen) != 2 || s.recent.Len() != 2 {
		t.Fatalf("remembers %d parts (list %d), limit 2", len(s.seen), s.recent.Len())
	}
}

func TestRunLevelReportsSharedPrefixTokensPerRun(t *testing.T) {
	f := &fakeBackend{}
	shapes := make([]Shape, 6)
	for i := range shapes {
		shapes[i] = Shape{PromptTokens: 30, PrefixTokens: 10, PrefixGroup: i % 2}
	}
	lv := LevelSpec{Concurrency: 1, Requests: 6, WarmupRuns: 1, RepeatRuns: 2, Prompts: &Prompts{Fit: wordFit}, Shapes: shapes}
	var mu sync.Mutex
	sum := map[int]int{}
	RunLevel(context.Background(), f, lv, Options{OnRequest: func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		if !e.Warmup {
			sum[e.Run] += e.SharedPrefixTokens
		}
	}})
	// Per run: two groups of three, each group's first request shares nothing.
	if sum[0] != 40 || sum[1] != 40 {
		t.Fatalf("shared prefix tokens per run = %v, want 40 in each (a new run starts fresh)", sum)
	}
}

func prefixWords(s string, n int) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(n, len(w))], " ")
}
