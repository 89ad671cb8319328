// Package tinymodel writes a tiny llama-architecture GGUF model with seeded
// random weights, so that a real Ollama (llama.cpp) server can stream real
// tokens in tests and quickstarts without downloading a model.
//
// The output is deterministic: the same Config gives the same bytes on every
// run and machine, so a model digest seen by Ollama is stable too.
package tinymodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/ollama/ollama/fs/ggml"
)

// Config sizes the model. The zero value is not usable; start from DefaultConfig.
type Config struct {
	Name          string  // general.name
	Seed          uint64  // seeds the weights; same seed, same bytes
	Layers        int     // llama.block_count
	Embedding     int     // llama.embedding_length (model width)
	FeedForward   int     // llama.feed_forward_length
	Heads         int     // llama.attention.head_count
	KVHeads       int     // llama.attention.head_count_kv (< Heads means grouped-query attention)
	ContextLength int     // llama.context_length
	NormEpsilon   float32 // llama.attention.layer_norm_rms_epsilon
	// ThinkTags adds the pieces <think> and </think> to the vocabulary and makes </think>
	// likely enough that a thinking model closes its reasoning within a few dozen tokens
	// (ThinkingModelfile). Off, the vocabulary and so every byte stay as they were.
	ThinkTags bool
	// F16 writes the matrices as F16 (norms stay F32), file type MOSTLY_F16: the source
	// Ollama's create --quantize needs (it refuses an all-F32 file as of unknown type).
	// Off, every tensor is F32.
	F16 bool
	// ASCIIOnly holds the byte tokens 0x80–0xFF down as the end of text is held
	// (holdEOS), so every token the model generates is text of its own. Ollama 0.17.4
	// drops the log-probabilities, and the text, of a token that is no UTF-8 by itself,
	// which a random model generates about every other token; a quality phase cannot
	// place the tokens that follow one.
	ASCIIOnly bool
}

// DefaultConfig is the model the tests and the quickstart use: 2 layers of width 64,
// 4 heads of 16, which llama.cpp loads in milliseconds and runs at a few ms per token on a CPU.
func DefaultConfig() Config {
	return Config{
		Name:          "planrun-tiny",
		Seed:          1,
		Layers:        2,
		Embedding:     64,
		FeedForward:   128,
		Heads:         4,
		KVHeads:       2,
		ContextLength: 2048,
		NormEpsilon:   1e-5,
	}
}

// LargeConfig is a model whose weights dominate the server's memory, for the seed's
// table: 8 layers of width 512 (8 heads of 64, 4 KV heads) and a feed-forward width of
// 1536, about 25.5 million parameters (100 MB as F16). Every tensor row is a multiple
// of 256, so Ollama's K-quants (Q4_K_M) take it as well as Q8_0 and F16, and the
// variants it makes from this one file differ in memory as their bits per weight do.
func LargeConfig() Config {
	return Config{
		Name:          "planrun-tiny-large",
		Seed:          1,
		Layers:        8,
		Embedding:     512,
		FeedForward:   1536,
		Heads:         8,
		KVHeads:       4,
		ContextLength: 2048,
		NormEpsilon:   1e-5,
		F16:           true,
		ASCIIOnly:     true,
	}
}

// Params is the model's parameter count, as llama.cpp counts it (every tensor's
// elements, norms included).
func (c Config) Params() int {
	tokens, _, _ := vocabulary(c.ThinkTags)
	n := 0
	for _, w := range llamaWeights(c, len(tokens)) {
		n += w.out * max(w.in, 1)
	}
	return n
}

// File names written by WriteDir.
const (
	GGUFName      = "tiny.gguf"
	ModelfileName = "Modelfile"
)

// Modelfile is what `ollama create` needs: the raw prompt as template (the model
// has no chat format) and a small context so the KV cache stays tiny.
const Modelfile = "FROM ./" + GGUFName + "\nTEMPLATE {{ .Prompt }}\nPARAMETER num_ctx 512\n"

// ThinkingModelfile serves the same GGUF as a model that "supports thinking" in
// Ollama's sense: its template renders .Thinking between <think> and </think> inside the
// range over .Messages (thinking.InferTags finds the tags there), and ends the prompt
// with <think> when the request sets think, so Ollama's parser starts in the reasoning
// and hands out everything up to the model's </think> as "thinking". Write the GGUF
// with ThinkTags, or the model never emits </think>.
const ThinkingModelfile = "FROM ./" + GGUFName + "\n" +
	"TEMPLATE \"\"\"{{- range .Messages }}{{ .Role }}: {{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}\n" +
	"{{ end }}assistant:{{ if and .IsThinkSet .Think }}<think>{{ end }}\"\"\"\n" +
	"PARAMETER num_ctx 512\n"

// thinkTags are the pieces ThinkTags adds, after the word pieces.
var thinkTags = []string{"<think>", "</think>"}

// closeBias scales </think>'s output row (a copy of another token's): its logit then
// spreads that much wider than the others', so it wins a sampled step now and then.
const closeBias = 2.5

// SentencePiece token types (llama_token_type in llama.cpp).
const (
	tokenNormal  int32 = 1
	tokenUnknown int32 = 2
	tokenControl int32 = 3
	tokenByte    int32 = 6
)

// Special token ids, fixed by the vocabulary's order.
const (
	UnknownID = 0 // <unk>
	BOSID     = 1 // <s>
	EOSID     = 2 // </s>
)

// wordPieces are SentencePiece pieces ("▁" marks a word start) so that common
// text tokenizes into more than bytes. Every string in the vocabulary must be
// unique, or llama.cpp aborts while loading.
var wordPieces = []string{
	"▁", "▁the", "▁a", "▁of", "▁and", "▁to", "▁in", "▁is", "▁it", "▁that",
	"▁for", "▁on", "▁with", "▁as", "▁was", "▁be", "▁by", "▁this", "▁are", "▁or",
	"▁hello", "▁world", "▁model", "▁token", "▁plan", "▁run", "▁server", "▁time", "▁first", "▁fast",
	"th", "he", "in", "er", "an", "re", "on", "at", "en", "nd",
	"ing", "ed", "es", "or", "ou", "is", "it", "al", "ar", "st",
	"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
	"n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z",
	".", ",", "!", "?",
}

// Vocabulary returns the token strings, scores and types, in id order:
// <unk> <s> </s>, the 256 byte tokens <0x00>…<0xFF>, then the word pieces.
func Vocabulary() (tokens []string, scores []float32, types []int32) {
	return vocabulary(false)
}

func vocabulary(think bool) (tokens []string, scores []float32, types []int32) {
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	scores = append(scores, 0, 0, 0)
	types = append(types, tokenUnknown, tokenControl, tokenControl)
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		scores = append(scores, 0)
		types = append(types, tokenByte)
	}
	// SentencePiece merges the highest score first; earlier pieces win.
	pieces := wordPieces
	if think {
		pieces = append(slices.Clip(pieces), thinkTags...)
	}
	for i, p := range pieces {
		tokens = append(tokens, p)
		scores = append(scores, -float32(i+1))
		types = append(types, tokenNormal)
	}
	return tokens, scores, types
}

func (c Config) validate() error {
	switch {
	case c.Layers < 1, c.Embedding < 1, c.FeedForward < 1, c.Heads < 1, c.KVHeads < 1, c.ContextLength < 1:
		return errors.New("tinymodel: layers, widths, heads and context length must be positive")
	case c.Embedding%c.Heads != 0:
		return fmt.Errorf("tinymodel: embedding %d is not a multiple of %d heads", c.Embedding, c.Heads)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("tinymodel: %d heads is not a multiple of %d KV heads", c.Heads, c.KVHeads)
	case (c.Embedding/c.Heads)%2 != 0:
		return fmt.Errorf("tinymodel: head size %d must be even for RoPE", c.Embedding/c.Heads)
	}
	return nil
}

// GGUF layout constants the model relies on: 32-byte alignment (ggml's default) and
// F32 tensors, which every ggml backend can multiply.
const (
	ggufAlignment        = 32
	ggmlTypeF32   uint32 = uint32(ggml.TensorTypeF32)
	ggmlTypeF16   uint32 = uint32(ggml.TensorTypeF16)
)

// Write encodes the model described by c to f as GGUF v3, with Ollama's own GGUF writer
// (ggml.WriteGGUF: keys sorted, tensors by block then name). f must be seekable: each
// tensor is written at its offset.
func Write(f *os.File, c Config) error {
	if err := c.validate(); err != nil {
		return err
	}
	tokens, scores, types := vocabulary(c.ThinkTags)
	nVocab := uint64(len(tokens))
	nEmbd := uint64(c.Embedding)
	nFF := uint64(c.FeedForward)
	headDim := nEmbd / uint64(c.Heads)

	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           c.Name,
		"general.file_type":                      fileType(c),
		"general.alignment":                      uint32(ggufAlignment),
		"llama.vocab_size":                       uint32(nVocab),
		"llama.context_length":                   uint32(c.ContextLength),
		"llama.embedding_length":                 uint32(nEmbd),
		"llama.block_count":                      uint32(c.Layers),
		"llama.feed_forward_length":              uint32(nFF),
		"llama.attention.head_count":             uint32(c.Heads),
		"llama.attention.head_count_kv":          uint32(c.KVHeads),
		"llama.rope.dimension_count":             uint32(headDim),
		"llama.rope.freq_base":                   float32(10000),
		"llama.attention.layer_norm_rms_epsilon": c.NormEpsilon,
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.scores":                  scores,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.bos_token_id":            uint32(BOSID),
		"tokenizer.ggml.eos_token_id":            uint32(EOSID),
		"tokenizer.ggml.unknown_token_id":        uint32(UnknownID),
	}

	// Shapes as llama.cpp's llm_load_tensors expects them, ggml order (in, out).
	ws := llamaWeights(c, int(nVocab))
	ts := make([]*ggml.Tensor, len(ws))
	for i, data := range drawWeights(c, ws, false) {
		dims := []uint64{uint64(ws[i].out)}
		if ws[i].in > 0 {
			dims = []uint64{uint64(ws[i].in), uint64(ws[i].out)}
		}
		ts[i] = &ggml.Tensor{Name: ws[i].gguf, Kind: ggmlTypeF32, Shape: dims, WriterTo: f32Data(data)}
		if c.F16 && ws[i].in > 0 {
			ts[i].Kind, ts[i].WriterTo = ggmlTypeF16, f16Data(data)
		}
	}
	return ggml.WriteGGUF(f, kv, ts)
}

// fileType is general.file_type: ALL_F32 (0), or MOSTLY_F16 (1) with F16.
func fileType(c Config) uint32 {
	if c.F16 {
		return 1
	}
	return 0
}

// f16Data is one tensor's weights rounded to IEEE half precision, little-endian.
type f16Data []float32

func (d f16Data) WriteTo(w io.Writer) (int64, error) {
	b := make([]byte, 2*len(d))
	for i, v := range d {
		binary.LittleEndian.PutUint16(b[2*i:], toHalf(v))
	}
	n, err := w.Write(b)
	return int64(n), err
}

// toHalf rounds f to the nearest half-precision value (ties to even). The weights are
// within ±1, so overflow only matters for completeness: it saturates to infinity.
func toHalf(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23&0xff) - 127 + 15
	mant := bits & 0x7fffff
	switch {
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign // below half's subnormals: zero
		}
		mant |= 0x800000 // the implicit one, then shift into a subnormal
		shift := uint(14 - exp)
		half := uint16(mant >> shift)
		rest := mant & (1<<shift - 1)
		if mid := uint32(1) << (shift - 1); rest > mid || rest == mid && half&1 == 1 {
			half++
		}
		return sign | half
	}
	half := uint16(exp)<<10 | uint16(mant>>13)
	if rest := mant & 0x1fff; rest > 0x1000 || rest == 0x1000 && half&1 == 1 {
		half++ // a carry into the exponent is the right rounding too
	}
	return sign | half
}

// f32Data is one tensor's weights, written little-endian as ggml.WriteGGUF asks.
type f32Data []float32

func (d f32Data) WriteTo(w io.Writer) (int64, error) {
	if err := binary.Write(w, binary.LittleEndian, []float32(d)); err != nil {
		return 0, err
	}
	return 4 * int64(len(d)), nil
}

// WriteDir writes GGUFName and ModelfileName into dir (created if missing) and
// returns the Modelfile's path, ready for `ollama create NAME -f PATH`.
func WriteDir(dir string, c Config) (modelfile string, err error) {
	return writeDir(dir, c, Modelfile)
}

// WriteThinkingDir is WriteDir for the thinking model: c with ThinkTags, and
// ThinkingModelfile.
func WriteThinkingDir(dir string, c Config) (modelfile string, err error) {
	c.ThinkTags = true
	return writeDir(dir, c, ThinkingModelfile)
}

func writeDir(dir string, c Config, text string) (modelfile string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	gguf, err := os.Create(filepath.Join(dir, GGUFName))
	if err != nil {
		return "", err
	}
	if err := Write(gguf, c); err != nil {
		gguf.Close()
		return "", err
	}
	if err := gguf.Close(); err != nil {
		return "", err
	}
	modelfile = filepath.Join(dir, ModelfileName)
	if err := os.WriteFile(modelfile, []byte(text), 0o644); err != nil {
		return "", err
	}
	return modelfile, nil
}
