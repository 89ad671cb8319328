package executor

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/planrun/planrun/backends"
)

func TestLineFit(t *testing.T) {
	// 1.3 tokens a word plus 12 of template, with one count off by one.
	f := lineFit([]float64{10, 100, 200, 400}, []float64{25, 142, 272, 533})
	if math.Abs(f.TokensPerWord-1.3) > 0.01 || math.Abs(f.Overhead-12) > 1 || f.MaxErrorPct <= 0 || f.MaxErrorPct > 5 {
		t.Fatalf("fit = %+v", f)
	}
	// The least-squares line and its largest miss, computed apart in float64 (Python).
	if math.Abs(f.TokensPerWord-1.3026464466250371) > 1e-12 || math.Abs(f.Overhead-11.780255724055905) > 1e-9 ||
		math.Abs(f.MaxErrorPct-0.7731192387748962) > 1e-9 {
		t.Fatalf("fit = %+v, want 1.30264644662504 tokens/word + 11.7802557240559, largest miss 0.773119238774896%%", f)
	}
	if w := f.Words(142); w < 99 || w > 101 {
		t.Errorf("Words(142) = %d, want about 100", w)
	}
	if w := (Fit{}).Words(100); w != 75 {
		t.Errorf("without a fit Words(100) = %d, want the rough 75", w)
	}
	if f := lineFit([]float64{5, 5}, []float64{9, 9}); f.TokensPerWord != 0 {
		t.Errorf("a fit through one point: %+v", f)
	}
}

func TestShapedPrompts(t *testing.T) {
	p := &Prompts{Shared: true, Words: 2, Corpus: strings.Fields("a b c d e"), Fit: Fit{TokensPerWord: 1}}
	for _, tc := range []struct {
		sh   Shape
		want string
	}{
		{Shape{PromptTokens: 3, Offset: 1}, "b c d"},
		{Shape{PromptTokens: 4, Offset: 3}, "d e a b"}, // the corpus wraps
		{Shape{Offset: 2}, "c d"},                      // no drawn length: the calibrated words
		{Shape{Text: "a row", PromptTokens: 9}, "a row"},
	} {
		if got := p.Shaped("r", tc.sh); got != tc.want {
			t.Errorf("Shaped(%+v) = %q, want %q", tc.sh, got, tc.want)
		}
	}
	p.Text = "fixed text"
	if got := p.Shaped("r", Shape{Offset: 2}); got != "fixed text" {
		t.Errorf("with the plan's prompt and no drawn length: %q", got)
	}
	p.Shared, p.Corpus, p.Text = false, nil, ""
	if got := p.Shaped("r", Shape{PromptTokens: 3}); len(strings.Fields(got)) != 4 || !strings.HasPrefix(got, "[") {
		t.Errorf("filler prompt %q: want a prefix and 3 words", got)
	}
}

// A tokenizer of four tokens a word with a 512-token context that cuts longer prompts
// (as Ollama does): probes built on English's 0.75 words a token would overrun it and
// bend the line; probes aimed by the counts before them stay inside and fit exactly.
func TestFitTokensAimsProbesAtTheServersCount(t *testing.T) {
	for _, tc := range []struct{ perWord, lo, hi int }{{4, 150, 250}, {1, 150, 250}, {4, 200, 200}, {4, 160, 400}} {
		var asked []int
		fb := &fakeBackend{promptTokens: func(prompt string) int {
			n := 10 + tc.perWord*len(strings.Fields(prompt))
			asked = append(asked, n)
			return min(n, 512)
		}}
		f := FitTokens(context.Background(), fb, backends.Request{}, &Prompts{Shared: true}, tc.lo, tc.hi)
		if math.Abs(f.TokensPerWord-float64(tc.perWord)) > 1e-6 || math.Abs(f.Overhead-10) > 1e-6 || f.MaxErrorPct > 1e-6 {
			t.Errorf("%+v: fit %+v, want %d tokens/word + 10 exactly (probes counted %v)", tc, f, tc.perWord, asked)
		}
		for _, n := range asked {
			if n > 512 {
				t.Errorf("%+v: a probe of %d tokens overran the context (probes %v)", tc, n, asked)
			}
		}
		for _, want := range []int{tc.lo, tc.hi} {
			if got := 10 + tc.perWord*f.Words(want); math.Abs(float64(got-want)) > float64(tc.perWord) {
				t.Errorf("%+v: a %d-token prompt is built as %d tokens", tc, want, got)
			}
		}
		if lo, hi := slices.Min(asked), slices.Max(asked); hi-lo < (tc.hi-min(tc.lo, tc.hi/2))/2 {
			t.Errorf("%+v: the probes span %d to %d tokens, too little of the span for a line (probes %v)", tc, lo, hi, asked)
		}
	}
}

// The fit as the row note states it, and without a fit, why.
func TestFitString(t *testing.T) {
	f := Fit{Overhead: 7.25, TokensPerWord: 1.3333, MaxErrorPct: 2.46, Probes: 4}
	if got, want := f.String(), "prompt lengths built on the server's count: 1.333 tokens/word + 7.2, fit error up to 2.5% over 4 probes"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := (Fit{Note: "no count"}).String(), "prompt lengths not fitted: no count"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// A probe never repeats an earlier probe's words: the line needs distinct points.
func TestProbeWordsSkipsWordsAlreadyProbed(t *testing.T) {
	// One probe of 10 words counted 10 tokens: 10 tokens aims at 10 words, taken, so 11.
	if got := probeWords([]float64{10}, []float64{10}, 10); got != 11 {
		t.Fatalf("probeWords = %d, want 11", got)
	}
	if got := probeWords([]float64{10, 11}, []float64{10, 11}, 10); got != 12 {
		t.Fatalf("probeWords = %d, want 12 (10 and 11 taken)", got)
	}
}
