package executor

import (
	"cmp"
	"container/list"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
)

// Shared prefixes: a prefix group's requests all start with the same text, and a
// Mooncake row's hash ids become one block of text each (the same id, the same text).
// The text is seeded per run, so a run's first request of a group or block pays the
// full prefill and what Sent counts as shared is what a prefix cache could reuse.

// sharedPrompt is the prompt of a request in a prefix group or with hash ids: its
// shared parts (layout), then the request's unique marker, then filler to the whole of
// its prompt length.
func (p *Prompts) sharedPrompt(id string, sh Shape) string {
	parts := p.layout(sh)
	texts := make([]string, 0, len(parts)+1)
	left := p.totalWords(sh)
	for _, pt := range parts {
		texts = append(texts, SeededWords(p.seed(id, pt.key), pt.words))
		left -= pt.words
	}
	return strings.Join(append(texts, strings.TrimSpace(p.prefixed(id, p.words(max(left, 0), sh.Offset)))), " ")
}

// part is one shared piece of a prompt: a prefix group's prefix or one hash block.
type part struct {
	key   sentKey
	words int
}

// layout is the shared parts of sh's prompt in order: its group's prefix, or one block
// of BlockSize tokens per hash id, the last cut so the prompt keeps its length.
func (p *Prompts) layout(sh Shape) []part {
	if len(sh.HashIDs) == 0 {
		if sh.PrefixTokens <= 0 {
			return nil
		}
		return []part{{sentKey{id: int64(sh.PrefixGroup)}, p.Fit.blockWords(sh.PrefixTokens)}}
	}
	left, per := p.totalWords(sh), p.Fit.blockWords(p.blockSize())
	parts := make([]part, 0, len(sh.HashIDs))
	for _, h := range sh.HashIDs {
		n := min(per, left)
		if n <= 0 {
			break
		}
		parts = append(parts, part{sentKey{block: true, id: h}, n})
		left -= n
	}
	return parts
}

// totalWords is the filler words of the shape's whole prompt: fitted to its drawn
// length, else the calibrated length's.
func (p *Prompts) totalWords(sh Shape) int {
	if sh.PromptTokens > 0 {
		return p.Fit.Words(sh.PromptTokens)
	}
	return p.Words
}

// DefaultBlockSize is the tokens per hash id of Mooncake's published traces.
const DefaultBlockSize = 512

func (p *Prompts) blockSize() int {
	if p.BlockSize > 0 {
		return p.BlockSize
	}
	return DefaultBlockSize
}

// seed names a group's or block's text within the request's run (the part of the id
// before its last "/", as runOnce writes ids) and the cell's Salt.
func (p *Prompts) seed(id string, k sentKey) uint64 {
	run := id[:max(strings.LastIndexByte(id, '/'), 0)]
	kind := "group"
	if k.block {
		kind = "block"
	}
	h := fnv.New64a()
	for _, s := range []string{p.Salt, run, kind} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64() ^ uint64(k.id)*0x9e3779b97f4a7c15
}

// SeededWords is n filler words drawn from seed: different seeds differ from the first
// word on (but for a 1-in-len(filler) chance), so a prefix cache tells them apart; a
// quality phase's built-in prompts are such words too.
func SeededWords(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 0x70726566)) // "pref"
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(filler[rng.IntN(len(filler))])
	}
	return b.String()
}

// blockWords is the filler words the server counts as tokens tokens inside a prompt
// (the fit's slope without its overhead, which the whole prompt carries once).
func (f Fit) blockWords(tokens int) int {
	if f.TokensPerWord <= 0 {
		return roughWords(tokens)
	}
	return max(int(math.Round(float64(tokens)/f.TokensPerWord)), 1)
}

// tokens is the server's count of words of filler inside a prompt, as the fit predicts
// it (without a fit, the rough 4/3 tokens per English word).
func (f Fit) tokens(words int) int {
	if f.TokensPerWord <= 0 {
		return int(math.Round(float64(words) * 4 / 3))
	}
	return int(math.Round(float64(words) * f.TokensPerWord))
}

// Sent records how much of each prefix group and hash block a run has sent, to count
// each request's shared prefix tokens. It remembers the SentParts parts used most
// recently, so replaying a long trace of ever new hash ids keeps its memory bounded; a
// part forgotten counts as not sent, as a server's prefix cache, which is smaller still,
// would have evicted it. Safe for concurrent use by a run's requests.
type Sent struct {
	mu     sync.Mutex
	seen   map[sentKey]*list.Element // of recent, most recently used first
	recent list.List                 // of *sentPart
	limit  int                       // 0: SentParts (tests lower it)
}

// SentParts is how many prefix groups and hash blocks a run's Sent remembers: with
// Mooncake's 512-token blocks, 128 Mi tokens, far past any server's prefix cache.
const SentParts = 1 << 18

type sentKey struct {
	block bool // a hash block, else a prefix group
	id    int64
}

type sentPart struct {
	key   sentKey
	words int // sent of the part so far
}

// Add records the shared parts of sh's prompt (built by p) as sent and returns how many
// of its prompt tokens earlier requests of the run already sent: its leading parts as
// far as they were sent before (a prefix cache reuses a part only behind a match of
// every part before it), on the server's count as p's fit predicts it. The first
// request of a prefix group counts 0.
func (s *Sent) Add(p *Prompts, sh Shape) int {
	parts := p.layout(sh)
	if len(parts) == 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[sentKey]*list.Element{}
	}
	shared, leading := 0, true
	for _, pt := range parts {
		before := s.use(pt.key)
		if leading {
			shared += min(pt.words, before.words)
		}
		leading = leading && before.words >= pt.words
		before.words = max(before.words, pt.words)
	}
	return p.Fit.tokens(shared)
}

// use returns the record of part k, made the most recent (new, with nothing sent, when
// it is not remembered), forgetting the least recent past the limit.
func (s *Sent) use(k sentKey) *sentPart {
	if e, ok := s.seen[k]; ok {
		s.recent.MoveToFront(e)
		return e.Value.(*sentPart)
	}
	sp := &sentPart{key: k}
	s.seen[k] = s.recent.PushFront(sp)
	if s.recent.Len() > cmp.Or(s.limit, SentParts) {
		old := s.recent.Back()
		s.recent.Remove(old)
		delete(s.seen, old.Value.(*sentPart).key)
	}
	return sp
}
