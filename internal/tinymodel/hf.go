package tinymodel

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// HFConfig is the checkpoint WriteHFDir writes by default: 4 heads of 64 (a head size
// every vLLM CPU attention kernel accepts), 2 KV heads, 2 layers, a 2048-token context.
// The GGUF model keeps its own smaller DefaultConfig, which the Ollama tests pin by digest.
func HFConfig() Config {
	return Config{
		Name:          "planrun-tiny-hf",
		Seed:          1,
		Layers:        2,
		Embedding:     256,
		FeedForward:   512,
		Heads:         4,
		KVHeads:       2,
		ContextLength: 2048,
		NormEpsilon:   1e-5,
	}
}

// File names of the Hugging Face-layout checkpoint written by WriteHFDir. The same
// directory is what vLLM serves (`vllm serve DIR`) and what `ollama create` imports
// (HFModelfileName has `FROM .`), so both engines run the same tensors and tokenizer.
const (
	HFWeightsName   = "model.safetensors"
	HFModelfileName = "Modelfile"
)

// HFModelfile imports the checkpoint into Ollama: the converter reads config.json,
// tokenizer.json and the safetensors. Its template mirrors the chat_template in
// tokenizer_config.json, so a chat prompt renders to the same text in both engines;
// a plain prompt is sent as is.
const HFModelfile = "FROM .\n" +
	"TEMPLATE \"\"\"{{- if .Messages }}{{ range .Messages }}{{ .Role }}: {{ .Content }}\n{{ end }}assistant:{{ else }}{{ .Prompt }}{{ end }}\"\"\"\n" +
	"PARAMETER num_ctx 512\n"

// hfChatTemplate is the Jinja form of HFModelfile's template. It writes the BOS token
// itself, so vLLM tokenizes the rendered chat without adding a second one.
const hfChatTemplate = "{{ bos_token }}{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}" +
	"{% if add_generation_prompt %}assistant:{% endif %}"

// llama3Split is Llama 3's pre-tokenizer regex. Ollama's converter recognises it by
// digest and tells llama.cpp to split text the same way ("llama-bpe"), so both engines
// cut the same words before the BPE merges.
const llama3Split = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Special tokens of the byte-level BPE vocabulary, ids fixed by its order.
const (
	HFBOS   = "<s>"
	HFEOS   = "</s>"
	HFBOSID = 0
	HFEOSID = 1
)

// byteLevelRunes is GPT-2's byte-to-character table: printable Latin-1 bytes stand
// for themselves, the rest map to U+0100 upwards, so every byte is one visible rune.
func byteLevelRunes() [256]rune {
	var m [256]rune
	next := rune(256)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = next
			next++
		}
	}
	return m
}

// BPEVocabulary returns the byte-level BPE tokenizer's vocabulary in id order
// (<s> </s>, the 256 byte tokens, then one token per merge) and its merges in rank
// order. The merges build each word piece of the SentencePiece vocabulary left to
// right, shorter results first, as a trained BPE ranks them.
func BPEVocabulary() (tokens []string, merges [][2]string) {
	runes := byteLevelRunes()
	tokens = []string{HFBOS, HFEOS}
	have := map[string]bool{}
	for _, r := range runes {
		tokens = append(tokens, string(r))
		have[string(r)] = true
	}
	type merge struct {
		pair [2]string
		n    int // runes in the merged token
	}
	var ms []merge
	for _, p := range wordPieces {
		var word []rune
		for _, b := range []byte(sentencePieceToText(p)) {
			word = append(word, runes[b])
		}
		for i := 2; i <= len(word); i++ {
			left, right, whole := string(word[:i-1]), string(word[i-1]), string(word[:i])
			if !have[whole] {
				have[whole] = true
				ms = append(ms, merge{[2]string{left, right}, i})
			}
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].n < ms[j].n })
	for _, m := range ms {
		merges = append(merges, m.pair)
		tokens = append(tokens, m.pair[0]+m.pair[1])
	}
	return tokens, merges
}

// sentencePieceToText turns a piece's "▁" word-start mark into the space it stands for.
func sentencePieceToText(p string) string {
	out := []rune{}
	for _, r := range p {
		if r == '▁' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}

// WriteHFDir writes a Hugging Face-layout Llama checkpoint into dir (created if
// missing): config.json, generation_config.json, model.safetensors (bfloat16),
// tokenizer.json, tokenizer_config.json, special_tokens_map.json and a Modelfile for
// `ollama create`. The same Config gives the same bytes on every run.
func WriteHFDir(dir string, c Config) error {
	if err := c.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tokens, merges := BPEVocabulary()
	added := []int{HFBOSID, HFEOSID}
	if c.ThinkTags {
		// Added tokens, as DeepSeek-R1's are: vLLM's reasoning parsers look them up by
		// string and split the stream at their ids.
		for _, tag := range thinkTags {
			added = append(added, len(tokens))
			tokens = append(tokens, tag)
		}
	}
	files := map[string]any{
		"config.json":             hfModelConfig(c, len(tokens)),
		"generation_config.json":  map[string]any{"bos_token_id": HFBOSID, "eos_token_id": HFEOSID, "do_sample": false},
		"tokenizer.json":          hfTokenizer(tokens, merges, added),
		"tokenizer_config.json":   hfTokenizerConfig(c),
		"special_tokens_map.json": map[string]any{"bos_token": HFBOS, "eos_token": HFEOS},
	}
	for name, v := range files {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, HFModelfileName), []byte(HFModelfile), 0o644); err != nil {
		return err
	}
	return writeSafetensors(filepath.Join(dir, HFWeightsName), hfTensors(c, len(tokens)))
}

func hfModelConfig(c Config, vocab int) map[string]any {
	return map[string]any{
		"architectures":           []string{"LlamaForCausalLM"},
		"model_type":              "llama",
		"hidden_size":             c.Embedding,
		"intermediate_size":       c.FeedForward,
		"num_hidden_layers":       c.Layers,
		"num_attention_heads":     c.Heads,
		"num_key_value_heads":     c.KVHeads,
		"head_dim":                c.Embedding / c.Heads,
		"max_position_embeddings": c.ContextLength,
		"rms_norm_eps":            c.NormEpsilon,
		"rope_theta":              10000.0,
		"vocab_size":              vocab,
		"hidden_act":              "silu",
		"tie_word_embeddings":     false,
		"bos_token_id":            HFBOSID,
		"eos_token_id":            HFEOSID,
		"torch_dtype":             "bfloat16",
	}
}

func hfTokenizer(tokens []string, merges [][2]string, added []int) map[string]any {
	vocab := make(map[string]int, len(tokens))
	for id, t := range tokens {
		vocab[t] = id
	}
	special := func(id int) map[string]any {
		return map[string]any{"id": id, "content": tokens[id], "single_word": false, "lstrip": false,
			"rstrip": false, "normalized": false, "special": id == HFBOSID || id == HFEOSID}
	}
	var addedTokens []any
	for _, id := range added {
		addedTokens = append(addedTokens, special(id))
	}
	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}
	return map[string]any{
		"version":      "1.0",
		"truncation":   nil,
		"padding":      nil,
		"added_tokens": addedTokens,
		"normalizer":   nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": llama3Split}, "behavior": "Isolated", "invert": false},
			byteLevel,
		}},
		// BOS first, as Llama adds it; Ollama reads the same choice from add_bos_token.
		"post_processor": map[string]any{
			"type":           "TemplateProcessing",
			"single":         []any{map[string]any{"SpecialToken": map[string]any{"id": HFBOS, "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"pair":           []any{map[string]any{"SpecialToken": map[string]any{"id": HFBOS, "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}, map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 1}}},
			"special_tokens": map[string]any{HFBOS: map[string]any{"id": HFBOS, "ids": []int{HFBOSID}, "tokens": []string{HFBOS}}},
		},
		"decoder": byteLevel,
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": false, "byte_fallback": false,
			// As Llama 3 (and llama.cpp for its "llama-bpe" pre-tokenizer): a word that is
			// itself a token is one token, whatever the merges would make of it.
			"ignore_merges": true,
			"vocab":         vocab, "merges": merges,
		},
	}
}

func hfTokenizerConfig(c Config) map[string]any {
	return map[string]any{
		"tokenizer_class":  "PreTrainedTokenizerFast",
		"bos_token":        HFBOS,
		"eos_token":        HFEOS,
		"add_bos_token":    true,
		"add_eos_token":    false,
		"model_max_length": c.ContextLength,
		"chat_template":    hfChatTemplate,
	}
}

// hfTensor is one named weight in Hugging Face's (out, in) row-major layout.
type hfTensor struct {
	name  string
	shape []int
	data  []float32
}

// hfTensors are the weights under the names and in the (out, in) shapes transformers'
// LlamaForCausalLM loads.
func hfTensors(c Config, vocab int) []hfTensor {
	ws := llamaWeights(c, vocab)
	ts := make([]hfTensor, len(ws))
	for i, data := range drawWeights(c, ws, true) {
		shape := []int{ws[i].out}
		if ws[i].in > 0 {
			shape = append(shape, ws[i].in)
		}
		ts[i] = hfTensor{ws[i].hf, shape, data}
	}
	return ts
}

// writeSafetensors writes the safetensors format: an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range, then the
// raw data. Weights are stored as bfloat16, the dtype vLLM's CPU backend runs in;
// Ollama's converter stores them as F16, which holds every one exactly (hfTensors
// keeps values inside F16's normal range, and bfloat16's 8-bit mantissa fits F16's 11).
func writeSafetensors(path string, ts []hfTensor) error {
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, t := range ts {
		start := len(data)
		for _, v := range t.data {
			data = binary.LittleEndian.AppendUint16(data, bfloat16(v))
		}
		header[t.name] = map[string]any{"dtype": "BF16", "shape": t.shape, "data_offsets": []int{start, len(data)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 { // the format pads the header with spaces to 8-byte alignment
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	return os.WriteFile(path, out, 0o644)
}

// bfloat16 rounds f to the nearest bfloat16 (ties to even), as torch does.
func bfloat16(f float32) uint16 {
	u := math.Float32bits(f)
	return uint16((u + 0x7FFF + (u>>16)&1) >> 16)
}
