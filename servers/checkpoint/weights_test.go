package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/planrun/planrun/internal/tinymodel"
)

// want is the digest computed here from the files themselves: name, size, SHA-256.
func want(t *testing.T, dir string, names ...string) string {
	t.Helper()
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "%s\x00%d\x00%s\n", n, len(b), hex.EncodeToString(sum[:]))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// The tiny checkpoint's digest covers config.json and its safetensors, not its
// tokenizer; the second call reads nothing (the cache); changed weights change it.
func TestDigest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	if err := tinymodel.WriteHFDir(dir, tinymodel.HFConfig()); err != nil {
		t.Fatal(err)
	}
	cacheFile := filepath.Join(t.TempDir(), "cache", "weights.json")
	d, hashed, err := Digest(dir, cacheFile)
	st, _ := os.Stat(filepath.Join(dir, tinymodel.HFWeightsName))
	if err != nil || d != want(t, dir, "config.json", tinymodel.HFWeightsName) || hashed <= st.Size() {
		t.Fatalf("digest %s (%d bytes hashed), %v; want %s", d, hashed, err, want(t, dir, "config.json", tinymodel.HFWeightsName))
	}
	if !IsCheckpoint(dir) || IsCheckpoint("tiny") || IsCheckpoint(t.TempDir()) {
		t.Error("IsCheckpoint: a checkpoint directory, a model name, an empty directory")
	}

	os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644)
	again, hashed, err := Digest(dir, cacheFile)
	if err != nil || again != d || hashed != 0 {
		t.Errorf("second digest %s, %d bytes hashed, %v: want %s from the cache alone", again, hashed, err, d)
	}

	// Same size, new bytes: a new modification time misses the cache.
	w := filepath.Join(dir, tinymodel.HFWeightsName)
	b, _ := os.ReadFile(w)
	b[len(b)-1] ^= 0xff
	os.WriteFile(w, b, 0o644)
	os.Chtimes(w, time.Now(), time.Now().Add(time.Second))
	changed, _, err := Digest(dir, cacheFile)
	if err != nil || changed == d || changed != want(t, dir, "config.json", tinymodel.HFWeightsName) {
		t.Errorf("after changing a weight byte: %s, %v (was %s)", changed, err, d)
	}

	if _, _, err := Digest(t.TempDir(), cacheFile); err == nil {
		t.Error("a directory without config.json has a digest")
	}
}
