package executor

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/planrun/planrun/backends"
)

// Fit is a server's own token count of filler prompts as a line over their words,
// tokens = Overhead + TokensPerWord × words, so a prompt of any drawn length can be built
// without probing each one. Overhead holds the chat template and the request's prefix.
type Fit struct {
	Overhead, TokensPerWord float64
	// MaxErrorPct is the largest miss of the line on the probes, in percent of the count.
	MaxErrorPct float64
	Probes      int
	// Note says why the fit is missing or rough; empty when it is fine.
	Note string
}

// Words is the number of filler words the fit predicts the server counts as tokens;
// without a fit, the rough 0.75 words per token of English text.
func (f Fit) Words(tokens int) int {
	if f.TokensPerWord <= 0 {
		return roughWords(tokens)
	}
	return max(int(math.Round((float64(tokens)-f.Overhead)/f.TokensPerWord)), 1)
}

// roughWords is the filler words of about tokens tokens by the rough 0.75 words per
// token of English text, for when the server's own count is not known.
func roughWords(tokens int) int { return max(tokens*3/4, 1) }

// String is the fit as a row note gives it.
func (f Fit) String() string {
	if f.TokensPerWord <= 0 {
		return "prompt lengths not fitted: " + f.Note
	}
	return fmt.Sprintf("prompt lengths built on the server's count: %.3f tokens/word + %.1f, fit error up to %.1f%% over %d probes",
		f.TokensPerWord, f.Overhead, f.MaxErrorPct, f.Probes)
}

// FitTokens probes the server (max_tokens 1) with filler prompts spanning lo to hi
// tokens and fits its counts with a least-squares line, so drawn lengths between them
// are built to the server's own count (its tokenizer and template, not a guess). Each
// probe's words come from the counts of the probes before it, so the probes land on the
// span whatever the tokenizer: a small model's tokenizer may take four tokens a word,
// and a probe built on English's 0.75 words a token would overrun the model's context,
// which Ollama answers by cutting the prompt, bending the line. A span narrower than
// half of hi is widened down to hi/2, so the line has room to be fitted.
func FitTokens(ctx context.Context, b backends.Backend, tmpl backends.Request, p *Prompts, lo, hi int) Fit {
	hi = max(hi, lo, 1)
	lo = max(min(lo, hi/2), 1)
	var xs, ys []float64
	cal := Calibration{}
	for i := range fitProbes {
		tokens := lo + (hi-lo)*i/(fitProbes-1)
		words := probeWords(xs, ys, tokens)
		probe := *p // its corpus, if any: the fit is of the words requests are built from
		probe.Text, probe.Words = "", words
		got, rejected := measurePrompt(ctx, b, tmpl, &probe, fmt.Sprintf("fit%d", i), &cal)
		// vLLM refuses (400) a probe over its context, where Ollama cuts it: aim lower,
		// at most three times, at words no probe has used yet.
		for try := 0; rejected && try < 3 && words > 1; try++ {
			words = max(words*2/3, 1)
			for slices.Contains(xs, float64(words)) && words > 1 {
				words--
			}
			probe.Words = words
			got, rejected = measurePrompt(ctx, b, tmpl, &probe, fmt.Sprintf("fit%d-%d", i, try), &cal)
		}
		if got <= 0 {
			note := "the server reports no prompt token count"
			if cal.Note != "" {
				note = cal.Note
			}
			return Fit{Probes: cal.Probes, Note: note}
		}
		xs, ys = append(xs, float64(words)), append(ys, float64(got))
	}
	f := lineFit(xs, ys)
	f.Probes = cal.Probes
	if f.TokensPerWord <= 0 {
		return Fit{Probes: cal.Probes, Note: "the server's counts do not grow with the prompt"}
	}
	return f
}

// probeWords is the words of the next probe, meant to be counted as tokens: English's
// rough rate for the first probe, then the first probe's tokens a word (template
// included, so it errs short), then the line through the probes so far. No two probes
// have the same words, so the line is never fitted through one point.
func probeWords(xs, ys []float64, tokens int) int {
	words := roughWords(tokens)
	switch n := len(xs); {
	case n == 1:
		words = max(int(float64(tokens)*xs[0]/ys[0]), 1)
	case n > 1:
		words = lineFit(xs, ys).Words(tokens) // a line that does not rise: roughWords, as before
	}
	for slices.Contains(xs, float64(words)) {
		words++
	}
	return words
}

// fitProbes is how many prompt lengths FitTokens measures: enough for a line and a
// check of it.
const fitProbes = 4

// lineFit is the least-squares line through (xs, ys) and its largest relative miss.
func lineFit(xs, ys []float64) Fit {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return Fit{}
	}
	f := Fit{TokensPerWord: (n*sxy - sx*sy) / den}
	f.Overhead = (sy - f.TokensPerWord*sx) / n
	for i := range xs {
		miss := math.Abs(f.Overhead+f.TokensPerWord*xs[i]-ys[i]) / ys[i] * 100
		f.MaxErrorPct = max(f.MaxErrorPct, miss)
	}
	return f
}
