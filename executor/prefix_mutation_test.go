package executor

import "testing"

// Without a fit, filler words count as the rough 4/3 tokens per English word, rounded.
func TestTokensWithoutAFit(t *testing.T) {
	for words, want := range map[int]int{0: 0, 1: 1, 2: 3, 3: 4, 30: 40} {
		if got := (Fit{}).tokens(words); got != want {
			t.Errorf("%d words: %d tokens, want %d", words, got, want)
		}
	}
	if got := (Fit{TokensPerWord: 1.5}).tokens(3); got != 5 {
		t.Errorf("3 words at 1.5 tokens a word: %d tokens, want 5", got)
	}
}
