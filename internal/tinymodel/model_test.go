package tinymodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	// Ollama's own GGUF reader: the file must read back as llama.cpp needs it.
	"github.com/ollama/ollama/fs/ggml"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func encode(t *testing.T, c Config) []byte {
	t.Helper()
	f := tempFile(t)
	if err := Write(f, c); err != nil {
		t.Fatalf("Write: %v", err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tempFile is a file for Write, which needs one it can seek in; it is closed at the end.
func tempFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), GGUFName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// The model's bytes become the digest Ollama reports for it, so they must not drift
// between runs, machines or Go releases. The golden digest makes any change deliberate.
func TestWriteIsDeterministic(t *testing.T) {
	first := digest(encode(t, DefaultConfig()))
	second := digest(encode(t, DefaultConfig()))
	if first != second {
		t.Fatalf("two writes of the same config differ: %s vs %s", first, second)
	}

	other := DefaultConfig()
	other.Seed++
	if d := digest(encode(t, other)); d == first {
		t.Fatalf("seed %d and %d gave the same bytes", DefaultConfig().Seed, other.Seed)
	}

	golden := filepath.Join("testdata", "default.sha256")
	if *update {
		if err := os.WriteFile(golden, []byte(first+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got := first; got != strings.TrimSpace(string(want)) {
		t.Errorf("default model digest = %s, golden %s has %s (intended? go test -update)", got, golden, want)
	}
}

// TestOllamaReadsModel decodes the file with Ollama's GGUF reader and checks what
// llama.cpp relies on: metadata, tensor shapes and the aligned data offsets.
func TestOllamaReadsModel(t *testing.T) {
	c := DefaultConfig()
	raw := encode(t, c)
	f, err := ggml.Decode(bytes.NewReader(raw), -1)
	if err != nil {
		t.Fatalf("ggml.Decode: %v", err)
	}
	kv := f.KV()

	strs := []struct{ key, want string }{
		{"general.architecture", "llama"},
		{"general.name", c.Name},
		{"tokenizer.ggml.model", "llama"},
	}
	for _, s := range strs {
		if got := kv.String(s.key); got != s.want {
			t.Errorf("%s = %q, want %q", s.key, got, s.want)
		}
	}
	tokens, _, _ := Vocabulary()
	uints := []struct {
		key  string
		want uint32
	}{
		{"general.file_type", 0},
		{"general.alignment", ggufAlignment},
		{"llama.vocab_size", uint32(len(tokens))},
		{"llama.context_length", uint32(c.ContextLength)},
		{"llama.embedding_length", uint32(c.Embedding)},
		{"llama.block_count", uint32(c.Layers)},
		{"llama.feed_forward_length", uint32(c.FeedForward)},
		{"llama.attention.head_count", uint32(c.Heads)},
		{"llama.attention.head_count_kv", uint32(c.KVHeads)},
		{"llama.rope.dimension_count", uint32(c.Embedding / c.Heads)},
		{"tokenizer.ggml.bos_token_id", BOSID},
		{"tokenizer.ggml.eos_token_id", EOSID},
		{"tokenizer.ggml.unknown_token_id", UnknownID},
	}
	for _, u := range uints {
		if got, ok := kv.Value(u.key).(uint32); !ok || got != u.want {
			t.Errorf("%s = %#v, want uint32 %d", u.key, kv.Value(u.key), u.want)
		}
	}
	// kv.Float would prefix the architecture again; read the full key.
	if got, ok := kv.Value("llama.attention.layer_norm_rms_epsilon").(float32); !ok || got != c.NormEpsilon {
		t.Errorf("layer_norm_rms_epsilon = %#v, want float32 %v", kv.Value("llama.attention.layer_norm_rms_epsilon"), c.NormEpsilon)
	}
	if got := kv.Strings("tokenizer.ggml.tokens"); !equal(got, tokens) {
		t.Errorf("tokenizer.ggml.tokens: got %d tokens, want %d in order", len(got), len(tokens))
	}
	if got := len(kv.Floats("tokenizer.ggml.scores")); got != len(tokens) {
		t.Errorf("tokenizer.ggml.scores has %d entries, want %d", got, len(tokens))
	}
	if got := len(kv.Ints("tokenizer.ggml.token_type")); got != len(tokens) {
		t.Errorf("tokenizer.ggml.token_type has %d entries, want %d", got, len(tokens))
	}

	nVocab, nEmbd, nFF := uint64(len(tokens)), uint64(c.Embedding), uint64(c.FeedForward)
	nKV := nEmbd / uint64(c.Heads) * uint64(c.KVHeads)
	wantShapes := map[string][]uint64{
		"token_embd.weight":        {nEmbd, nVocab},
		"output_norm.weight":       {nEmbd},
		"output.weight":            {nEmbd, nVocab},
		"blk.0.attn_norm.weight":   {nEmbd},
		"blk.0.attn_q.weight":      {nEmbd, nEmbd},
		"blk.0.attn_k.weight":      {nEmbd, nKV},
		"blk.0.attn_v.weight":      {nEmbd, nKV},
		"blk.0.attn_output.weight": {nEmbd, nEmbd},
		"blk.0.ffn_norm.weight":    {nEmbd},
		"blk.0.ffn_gate.weight":    {nEmbd, nFF},
		"blk.0.ffn_up.weight":      {nEmbd, nFF},
		"blk.1.ffn_down.weight":    {nFF, nEmbd},
		"blk.1.attn_output.weight": {nEmbd, nEmbd},
	}
	items := f.Tensors().Items()
	if want := 2 + 9*c.Layers + 1; len(items) != want {
		t.Errorf("%d tensors, want %d", len(items), want)
	}
	dataStart := f.Tensors().Offset
	if dataStart%ggufAlignment != 0 {
		t.Errorf("tensor data starts at %d, not a multiple of %d", dataStart, ggufAlignment)
	}
	seen := map[string]bool{}
	for _, ts := range items {
		seen[ts.Name] = true
		if ts.Kind != ggmlTypeF32 {
			t.Errorf("%s: type %d, want F32", ts.Name, ts.Kind)
		}
		if ts.Offset%ggufAlignment != 0 {
			t.Errorf("%s: offset %d not aligned to %d", ts.Name, ts.Offset, ggufAlignment)
		}
		if end := dataStart + ts.Offset + ts.Size(); end > uint64(len(raw)) {
			t.Errorf("%s: data ends at %d, past the file's %d bytes", ts.Name, end, len(raw))
		}
		if want, ok := wantShapes[ts.Name]; ok && !equal(ts.Shape, want) {
			t.Errorf("%s: shape %v, want %v", ts.Name, ts.Shape, want)
		}
		// Norm weights are all ones: reading them back at the reader's offset proves
		// that offsets and padding agree between writer and reader.
		if strings.HasSuffix(ts.Name, "norm.weight") {
			at := dataStart + ts.Offset
			for i := uint64(0); i < ts.Elements(); i++ {
				if v := math.Float32frombits(binary.LittleEndian.Uint32(raw[at+4*i:])); v != 1 {
					t.Errorf("%s[%d] = %v at file offset %d, want 1", ts.Name, i, v, at+4*i)
					break
				}
			}
		}
	}
	for name := range wantShapes {
		if !seen[name] {
			t.Errorf("tensor %s missing", name)
		}
	}
}

// llama.cpp aborts on a vocabulary with a repeated string, and needs the byte
// tokens for SentencePiece's byte fallback (including <0x0A> as its newline token).
func TestVocabulary(t *testing.T) {
	tokens, scores, types := Vocabulary()
	if len(scores) != len(tokens) || len(types) != len(tokens) {
		t.Fatalf("%d tokens, %d scores, %d types", len(tokens), len(scores), len(types))
	}
	first := map[string]int{}
	for id, tok := range tokens {
		if prev, dup := first[tok]; dup {
			t.Errorf("token %q at ids %d and %d", tok, prev, id)
		}
		first[tok] = id
	}
	specials := []struct {
		id   int
		tok  string
		kind int32
	}{
		{UnknownID, "<unk>", tokenUnknown},
		{BOSID, "<s>", tokenControl},
		{EOSID, "</s>", tokenControl},
		{3, "<0x00>", tokenByte},
		{3 + '\n', "<0x0A>", tokenByte},
		{3 + 255, "<0xFF>", tokenByte},
		{3 + 256, "▁", tokenNormal},
	}
	for _, s := range specials {
		if tokens[s.id] != s.tok || types[s.id] != s.kind {
			t.Errorf("id %d = %q type %d, want %q type %d", s.id, tokens[s.id], types[s.id], s.tok, s.kind)
		}
	}
}

func TestConfigRejected(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no layers", func(c *Config) { c.Layers = 0 }, "must be positive"},
		{"width not split by heads", func(c *Config) { c.Heads = 3 }, "not a multiple of 3 heads"},
		{"heads not split by kv heads", func(c *Config) { c.KVHeads = 3 }, "not a multiple of 3 KV heads"},
		{"odd head size", func(c *Config) { c.Embedding, c.Heads, c.KVHeads = 12, 4, 4 }, "must be even"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.change(&c)
			f := tempFile(t)
			err := Write(f, c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write error = %v, want one containing %q", err, tt.want)
			}
			info, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if info.Size() != 0 {
				t.Errorf("rejected config still wrote %d bytes", info.Size())
			}
		})
	}
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	modelfile, err := WriteDir(dir, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(modelfile); err != nil || string(got) != Modelfile {
		t.Errorf("Modelfile = %q, %v; want %q", got, err, Modelfile)
	}
	got, err := os.ReadFile(filepath.Join(dir, GGUFName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, encode(t, DefaultConfig())) {
		t.Errorf("%s differs from Write's bytes", GGUFName)
	}
}

func equal[T comparable](a, b []T) bool {
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
