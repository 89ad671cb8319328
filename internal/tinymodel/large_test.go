package tinymodel

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ollama/ollama/fs/ggml"
)

func TestToHalf(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {0, 0}, {65504, 0x7bff}, {1e6, 0x7c00},
		{0.1, 0x2e66},                               // 0.0999755859375, the nearest half
		{float32(math.Ldexp(1, -24)), 0x0001},       // the smallest subnormal
		{float32(math.Ldexp(1, -26)), 0},            // below half of it: zero
		{float32(math.Ldexp(1, -14)), 0x0400},       // the smallest normal
		{1 + float32(math.Ldexp(1, -11)), 0x3c00},   // a tie rounds to even (down)
		{1 + 3*float32(math.Ldexp(1, -11)), 0x3c02}, // a tie rounds to even (up)
	} {
		if got := toHalf(c.in); got != c.want {
			t.Errorf("toHalf(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

// TestLargeConfigQuantizable: the larger model is what Ollama's create --quantize takes
// (an F16 file) with rows K-quants accept (multiples of 256), and is tens of millions
// of parameters, so its weights dominate the server's memory.
func TestLargeConfigQuantizable(t *testing.T) {
	c := LargeConfig()
	if p := c.Params(); p < 20e6 || p > 60e6 {
		t.Errorf("%d parameters: want tens of millions", p)
	}
	dir := t.TempDir()
	if _, err := WriteDir(dir, c); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, GGUFName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ggml.Decode(f, -1)
	if err != nil {
		t.Fatal(err)
	}
	if ft := g.KV().FileType().String(); ft != "F16" {
		t.Errorf("file type %s, want F16", ft)
	}
	n := 0
	for _, tn := range g.Tensors().Items() {
		n += int(tn.Elements())
		if len(tn.Shape) == 2 && (tn.Shape[0]%256 != 0 || tn.Kind != uint32(ggml.TensorTypeF16)) {
			t.Errorf("%s: row %d, kind %d: want rows of a multiple of 256, in F16", tn.Name, tn.Shape[0], tn.Kind)
		}
	}
	if n != c.Params() {
		t.Errorf("the file holds %d parameters, Params says %d", n, c.Params())
	}
	// Seeded: the same config writes the same bytes.
	again := t.TempDir()
	WriteDir(again, c)
	a, _ := os.ReadFile(filepath.Join(dir, GGUFName))
	b, _ := os.ReadFile(filepath.Join(again, GGUFName))
	if !bytes.Equal(a, b) {
		t.Error("two writes of the same config differ")
	}
}
