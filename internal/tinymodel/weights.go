package tinymodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// llamaWeight is one weight of the llama layout, named as the GGUF file and as the
// Hugging Face checkpoint name it.
type llamaWeight struct {
	gguf, hf string
	// out and in are the weight's shape in Hugging Face's (out, in) row-major order; GGUF
	// lists the same dims reversed, ggml's (in, out), over the same values. in is 0 for
	// a norm: out ones.
	out, in int
	// fanIn bounds the draw at ±1/sqrt(fanIn), which keeps activations near unit size
	// through the layers; ggufFanIn, where set, is the GGUF file's own (its output head
	// was drawn at 1, and the model's digest pins every byte).
	fanIn, ggufFanIn int
}

// llamaWeights lists the model's weights in the order they are drawn, with the names
// and shapes llama.cpp's llm_load_tensors and transformers' LlamaForCausalLM load.
func llamaWeights(c Config, vocab int) []llamaWeight {
	d, ff := c.Embedding, c.FeedForward
	kv := d / c.Heads * c.KVHeads
	ws := []llamaWeight{{gguf: "token_embd.weight", hf: "model.embed_tokens.weight", out: vocab, in: d, fanIn: 1}}
	for l := 0; l < c.Layers; l++ {
		g, h := fmt.Sprintf("blk.%d.", l), fmt.Sprintf("model.layers.%d.", l)
		for _, w := range []llamaWeight{
			{gguf: "attn_norm.weight", hf: "input_layernorm.weight", out: d},
			{gguf: "attn_q.weight", hf: "self_attn.q_proj.weight", out: d, in: d, fanIn: d},
			{gguf: "attn_k.weight", hf: "self_attn.k_proj.weight", out: kv, in: d, fanIn: d},
			{gguf: "attn_v.weight", hf: "self_attn.v_proj.weight", out: kv, in: d, fanIn: d},
			{gguf: "attn_output.weight", hf: "self_attn.o_proj.weight", out: d, in: d, fanIn: d},
			{gguf: "ffn_norm.weight", hf: "post_attention_layernorm.weight", out: d},
			{gguf: "ffn_gate.weight", hf: "mlp.gate_proj.weight", out: ff, in: d, fanIn: d},
			{gguf: "ffn_up.weight", hf: "mlp.up_proj.weight", out: ff, in: d, fanIn: d},
			{gguf: "ffn_down.weight", hf: "mlp.down_proj.weight", out: d, in: ff, fanIn: ff},
		} {
			w.gguf, w.hf = g+w.gguf, h+w.hf
			ws = append(ws, w)
		}
	}
	return append(ws, llamaWeight{gguf: "output_norm.weight", hf: "model.norm.weight", out: d},
		llamaWeight{gguf: "output.weight", hf: "lm_head.weight", out: vocab, in: d, fanIn: d, ggufFanIn: 1})
}

// drawWeights draws every weight's values in the order of ws from one generator seeded
// by c.Seed, so the order fixes every weight: uniform within the weight's bound, ones
// for a norm. For the Hugging Face checkpoint (hf), draws below F16's normal range are
// 0: Ollama's F16 copy would round them, and both engines must run the same weights.
func drawWeights(c Config, ws []llamaWeight, hf bool) [][]float32 {
	rng := rand.New(rand.NewPCG(c.Seed, 0x706c616e72756e)) // "planrun"
	out := make([][]float32, len(ws))
	for i, w := range ws {
		if w.in == 0 {
			out[i] = make([]float32, w.out)
			for j := range out[i] {
				out[i][j] = 1
			}
			continue
		}
		fanIn := w.fanIn
		if !hf && w.ggufFanIn > 0 {
			fanIn = w.ggufFanIn
		}
		bound := 1 / math.Sqrt(float64(fanIn))
		data := make([]float32, w.out*w.in)
		for j := range data {
			v := (rng.Float64()*2 - 1) * bound
			if hf && math.Abs(v) < 0x1p-14 {
				v = 0
			}
			data[j] = float32(v)
		}
		out[i] = data
	}
	eos := EOSID
	if hf {
		eos = HFEOSID
	}
	holdEOS(ws, out, eos)
	if c.ASCIIOnly && !hf {
		holdHighBytes(ws, out)
	}
	if c.ThinkTags {
		// </think>, the last token, gets a scaled copy of another token's output row (the
		// last weight: one row of w.in per token in both layouts), so its logit spreads
		// wider than the others' and a thinking model closes its reasoning now and then.
		head, w := out[len(out)-1], ws[len(ws)-1]
		for j := range w.in {
			head[(w.out-1)*w.in+j] = closeBias * head[(w.out-3)*w.in+j]
		}
	}
	return out
}

// firstByteID is the id of the byte token <0x00>: the 256 byte tokens follow <unk> <s>
// </s> (Vocabulary).
const firstByteID = 3

// holdHighBytes gives the byte tokens 0x80–0xFF the end of text's -eosHold on the
// constant dimension 0 (holdEOS), their other dimensions kept: they stay in every
// distribution, far below the tokens that are text of their own (Config.ASCIIOnly).
func holdHighBytes(ws []llamaWeight, out [][]float32) {
	for i, w := range ws {
		if w.gguf == "output.weight" {
			for b := 0x80; b <= 0xFF; b++ {
				out[i][(firstByteID+b)*w.in] = -eosHold
			}
		}
	}
}

// eosHold is how far below zero the end-of-sequence logit sits (in units of the
// normalized hidden state's constant dimension): far below any other token's, whose
// logits spread a few units either way.
const eosHold = 64

// holdEOS makes the model never end a sequence of its own accord, so a request runs to
// its max_tokens on Ollama as on vLLM with ignore_eos (Ollama has no such option): a
// random model otherwise stops after a token or two now and then, and a level whose
// requests all stopped that early times no decode. Dimension 0 of the residual stream
// is held at 1: every token's embedding has 1 there, and no layer writes to it (row 0
// of each attention output and FFN down projection is 0). After the final norm it is
// positive, so an output row of zeros but -eosHold there gives the EOS token a logit
// far below the rest; every other token's row has 0 there, so their logits still come
// from the random dimensions alone.
func holdEOS(ws []llamaWeight, out [][]float32, eos int) {
	for i, w := range ws {
		switch {
		case w.gguf == "token_embd.weight":
			for tok := range w.out {
				out[i][tok*w.in] = 1
			}
		case strings.HasSuffix(w.gguf, ".attn_output.weight"), strings.HasSuffix(w.gguf, ".ffn_down.weight"):
			clear(out[i][:w.in]) // row 0: what the layer adds to dimension 0
		case w.gguf == "output.weight":
			for tok := range w.out {
				out[i][tok*w.in] = 0
			}
			row := out[i][eos*w.in : (eos+1)*w.in]
			clear(row)
			row[0] = -eosHold
		}
	}
}
