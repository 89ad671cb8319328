// Package quality measures a cell's output drift against a reference through the same
// servers the timed levels measure: the reference's greedy continuation of each prompt
// of a seeded set, with its top-k log-probabilities at every position (Gather), then a
// cell's distributions at the same positions, after the same prefixes (Measure),
// compared by stats.ComparePrompt. Requests go one at a time, greedy (temperature 0,
// seeded), apart from any timed level.
//
// A cell follows the reference's path one of two ways:
//
//   - teacher: where the server tokenizes and returns prompt log-probabilities (vLLM's
//     /tokenize and prompt_logprobs), one request per prompt sends the prompt and the
//     reference's whole continuation as token ids with max_tokens 1; the prompt
//     log-probabilities give the cell's distribution at every position and its exact
//     log-probability of each reference token.
//   - follow: elsewhere (Ollama: log-probabilities of generated tokens only), the cell
//     generates greedily from the prompt as a raw text; where its token differs from
//     the reference's, it is sent the prompt and the reference's tokens so far as text
//     and generates again. One request per prompt plus one per divergence, where full
//     teacher forcing by text would cost one per position. A prefix sent as text is
//     re-tokenized by the server: the server's prompt count shows where that did not
//     give back the reference's tokens, and the result counts such restarts.
package quality

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/load/executor"
	"github.com/planrun/planrun/stats"
)

// Methods, as ledger.QualityFollow and ledger.QualityTeacher, and Auto: teacher where
// the server allows it, else follow.
const (
	Auto    = "auto"
	Follow  = "follow"
	Teacher = "teacher"
)

// Config is what a quality phase sends.
type Config struct {
	Prompts []string
	// MaxTokens is the reference's continuation length; TopK the log-probabilities asked
	// per position.
	MaxTokens, TopK int
	// Seed is every request's sampler seed; decoding is greedy.
	Seed int64
	// Method is Auto, Follow or Teacher.
	Method string
}

// Prompts is the built-in prompt set: n prompts of words common words each, seeded.
func Prompts(n, words int, seed int64) []string {
	out := make([]string, n)
	for i := range out {
		h := fnv.New64a()
		fmt.Fprintf(h, "quality/%d/%d", seed, i)
		out[i] = executor.SeededWords(h.Sum64(), words)
	}
	return out
}

// Path is the reference's continuation of one prompt.
type Path struct {
	Prompt string
	// PromptIDs is the prompt as token ids (teacher); PromptTokens the server's count of
	// the prompt (follow), which a restart's count is checked against.
	PromptIDs    []int
	PromptTokens int
	// Tokens are the continuation's tokens with the reference's top-k at each position:
	// from its generation (follow), or from its own teacher-forced pass (teacher), so a
	// cell's figures are read the same way as the reference's.
	Tokens []backends.TokenLogProbs
}

// Reference is what a reference cell gathered: one Path per prompt.
type Reference struct {
	Method   string
	Paths    []Path
	Requests int
	// Why says why Auto chose follow, when it did.
	Why string
	// Cut is the prompts whose continuation the server returned without some tokens'
	// log-probabilities, kept up to the first such token (complete).
	Cut int
}

// Result is a cell measured along a Reference.
type Result struct {
	Prompts  []stats.PromptDrift
	Requests int
	// Restarts is the follow method's requests after a divergence; Retokenized those
	// whose prefix the server counted otherwise than the reference's tokens; Lost the
	// positions whose token came back without its log-probabilities (complete).
	Restarts, Retokenized, Lost int
}

// complete reports whether s has a log-probability for every token it generated (the
// end-of-text token aside, which servers give none): Ollama 0.17.4 drops, with their
// text, the log-probabilities of tokens that are no UTF-8 of their own (a lone byte of a
// multi-byte character), and the later tokens' then sit at the wrong positions. A
// server that gives no token count is taken at its word.
func complete(s backends.Sample) bool {
	if s.TokenSource != backends.TokensServer && s.TokenSource != backends.TokensUsage {
		return true
	}
	n := s.OutputTokens
	if s.FinishReason == "stop" {
		n--
	}
	return len(s.LogProbs) >= n
}

// verifiedPrefix is, for a generation that came back incomplete, the longest run of its
// first tokens that a shorter request returns complete: a binary search over the
// length, about log2(n) requests. A shorter request's tokens are the same (greedy), and
// any complete one can be trusted, so a search that misses the longest still returns
// tokens at their true positions.
func verifiedPrefix(ctx context.Context, b backends.Backend, model string, cfg Config, prompt string, n int, requests *int) ([]backends.TokenLogProbs, error) {
	lo, hi := 0, n-1
	var best []backends.TokenLogProbs
	for lo < hi {
		mid := (lo + hi + 1) / 2
		s := b.Do(ctx, generate(model, cfg, prompt, mid))
		*requests++
		if s.Err != nil {
			return nil, s.Err
		}
		if complete(s) && len(s.LogProbs) >= mid {
			lo, best = mid, s.LogProbs[:mid]
		} else {
			hi = mid - 1
		}
	}
	return best, nil
}

// Gather runs the reference's own generation of every prompt: teacher where the method
// allows and the server tokenizes and returns prompt log-probabilities, follow
// otherwise.
func Gather(ctx context.Context, b backends.Backend, model string, cfg Config) (*Reference, error) {
	ref := &Reference{Method: Follow}
	if cfg.Method != Follow {
		why, err := gatherTeacher(ctx, b, model, cfg, ref)
		switch {
		case err != nil:
			return nil, err
		case why == "":
			return ref, nil
		case cfg.Method == Teacher:
			return nil, fmt.Errorf("method teacher: %s", why)
		}
		*ref = Reference{Method: Follow, Requests: ref.Requests, Why: why}
	}
	for _, p := range cfg.Prompts {
		s := b.Do(ctx, generate(model, cfg, p, cfg.MaxTokens))
		ref.Requests++
		if s.Err != nil {
			return nil, fmt.Errorf("reference continuation: %w", s.Err)
		}
		if s.LogProbs == nil && s.OutputTokens > 0 {
			return nil, fmt.Errorf("the server returned no log-probabilities for %d generated tokens (Ollama gives them from 0.12.11)", s.OutputTokens)
		}
		toks := s.LogProbs
		if !complete(s) {
			ref.Cut++
			var err error
			if toks, err = verifiedPrefix(ctx, b, model, cfg, p, s.OutputTokens, &ref.Requests); err != nil {
				return nil, fmt.Errorf("reference continuation: %w", err)
			}
		}
		ref.Paths = append(ref.Paths, Path{Prompt: p, PromptTokens: s.PromptTokens, Tokens: toks})
	}
	return ref, nil
}

// gatherTeacher gathers by the teacher method; why says why the server cannot (no
// /tokenize, no ids, no prompt log-probabilities), an error that a request failed.
func gatherTeacher(ctx context.Context, b backends.Backend, model string, cfg Config, ref *Reference) (why string, err error) {
	tok, ok := b.(backends.Tokenizer)
	if !ok {
		return "backend " + b.Kind() + " cannot tokenize", nil
	}
	ref.Method = Teacher
	for _, p := range cfg.Prompts {
		ids, err := tok.Tokenize(ctx, model, p)
		if err != nil {
			return "no token ids from the server: " + err.Error(), nil
		}
		s := b.Do(ctx, backends.Request{Model: model, PromptIDs: ids, MaxTokens: cfg.MaxTokens, Greedy: true,
			Seed: &cfg.Seed, TopLogProbs: cfg.TopK, TokenIDs: true, NoStream: true})
		ref.Requests++
		if s.Err != nil {
			return "", fmt.Errorf("reference continuation: %w", s.Err)
		}
		cont := make([]int, len(s.LogProbs))
		for i, t := range s.LogProbs {
			if t.ID < 0 {
				return fmt.Sprintf("the server names generated tokens by text (%q), not by id", t.Token), nil
			}
			cont[i] = t.ID
		}
		tf, why, err := teacherPass(ctx, b, model, cfg, ids, cont, &ref.Requests)
		if why != "" || err != nil {
			return why, err
		}
		ref.Paths = append(ref.Paths, Path{Prompt: p, PromptIDs: ids, PromptTokens: len(ids), Tokens: tf})
	}
	return "", nil
}

// teacherPass sends the prompt and a continuation as ids and reads the model's
// distribution at every continuation position from the prompt log-probabilities: each
// position's own token (the continuation's) with its log-probability, and the top k.
func teacherPass(ctx context.Context, b backends.Backend, model string, cfg Config, ids, cont []int, requests *int) ([]backends.TokenLogProbs, string, error) {
	all := append(append(make([]int, 0, len(ids)+len(cont)), ids...), cont...)
	s := b.Do(ctx, backends.Request{Model: model, PromptIDs: all, MaxTokens: 1, Greedy: true, Seed: &cfg.Seed,
		PromptLogProbs: cfg.TopK, TokenIDs: true, NoStream: true})
	*requests++
	if s.Err != nil {
		return nil, "", fmt.Errorf("teacher-forced request: %w", s.Err)
	}
	if s.PromptLogProbs == nil {
		return nil, "the server returned no prompt log-probabilities", nil
	}
	if len(s.PromptLogProbs) != len(all) {
		return nil, "", fmt.Errorf("the server returned %d prompt positions for %d tokens", len(s.PromptLogProbs), len(all))
	}
	out := make([]backends.TokenLogProbs, len(cont))
	for i, id := range cont {
		pos := s.PromptLogProbs[len(ids)+i]
		own := -1
		for j, t := range pos.Top {
			if t.ID == id {
				own = j
			}
			if t.Rank >= 1 && t.Rank <= cfg.TopK {
				out[i].Top = append(out[i].Top, t)
			}
		}
		if own < 0 {
			return nil, "", fmt.Errorf("prompt position %d: the server's log-probabilities leave out the token sent there (%d)", len(ids)+i, id)
		}
		out[i].LogProb = pos.Top[own]
	}
	return out, "", nil
}

// generate is a greedy raw request with the top log-probabilities.
func generate(model string, cfg Config, prompt string, n int) backends.Request {
	return backends.Request{Model: model, Prompt: prompt, Raw: true, MaxTokens: n, Greedy: true, Seed: &cfg.Seed, TopLogProbs: cfg.TopK}
}

// Measure reads the cell's distributions along every path of ref by ref's method and
// compares them with the reference's.
func Measure(ctx context.Context, b backends.Backend, model string, ref *Reference, cfg Config) (Result, error) {
	var r Result
	for _, p := range ref.Paths {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		if ref.Method == Teacher {
			cont := make([]int, len(p.Tokens))
			for i, t := range p.Tokens {
				cont[i] = t.ID
			}
			tf, why, err := teacherPass(ctx, b, model, cfg, p.PromptIDs, cont, &r.Requests)
			if why != "" {
				err = fmt.Errorf("teacher-forced as the reference was: %s", why)
			}
			if err != nil {
				return r, err
			}
			r.Prompts = append(r.Prompts, stats.ComparePrompt(p.Tokens, tf, true))
			continue
		}
		got, err := follow(ctx, b, model, cfg, p, &r)
		if err != nil {
			return r, err
		}
		r.Prompts = append(r.Prompts, stats.ComparePrompt(p.Tokens, got, false))
	}
	return r, nil
}

// follow walks the cell along the reference's path p: generate greedily; at the first
// token that differs, record the cell's distribution there and send the prompt with the
// reference's tokens up to and including that position. A cell that stops early (its
// end-of-text token, which servers return no log-probabilities for), or whose next
// token came back without them (complete), diverges at the next position with no
// distribution there.
func follow(ctx context.Context, b backends.Backend, model string, cfg Config, p Path, r *Result) ([]backends.TokenLogProbs, error) {
	n := len(p.Tokens)
	out := make([]backends.TokenLogProbs, n)
	var prefix strings.Builder
	for pos := 0; pos < n; {
		if pos > 0 {
			r.Restarts++
		}
		s := b.Do(ctx, generate(model, cfg, p.Prompt+prefix.String(), n-pos))
		r.Requests++
		if s.Err != nil {
			return nil, fmt.Errorf("following the reference at token %d: %w", pos+1, s.Err)
		}
		if pos > 0 && p.PromptTokens > 0 && s.PromptTokens != p.PromptTokens+pos {
			r.Retokenized++
		}
		got := s.LogProbs
		if !complete(s) {
			r.Lost++
			var err error
			if got, err = verifiedPrefix(ctx, b, model, cfg, p.Prompt+prefix.String(), min(s.OutputTokens, n-pos), &r.Requests); err != nil {
				return nil, fmt.Errorf("following the reference at token %d: %w", pos+1, err)
			}
		}
		next, diverged := min(pos+len(got), n), false
		for j, t := range got[:next-pos] {
			out[pos+j] = t
			if !t.SameToken(p.Tokens[pos+j].LogProb) {
				next, diverged = pos+j+1, true
				break
			}
		}
		if !diverged && next < n {
			next++ // stopped early: out[next-1] stays empty, a divergence with no distribution
		}
		for _, t := range p.Tokens[pos:next] {
			prefix.WriteString(t.Token)
		}
		pos = next
	}
	return out, nil
}
