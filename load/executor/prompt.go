package executor

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/planrun/planrun/backends"
)

// filler is the vocabulary of generated prompts: common English words, so every tokenizer
// splits them in a stable way.
var filler = strings.Fields(`the of and to in is that for it as was with be by on not he this are or his from at
which but have an they you were her she there one all we their can has more would will been if no when what so up
out about who them into some could time these two may then do first any my now such like our over man me even most
made after also did many before must through back years where much your way well down should because each just those
people how too little state good very make world still own see men work long get here between both life being under
never day same another know while last might us great old year off come since against go came right used take three`)

// Prompts makes the prompt text of each request: a body of a calibrated number of filler
// words, behind a prefix unique to the request so a prefix cache cannot flatter TTFT
// (unless Shared, when every request gets the same text).
type Prompts struct {
	// Text, when set, is used as the body as it is (the plan's prompt or prompt_file).
	Text string
	// Words is the number of filler words in a generated body.
	Words int
	// Shared gives every request the same prompt (to measure with a warm prefix cache).
	Shared bool
	// Salt distinguishes the prefixes of different cells: a prefix group's or a trace
	// block's text is drawn from it, so a cell sends the same shared texts in every run.
	Salt string
	// Marker distinguishes the request markers of each level and run of planrun, so no
	// level resends another's prompts to a prefix-caching server (the shared texts
	// above stay as they are: their lengths are what the plan asked for).
	Marker string
	// Nonce, when set, leads every prompt, shared texts included (a workload's
	// prefix_cache = "bust"): a level's requests still share their prefixes with each
	// other, but none with a level or run of planrun before it, whose entries in a
	// server's prefix cache then match nothing.
	Nonce string
	// Fit turns a drawn prompt length into filler words (see FitTokens); requests with a
	// Shape are built with it.
	Fit Fit
	// Corpus, when set, replaces the filler vocabulary: a body is a run of its words (a
	// text dataset), starting at the request's Shape.Offset.
	Corpus []string
	// BlockSize is the tokens of text per hash id of a Shape's HashIDs (0:
	// DefaultBlockSize).
	BlockSize int
}

// For returns the prompt for the request with this id.
func (p *Prompts) For(id string) string { return p.Shaped(id, Shape{}) }

// Shaped returns the prompt of a request with its own shape: the shape's text, filler
// the fit predicts the server counts as sh.PromptTokens tokens, or (no drawn prompt
// length) the prompt For would give, from the shape's corpus offset. A shape with
// HashIDs or a PrefixTokens prefix starts with its shared text, and the request's unique
// marker follows it (a marker first would defeat a prefix cache).
func (p *Prompts) Shaped(id string, sh Shape) string {
	if p.Nonce != "" {
		return "[" + p.Nonce + "] " + p.shaped(id, sh)
	}
	return p.shaped(id, sh)
}

func (p *Prompts) shaped(id string, sh Shape) string {
	switch {
	case len(sh.HashIDs) > 0 || sh.PrefixTokens > 0:
		return p.sharedPrompt(id, sh)
	case sh.Text != "":
		return p.prefixed(id, sh.Text)
	case sh.PromptTokens > 0:
		return p.prefixed(id, p.words(p.Fit.Words(sh.PromptTokens), sh.Offset))
	case p.Text != "":
		return p.prefixed(id, p.Text)
	}
	return p.prefixed(id, p.words(p.Words, sh.Offset))
}

func (p *Prompts) prefixed(id, body string) string {
	if p.Shared {
		return body
	}
	h := fnv.New64a()
	h.Write([]byte(p.Salt))
	h.Write([]byte(p.Marker))
	h.Write([]byte(id))
	// A fixed-width prefix keeps the token count the same for every request.
	return fmt.Sprintf("[%016x] %s", h.Sum64(), body)
}

// words is a body of n words: the corpus's from start on (wrapping), or filler.
func (p *Prompts) words(n, start int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		if len(p.Corpus) > 0 {
			b.WriteString(p.Corpus[(start+i)%len(p.Corpus)])
		} else {
			b.WriteString(filler[(i*7+i/len(filler))%len(filler)])
		}
	}
	return b.String()
}

// Shape is one request's own lengths, drawn before a level runs so every run of the
// level sends the same mix.
type Shape struct {
	// Text is a dataset row's prompt; empty means filler of PromptTokens tokens (of the
	// calibrated length when 0), from word Offset of a corpus.
	Text         string
	PromptTokens int
	Offset       int
	// MaxTokens is the request's output length (forced where the server allows).
	MaxTokens int
	// HashIDs are a Mooncake trace row's prefix blocks: the prompt is built from one
	// block of text per id (the same id, the same text), so requests that share ids
	// share a prefix a prefix-caching server can reuse.
	HashIDs []int64
	// PrefixTokens > 0 starts the prompt with the prefix of group PrefixGroup: the same
	// PrefixTokens tokens for every request of the group, inside the prompt's length.
	PrefixTokens, PrefixGroup int
}

// Calibration records how the prompt length was matched to the server's own count.
type Calibration struct {
	Requested int `json:"requested_prompt_tokens"`
	// Actual is the server's prompt token count for the prompt used (0: not reported).
	Actual int `json:"actual_prompt_tokens"`
	Words  int `json:"words"`
	Probes int `json:"probes"`
	// Note says why calibration was skipped or approximate, if it was.
	Note string `json:"note,omitempty"`
}

// Calibrate finds the number of filler words whose prompt the server counts as target
// tokens (its own count: Ollama's prompt_eval_count, OpenAI's usage.prompt_tokens), by
// sending short requests (max_tokens 1). Chat templates add tokens of their own; they
// are part of what the server counts, so they are part of the match.
func Calibrate(ctx context.Context, b backends.Backend, tmpl backends.Request, p *Prompts, target int) Calibration {
	cal := Calibration{Requested: target}
	if p.Text != "" || target <= 0 {
		cal.Note = "fixed prompt text: not calibrated"
		cal.Actual, _ = measurePrompt(ctx, b, tmpl, p, "calibrate0", &cal)
		return cal
	}
	p.Words = max(target/2, 1)
	best, bestDiff := p.Words, math.MaxInt // MaxInt: no count yet
	seen := map[int]int{}
	tooLongAt := math.MaxInt // fewest words the server rejected as over its context
	for i := 0; i < 8; i++ {
		got, rejected := measurePrompt(ctx, b, tmpl, p, fmt.Sprintf("calibrate%d", i), &cal)
		if rejected && p.Words > 1 {
			// vLLM answers a prompt longer than its context with a 400: the first guess
			// (half a word a token) overruns a small context on a tokenizer of several
			// tokens a word. Halve it and go on; the cell's own check of the context
			// decides whether the requested length fits at all.
			tooLongAt = min(tooLongAt, p.Words)
			p.Words = max(p.Words/2, 1)
			continue
		}
		if got <= 0 {
			p.Words = roughWords(target)
			cal.Words = p.Words
			if cal.Note == "" {
				cal.Note = "server reports no prompt token count: prompt length not calibrated"
			}
			return cal
		}
		seen[p.Words] = got
		diff := max(got-target, target-got)
		if diff < bestDiff {
			best, bestDiff, cal.Actual = p.Words, diff, got
		}
		if diff == 0 {
			break
		}
		// Proportional step on the body's share of the count, at least one word.
		next := p.Words + (target-got)*p.Words/max(got, 1)
		if next == p.Words {
			next += cmp.Compare(target, got) // a word toward the target (got is not it)
		}
		next = max(min(next, tooLongAt-1), 1)
		if _, done := seen[next]; done {
			break
		}
		p.Words = next
	}
	if bestDiff == math.MaxInt { // every probe was rejected
		p.Words = roughWords(target)
		cal.Words = p.Words
		return cal
	}
	cal.Note = "" // a rejected probe's note: the calibration found its length after all
	p.Words = best
	cal.Words = best
	if bestDiff > 0 {
		cal.Note = fmt.Sprintf("closest prompt is %d tokens off the requested %d", bestDiff, target)
	}
	return cal
}

// measurePrompt sends one probe (max_tokens 1) and returns the server's prompt count, 0
// when the probe failed; rejected says the server refused it as a client error (4xx),
// as vLLM refuses a prompt over its context, so a shorter probe may pass.
func measurePrompt(ctx context.Context, b backends.Backend, tmpl backends.Request, p *Prompts, id string, cal *Calibration) (count int, rejected bool) {
	req := tmpl
	req.ID = id
	req.Prompt = p.For(id)
	req.MaxTokens = 1
	req.ForceMaxTokens = false
	cal.Probes++
	s := b.Do(ctx, req)
	if s.Err != nil {
		cal.Note = "calibration request failed: " + s.Err.Error()
		return 0, s.Err.Class == backends.ErrHTTP4xx
	}
	return s.PromptTokens, false
}
