package tinymodel

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

func writeHF(t *testing.T, c Config) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteHFDir(dir, c); err != nil {
		t.Fatalf("WriteHFDir: %v", err)
	}
	return dir
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The safetensors file is read back by the format's rules: header length, JSON header,
// then tensors laid end to end, each prod(shape) bfloat16 values, with the names and
// shapes transformers' LlamaForCausalLM loads.
func TestHFSafetensorsLayout(t *testing.T) {
	c := HFConfig()
	dir := writeHF(t, c)
	b, err := os.ReadFile(filepath.Join(dir, HFWeightsName))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	if n%8 != 0 || 8+n > uint64(len(b)) {
		t.Fatalf("header length %d: not 8-aligned or past the file's %d bytes", n, len(b))
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		t.Fatalf("header: %v", err)
	}
	type entry struct {
		DType       string `json:"dtype"`
		Shape       []int  `json:"shape"`
		DataOffsets [2]int `json:"data_offsets"`
	}
	var entries []entry
	shapes := map[string][]int{}
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e.DType != "BF16" {
			t.Errorf("%s: dtype %s, want BF16", name, e.DType)
		}
		size := 2
		for _, d := range e.Shape {
			size *= d
		}
		if e.DataOffsets[1]-e.DataOffsets[0] != size {
			t.Errorf("%s: %d bytes for shape %v, want %d", name, e.DataOffsets[1]-e.DataOffsets[0], e.Shape, size)
		}
		entries = append(entries, e)
		shapes[name] = e.Shape
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].DataOffsets[0] < entries[j].DataOffsets[0] })
	end := 0
	for _, e := range entries {
		if e.DataOffsets[0] != end {
			t.Fatalf("tensor data not contiguous: one starts at %d, previous ended at %d", e.DataOffsets[0], end)
		}
		end = e.DataOffsets[1]
	}
	if uint64(end) != uint64(len(b))-8-n {
		t.Errorf("data ends at %d, file has %d data bytes", end, uint64(len(b))-8-n)
	}
	tokens, _ := BPEVocabulary()
	kv := c.Embedding / c.Heads * c.KVHeads
	want := map[string][]int{
		"model.embed_tokens.weight":              {len(tokens), c.Embedding},
		"model.layers.1.self_attn.k_proj.weight": {kv, c.Embedding},
		"model.layers.1.mlp.down_proj.weight":    {c.Embedding, c.FeedForward},
		"model.norm.weight":                      {c.Embedding},
		"lm_head.weight":                         {len(tokens), c.Embedding},
	}
	for name, shape := range want {
		if got := shapes[name]; !equalInts(got, shape) {
			t.Errorf("%s: shape %v, want %v", name, got, shape)
		}
	}
	if len(shapes) != 3+9*c.Layers {
		t.Errorf("%d tensors, want %d", len(shapes), 3+9*c.Layers)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// vLLM's CPU attention takes head size 64, and the context must cover --max-model-len.
func TestHFConfigForVLLM(t *testing.T) {
	dir := writeHF(t, HFConfig())
	var cfg struct {
		Architectures []string `json:"architectures"`
		HeadDim       int      `json:"head_dim"`
		Hidden        int      `json:"hidden_size"`
		Heads         int      `json:"num_attention_heads"`
		MaxPos        int      `json:"max_position_embeddings"`
		Vocab         int      `json:"vocab_size"`
	}
	readJSON(t, filepath.Join(dir, "config.json"), &cfg)
	tokens, _ := BPEVocabulary()
	if len(cfg.Architectures) != 1 || cfg.Architectures[0] != "LlamaForCausalLM" || cfg.HeadDim != 64 ||
		cfg.Hidden/cfg.Heads != 64 || cfg.MaxPos < 512 || cfg.Vocab != len(tokens) {
		t.Errorf("config.json = %+v: want LlamaForCausalLM, head size 64, >= 512 positions, vocab %d", cfg, len(tokens))
	}
	var tc struct {
		ChatTemplate string `json:"chat_template"`
		AddBOS       bool   `json:"add_bos_token"`
	}
	readJSON(t, filepath.Join(dir, "tokenizer_config.json"), &tc)
	if tc.ChatTemplate == "" || !tc.AddBOS {
		t.Errorf("tokenizer_config.json: chat_template %q, add_bos_token %v: /v1/chat/completions needs a template, both engines a BOS", tc.ChatTemplate, tc.AddBOS)
	}
}

// Every merge joins two tokens already in the vocabulary into the next one, and every
// token string is unique: both tokenizers (Hugging Face's and llama.cpp's) reject less.
func TestBPEVocabularyIsConsistent(t *testing.T) {
	tokens, merges := BPEVocabulary()
	ids := map[string]int{}
	for id, tok := range tokens {
		if prev, dup := ids[tok]; dup {
			t.Fatalf("token %q at ids %d and %d", tok, prev, id)
		}
		ids[tok] = id
	}
	if tokens[HFBOSID] != HFBOS || tokens[HFEOSID] != HFEOS {
		t.Fatalf("special tokens %q %q at 0 and 1", tokens[0], tokens[1])
	}
	first := 2 + 256
	if len(merges) != len(tokens)-first || len(merges) < 50 {
		t.Fatalf("%d merges for %d tokens", len(merges), len(tokens))
	}
	for i, m := range merges {
		if ids[m[0]] >= first+i || ids[m[1]] >= first+i {
			t.Errorf("merge %d %q+%q uses a token not yet made", i, m[0], m[1])
		}
		if ids[m[0]+m[1]] != first+i {
			t.Errorf("merge %d makes %q, which has id %d", i, m[0]+m[1], ids[m[0]+m[1]])
		}
	}
}

// Ollama stores the weights as F16: each bfloat16 value written must be exact in F16
// too (normal range, at most 11 significant bits), or the two engines' weights differ.
func TestHFWeightsAreExactInF16(t *testing.T) {
	for _, tensor := range hfTensors(HFConfig(), 300) {
		for _, v := range tensor.data {
			w := math.Float32frombits(uint32(bfloat16(v)) << 16)
			if a := math.Abs(float64(w)); a != 0 && (a < 0x1p-14 || a > 65504) {
				t.Fatalf("%s: %g is outside F16's normal range", tensor.name, w)
			}
		}
	}
}

func TestBfloat16Rounds(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3F80},
		{-2, 0xC000},
		{math.Float32frombits(0x3F808000), 0x3F80}, // halfway, even stays
		{math.Float32frombits(0x3F818000), 0x3F82}, // halfway, odd rounds up
		{math.Float32frombits(0x3F808001), 0x3F81}, // above halfway
	} {
		if got := bfloat16(tc.in); got != tc.want {
			t.Errorf("bfloat16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

func TestWriteHFDirIsDeterministic(t *testing.T) {
	a, b := writeHF(t, HFConfig()), writeHF(t, HFConfig())
	for _, name := range []string{HFWeightsName, "tokenizer.json", "config.json", "tokenizer_config.json"} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes (or is empty)", name)
		}
	}
}
