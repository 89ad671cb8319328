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

// A hash-id prompt is cut into blocks of the block size until its words run out: no
// empty block after the last (it would count as a shared prefix); the block size
// defaults to Mooncake's; a shape without a drawn length takes the calibrated words.
func TestPromptLayoutEdges(t *testing.T) {
	p := &Prompts{Words: 4, BlockSize: 2, Fit: Fit{TokensPerWord: 1}}
	if parts := p.layout(Shape{HashIDs: []int64{1, 2, 3}}); len(parts) != 2 || parts[0].words != 2 || parts[1].words != 2 {
		t.Fatalf("layout of 4 words in blocks of 2 over 3 ids: %+v, want two blocks of 2", parts)
	}
	if got := (&Prompts{}).blockSize(); got != DefaultBlockSize {
		t.Errorf("block size without one set: %d, want %d", got, DefaultBlockSize)
	}
	fitted := &Prompts{Words: 7, Fit: Fit{TokensPerWord: 2, Overhead: 10}}
	if got := fitted.totalWords(Shape{}); got != 7 {
		t.Errorf("words of a shape without a drawn length: %d, want the calibrated 7", got)
	}
	if got := fitted.totalWords(Shape{PromptTokens: 30}); got != 10 {
		t.Errorf("words of a 30-token shape at 2 tokens a word + 10: %d, want 10", got)
	}
}

// A block's words: its tokens over the fit's tokens a word, or English's rough rate
// without a fit.
func TestBlockWords(t *testing.T) {
	if got := (Fit{TokensPerWord: 2}).blockWords(10); got != 5 {
		t.Errorf("10 tokens at 2 a word: %d words, want 5", got)
	}
	if got := (Fit{}).blockWords(512); got != roughWords(512) {
		t.Errorf("512 tokens without a fit: %d words, want %d", got, roughWords(512))
	}
}
