package tinymodel

import (
	"strings"
	"testing"
)

// The model holds EOS down (holdEOS): dimension 0 of the residual stream is 1 for every
// token and no layer writes to it, and only the EOS token's output row reads it, at
// -eosHold (and, in an ASCIIOnly GGUF, the high byte tokens' rows). A real Ollama shows the effect (every request of the Ollama apply test runs
// to its max_tokens); this checks the construction in both layouts.
func TestEOSIsHeldDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		hf   bool
		eos  int
	}{{"gguf", DefaultConfig(), false, EOSID}, {"gguf large", LargeConfig(), false, EOSID}, {"hf", HFConfig(), true, HFEOSID}} {
		tokens, _, _ := vocabulary(tc.c.ThinkTags)
		if tc.hf {
			tokens, _ = BPEVocabulary()
		}
		vocab := len(tokens)
		if tc.c.ASCIIOnly && !tc.hf && (tokens[firstByteID+0x80] != "<0x80>" || tokens[firstByteID+0xFF] != "<0xFF>") {
			t.Fatalf("%s: the high byte tokens are not at %d–%d", tc.name, firstByteID+0x80, firstByteID+0xFF)
		}
		ws := llamaWeights(tc.c, vocab)
		out := drawWeights(tc.c, ws, tc.hf)
		writers := 0
		for i, w := range ws {
			switch {
			case w.gguf == "token_embd.weight":
				for tok := range w.out {
					if v := out[i][tok*w.in]; v != 1 {
						t.Fatalf("%s: token %d embeds %v in dimension 0, want 1", tc.name, tok, v)
					}
				}
			case strings.HasSuffix(w.gguf, ".attn_output.weight"), strings.HasSuffix(w.gguf, ".ffn_down.weight"):
				writers++
				for j, v := range out[i][:w.in] {
					if v != 0 {
						t.Fatalf("%s: %s writes %v to dimension 0 (from %d)", tc.name, w.gguf, v, j)
					}
				}
			case w.gguf == "output.weight":
				for tok := range w.out {
					want := float32(0)
					if tok == tc.eos || tc.c.ASCIIOnly && !tc.hf && tok >= firstByteID+0x80 && tok <= firstByteID+0xFF {
						want = -eosHold
					}
					if v := out[i][tok*w.in]; v != want {
						t.Fatalf("%s: token %d reads dimension 0 at %v, want %v", tc.name, tok, v, want)
					}
				}
				for j, v := range out[i][tc.eos*w.in+1 : (tc.eos+1)*w.in] {
					if v != 0 {
						t.Fatalf("%s: EOS reads dimension %d at %v, want only dimension 0", tc.name, j+1, v)
					}
				}
			}
		}
		if want := 2 * tc.c.Layers; writers != want {
			t.Errorf("%s: %d weights write the residual stream, want %d (attention output and FFN down per layer)", tc.name, writers, want)
		}
	}
}
