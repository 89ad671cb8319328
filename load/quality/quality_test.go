package quality

import (
	"context"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
	"github.com/planrun/planrun/stats"
)

// vocab is the fake model's tokens; "<eos>" ends a generation and is never returned.
var vocab = []string{"<eos>", "a", "b", "c", "d", "e", "f", "g"}

// model is a fake language model: its log-probabilities after a context are a seeded
// function of the context; bump raises one token's logit after the contexts it picks,
// which is how a cell drifts from its reference.
type model struct {
	bump func(ctx []int) (tok int, by float64)
}

func (m model) logProbs(ctx []int) []float64 {
	h := fnv.New64a()
	for _, t := range ctx {
		h.Write([]byte{byte(t)})
	}
	seed := h.Sum64()
	logits := make([]float64, len(vocab))
	for i := range logits {
		seed = seed*6364136223846793005 + 1442695040888963407
		logits[i] = float64(seed>>40) / float64(1<<24) * 4
	}
	logits[0] -= 3 // end of text is unlikely, not impossible
	if m.bump != nil {
		if tok, by := m.bump(ctx); by != 0 {
			logits[tok] += by
		}
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(l)
	}
	for i := range logits {
		logits[i] -= math.Log(sum)
	}
	return logits
}

// fake serves a model the way the quality phase talks to servers: raw text prompts of
// space-separated words, ids where asked, prompt log-probabilities and a tokenizer
// when teacher is set.
type fake struct {
	m        model
	teacher  bool
	requests int
	eosAfter int // the reference stops after this many tokens (0: never early)
	// drop, as Ollama 0.17.4 does with tokens that are no UTF-8 of their own, leaves a
	// token's log-probabilities out of the answer while counting it.
	drop func(tok int) bool
}

func (f *fake) Kind() string { return "fake" }
func (f *fake) Name() string { return "fake.test" }
func (f *fake) Probe(context.Context, []string) backends.ProbeResult {
	return backends.ProbeResult{}
}

func words(text string) []int {
	var ids []int
	for _, w := range strings.Fields(text) {
		ids = append(ids, slices.Index(vocab, w))
	}
	return ids
}

func (f *fake) entry(id int, lp float64, byID bool) backends.LogProb {
	if byID {
		return backends.LogProb{Token: "token_id:" + strconv.Itoa(id), ID: id, LogProb: lp}
	}
	return backends.LogProb{Token: " " + vocab[id], ID: -1, LogProb: lp}
}

// ranked is the position's tokens by log-probability, most likely first.
func ranked(lps []float64) []int {
	order := make([]int, len(lps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case lps[a] > lps[b]:
			return -1
		case lps[a] < lps[b]:
			return 1
		}
		return 0
	})
	return order
}

func (f *fake) Do(_ context.Context, req backends.Request) backends.Sample {
	f.requests++
	ctx := req.PromptIDs
	if ctx == nil {
		ctx = words(req.Prompt)
	}
	s := backends.Sample{PromptTokens: len(ctx)}
	if req.PromptLogProbs > 0 && f.teacher {
		s.PromptLogProbs = make([]backends.TokenLogProbs, len(ctx))
		for i := 1; i < len(ctx); i++ {
			lps := f.m.logProbs(ctx[:i])
			for r, id := range ranked(lps) {
				if r < req.PromptLogProbs || id == ctx[i] {
					e := f.entry(id, lps[id], true)
					e.Rank = r + 1
					s.PromptLogProbs[i].Top = append(s.PromptLogProbs[i].Top, e)
				}
			}
		}
	}
	gen := slices.Clone(ctx)
	for n := 0; n < req.MaxTokens; n++ {
		lps := f.m.logProbs(gen)
		order := ranked(lps)
		tok := order[0]
		if tok == 0 || f.eosAfter > 0 && len(gen) >= f.eosAfter {
			break
		}
		t := backends.TokenLogProbs{LogProb: f.entry(tok, lps[tok], req.TokenIDs)}
		for _, id := range order[:req.TopLogProbs] {
			t.Top = append(t.Top, f.entry(id, lps[id], req.TokenIDs))
		}
		if f.drop == nil || !f.drop(tok) {
			s.LogProbs = append(s.LogProbs, t)
		}
		gen = append(gen, tok)
	}
	s.OutputTokens, s.TokenSource = len(gen)-len(ctx), backends.TokensServer
	return s
}

func (f *fake) Tokenize(_ context.Context, _, text string) ([]int, error) { return words(text), nil }

// followOnly hides the fake's tokenizer: a server that gives only generated tokens'
// log-probabilities (Ollama).
type followOnly struct{ *fake }

func (followOnly) Tokenize() {}

// exhaustive is full teacher forcing, one position at a time, as a check: the cell's
// top-k after each prefix of the reference's path, and its log-probability of the
// reference's token there.
func exhaustive(m model, prompt []int, path []backends.TokenLogProbs, k int) []backends.TokenLogProbs {
	out := make([]backends.TokenLogProbs, len(path))
	ctx := slices.Clone(prompt)
	for i, p := range path {
		lps := m.logProbs(ctx)
		id := slices.Index(vocab, strings.TrimPrefix(p.Token, " "))
		out[i].LogProb = backends.LogProb{Token: p.Token, ID: -1, LogProb: lps[id]}
		for _, t := range ranked(lps)[:k] {
			out[i].Top = append(out[i].Top, backends.LogProb{Token: " " + vocab[t], ID: -1, LogProb: lps[t]})
		}
		ctx = append(ctx, id)
	}
	return out
}

var prompts = []string{"a b", "c d e", "f", "g a c", "b b", "e d"}

func cfg(method string) Config {
	return Config{Prompts: prompts, MaxTokens: 12, TopK: 4, Seed: 1, Method: method}
}

// drifting bumps a token after every context whose length is a multiple of three: the
// cell diverges at known places.
var drifting = model{bump: func(ctx []int) (int, float64) {
	if len(ctx)%3 == 0 {
		return 1 + len(ctx)%(len(vocab)-1), 6
	}
	return 0, 0
}}

// The follow method gives, at every position of the reference's path, exactly the
// distribution full teacher forcing gives, with one request per prompt plus one per
// divergence; the reference against itself has no drift and one request per prompt.
func TestFollowEqualsTeacherForcing(t *testing.T) {
	ctx := context.Background()
	ref := &fake{}
	r, err := Gather(ctx, followOnly{ref}, "ref", cfg(Follow))
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != Follow || len(r.Paths) != len(prompts) || ref.requests != len(prompts) {
		t.Fatalf("gathered %s, %d paths in %d requests", r.Method, len(r.Paths), ref.requests)
	}
	self, err := Measure(ctx, followOnly{ref}, "ref", r, cfg(Follow))
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range self.Prompts {
		if d.Same != d.Positions || d.KL != 0 || d.FirstDivergence != d.Positions+1 || d.Positions != len(r.Paths[i].Tokens) {
			t.Errorf("reference against itself, prompt %d: %+v", i, d)
		}
	}
	if self.Requests != len(prompts) || self.Restarts != 0 {
		t.Errorf("self: %d requests, %d restarts", self.Requests, self.Restarts)
	}

	cell := &fake{m: drifting}
	res, err := Measure(ctx, followOnly{cell}, "cell", r, cfg(Follow))
	if err != nil {
		t.Fatal(err)
	}
	divergences := 0
	for i, p := range r.Paths {
		want := stats.ComparePrompt(p.Tokens, exhaustive(drifting, words(p.Prompt), p.Tokens, 4), false)
		got := res.Prompts[i]
		if got.Positions != want.Positions || got.Same != want.Same || got.FirstDivergence != want.FirstDivergence ||
			got.KL != want.KL || !math.IsNaN(got.LogProbDelta) {
			t.Errorf("prompt %q: followed %+v, teacher-forced %+v", p.Prompt, res.Prompts[i], want)
		}
		divergences += want.Positions - want.Same
	}
	if divergences == 0 {
		t.Fatal("the drifting cell never diverged: the test shows nothing")
	}
	// A divergence on a path's last position needs no restart.
	if res.Requests != len(prompts)+res.Restarts || res.Restarts > divergences || res.Restarts < divergences-len(prompts) {
		t.Errorf("%d requests, %d restarts for %d divergences", res.Requests, res.Restarts, divergences)
	}
	if res.Retokenized != 0 {
		t.Errorf("%d restarts counted as re-tokenized", res.Retokenized)
	}
	if d := stats.SummarizeDrift(res.Prompts, 0.95); d.SameTop1Pct >= 100 || d.KL <= 0 {
		t.Errorf("drift %+v", d)
	}
}

// The teacher method: one request per prompt, the same positions as full teacher
// forcing, and the exact log-likelihood difference of the reference's tokens.
func TestTeacher(t *testing.T) {
	ctx := context.Background()
	ref := &fake{teacher: true}
	r, err := Gather(ctx, ref, "ref", cfg(Auto))
	if err != nil {
		t.Fatal(err)
	}
	// The reference: one generation and one teacher-forced pass per prompt.
	if r.Method != Teacher || ref.requests != 2*len(prompts) || r.Requests != ref.requests {
		t.Fatalf("gathered %s in %d requests (%d counted)", r.Method, ref.requests, r.Requests)
	}
	cell := &fake{m: drifting, teacher: true}
	res, err := Measure(ctx, cell, "cell", r, cfg(Auto))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != len(prompts) || cell.requests != len(prompts) {
		t.Errorf("%d requests", res.Requests)
	}
	for i, p := range r.Paths {
		ctxIDs := slices.Clone(p.PromptIDs)
		var lpDiff float64
		for _, tok := range p.Tokens {
			lpDiff += drifting.logProbs(ctxIDs)[tok.ID] - (model{}).logProbs(ctxIDs)[tok.ID]
			ctxIDs = append(ctxIDs, tok.ID)
		}
		want := lpDiff / float64(len(p.Tokens))
		got := res.Prompts[i]
		if math.Abs(got.LogProbDelta-want) > 1e-12 || got.Positions != len(p.Tokens) {
			t.Errorf("prompt %d: Δlogp %g, want %g (%+v)", i, got.LogProbDelta, want, got)
		}
	}
	self, err := Measure(ctx, ref, "ref", r, cfg(Auto))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range self.Prompts {
		if d.Same != d.Positions || d.KL != 0 || d.LogProbDelta != 0 {
			t.Errorf("reference against itself: %+v", d)
		}
	}
	// Teacher asked of a server without it is an error; auto follows.
	if _, err := Gather(ctx, followOnly{&fake{}}, "ref", cfg(Teacher)); err == nil {
		t.Error("teacher without a tokenizer: no error")
	}
	if r, err := Gather(ctx, &fake{}, "ref", cfg(Auto)); err != nil || r.Method != Follow || !strings.Contains(r.Why, "prompt log-probabilities") {
		t.Errorf("auto without prompt log-probabilities: %+v, %v", r, err)
	}
}

// A cell that stops where the reference goes on diverges there, with no distribution,
// and is sent the reference's next prefix.
func TestFollowStopsEarly(t *testing.T) {
	ctx := context.Background()
	r, err := Gather(ctx, followOnly{&fake{}}, "ref", Config{Prompts: []string{"a b"}, MaxTokens: 6, TopK: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cell := &fake{eosAfter: 4} // generates 2 tokens from the 2-word prompt, then stops
	res, err := Measure(ctx, followOnly{cell}, "cell", r, Config{Prompts: []string{"a b"}, MaxTokens: 6, TopK: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Prompts[0]
	if d.Positions != 6 || d.FirstDivergence != 3 || d.Same != 2 {
		t.Errorf("%+v: want 6 positions, 2 the same, diverged at 3", d)
	}
}

// A server that drops some tokens' log-probabilities (counting the tokens) gives a
// reference path cut before the first such token, never a shifted one, and a cell whose
// token there is dropped diverges there with no distribution: the same tokens agree as
// under full teacher forcing, at the same positions.
func TestDroppedLogProbs(t *testing.T) {
	ctx := context.Background()
	g := slices.Index(vocab, "g")
	dropG := func(tok int) bool { return tok == g }
	ref := &fake{drop: dropG}
	r, err := Gather(ctx, followOnly{ref}, "ref", cfg(Follow))
	if err != nil {
		t.Fatal(err)
	}
	if r.Cut == 0 {
		t.Fatal("no continuation was cut: the test shows nothing")
	}
	whole := &fake{}
	for _, p := range r.Paths {
		truth := whole.Do(ctx, generate("ref", cfg(Follow), p.Prompt, 12)).LogProbs
		for i, tok := range p.Tokens {
			if tok.Token == " g" || tok.Token != truth[i].Token {
				t.Errorf("prompt %q, position %d: %q, the model generated %q", p.Prompt, i+1, tok.Token, truth[i].Token)
			}
		}
		if len(p.Tokens) < len(truth) && truth[len(p.Tokens)].Token != " g" {
			t.Errorf("prompt %q cut at %d before %q, not a dropped token", p.Prompt, len(p.Tokens), truth[len(p.Tokens)].Token)
		}
	}
	cell := &fake{m: drifting, drop: dropG}
	res, err := Measure(ctx, followOnly{cell}, "cell", r, cfg(Follow))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range r.Paths {
		want := stats.ComparePrompt(p.Tokens, exhaustive(drifting, words(p.Prompt), p.Tokens, 4), false)
		got := res.Prompts[i]
		if got.Positions != want.Positions || got.Same != want.Same || got.FirstDivergence != want.FirstDivergence {
			t.Errorf("prompt %q: followed %+v, teacher-forced %+v", p.Prompt, got, want)
		}
	}
	t.Logf("%d of %d continuations cut; %d positions lost in the cell, %d requests", r.Cut, len(r.Paths), res.Lost, res.Requests)
}
