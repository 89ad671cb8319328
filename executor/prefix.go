package executor

import (
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

// grouped is the prompt of a request of a prefix group: the group's shared prefix,
// then the request's unique marker, then its own filler, the whole of the shape's
// prompt length (or the calibrated one when the shape has none).
func (p *Prompts) grouped(id string, sh Shape) string {
	total := p.totalWords(sh)
	prefix := p.Fit.blockWords(sh.PrefixTokens)
	head := seededWords(p.seed(id, "group", int64(sh.PrefixGroup)), prefix)
	return head + " " + p.prefixed(id, p.words(max(total-prefix, 1), sh.Offset))
}

// blocks is the prompt of a request with hash ids: one block of BlockSize tokens per
// id, the last cut so the prompt is sh.PromptTokens long, then the request's marker
// (and filler, should the ids cover less than the length).
func (p *Prompts) blocks(id string, sh Shape) string {
	left := p.totalWords(sh)
	per := p.Fit.blockWords(p.blockSize())
	parts := make([]string, 0, len(sh.HashIDs)+1)
	for _, h := range sh.HashIDs {
		n := min(per, left)
		if n <= 0 {
			break
		}
		parts = append(parts, seededWords(p.seed(id, "block", h), n))
		left -= n
	}
	rest := ""
	if left > 0 {
		rest = p.words(left, sh.Offset)
	}
	return strings.Join(append(parts, strings.TrimSpace(p.prefixed(id, rest))), " ")
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
func (p *Prompts) seed(id, kind string, n int64) uint64 {
	run := id[:max(strings.LastIndexByte(id, '/'), 0)]
	h := fnv.New64a()
	for _, s := range []string{p.Salt, run, kind} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64() ^ uint64(n)*0x9e3779b97f4a7c15
}

// seededWords is n filler words drawn from seed: different seeds differ from the first
// word on (but for a 1-in-len(filler) chance), so a prefix cache tells them apart.
func seededWords(seed uint64, n int) string {
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

// Sent records which prefix groups and hash blocks a run has sent, to count each
// request's shared prefix tokens. Safe for concurrent use by a run's requests.
type Sent struct {
	mu   sync.Mutex
	seen map[sentKey]bool
}

type sentKey struct {
	block bool // a hash block, else a prefix group
	id    int64
}

// Add records sh's prefix as sent and returns how many of its prompt tokens an earlier
// request of the run already sent: its group's PrefixTokens once the group was sent,
// or the tokens of its leading hash blocks that were all sent before (a prefix cache
// can reuse a block only when every block before it matches too), each blockSize
// tokens but the last, cut to sh.PromptTokens.
func (s *Sent) Add(sh Shape, blockSize int) int {
	if sh.PrefixTokens <= 0 && len(sh.HashIDs) == 0 {
		return 0
	}
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[sentKey]bool{}
	}
	if len(sh.HashIDs) == 0 {
		k := sentKey{id: int64(sh.PrefixGroup)}
		shared := 0
		if s.seen[k] {
			shared = sh.PrefixTokens
		}
		s.seen[k] = true
		return shared
	}
	shared, leading := 0, true
	for i, h := range sh.HashIDs {
		tokens := min(blockSize, sh.PromptTokens-i*blockSize)
		if tokens <= 0 {
			break
		}
		k := sentKey{block: true, id: h}
		leading = leading && s.seen[k]
		if leading {
			shared += tokens
		}
		s.seen[k] = true
	}
	return shared
}
