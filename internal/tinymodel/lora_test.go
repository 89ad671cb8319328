package tinymodel

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loraShapes reads the tensor shapes from an adapter's safetensors header.
func loraShapes(t *testing.T, dir string) map[string][]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, LoRAWeightsName))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var header map[string]struct {
		DType string `json:"dtype"`
		Shape []int  `json:"shape"`
	}
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		t.Fatalf("header: %v", err)
	}
	shapes := map[string][]int{}
	for name, e := range header {
		if name != "__metadata__" {
			if e.DType != "BF16" {
				t.Errorf("%s: dtype %s", name, e.DType)
			}
			shapes[name] = e.Shape
		}
	}
	return shapes
}

// The adapter is in PEFT's layout, as vLLM's LoRA loader reads it: adapter_config.json
// with the rank, alpha and target modules, and for each target of each layer lora_A
// (r × in) and lora_B (out × r) under base_model.model.<weight>.
func TestLoRALayout(t *testing.T) {
	c, l := HFConfig(), DefaultLoRA(2)
	dir := t.TempDir()
	if err := WriteLoRADir(dir, c, l); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		PEFTType      string   `json:"peft_type"`
		R             int      `json:"r"`
		Alpha         int      `json:"lora_alpha"`
		TargetModules []string `json:"target_modules"`
		Bias          string   `json:"bias"`
		ModulesToSave []string `json:"modules_to_save"`
	}
	readJSON(t, filepath.Join(dir, LoRAConfigName), &cfg)
	if cfg.PEFTType != "LORA" || cfg.R != 8 || cfg.Alpha != 16 || strings.Join(cfg.TargetModules, ",") != "q_proj,v_proj" ||
		cfg.Bias != "none" || cfg.ModulesToSave != nil {
		t.Errorf("adapter_config.json: %+v", cfg)
	}
	shapes := loraShapes(t, dir)
	kv := c.Embedding / c.Heads * c.KVHeads
	for layer := range c.Layers {
		p := fmt.Sprintf("base_model.model.model.layers.%d.self_attn.", layer)
		for name, want := range map[string][]int{
			p + "q_proj.lora_A.weight": {8, c.Embedding}, p + "q_proj.lora_B.weight": {c.Embedding, 8},
			p + "v_proj.lora_A.weight": {8, c.Embedding}, p + "v_proj.lora_B.weight": {kv, 8},
		} {
			if !equalInts(shapes[name], want) {
				t.Errorf("%s: shape %v, want %v", name, shapes[name], want)
			}
		}
	}
	if len(shapes) != 4*c.Layers {
		t.Errorf("%d tensors, want %d", len(shapes), 4*c.Layers)
	}
}

// The same seed writes the same bytes; another seed another adapter.
func TestLoRAIsSeeded(t *testing.T) {
	read := func(seed uint64) []byte {
		dir := t.TempDir()
		if err := WriteLoRADir(dir, HFConfig(), DefaultLoRA(seed)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, LoRAWeightsName))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, again, other := read(2), read(2), read(3)
	if !bytes.Equal(a, again) {
		t.Errorf("seed 2 wrote different bytes twice")
	}
	if bytes.Equal(a, other) || len(a) != len(other) {
		t.Errorf("seeds 2 and 3 wrote the same weights (or different layouts: %d and %d bytes)", len(a), len(other))
	}
}

func TestLoRARefusesBadSettings(t *testing.T) {
	for _, l := range []LoRA{
		{Seed: 1, Rank: 0, Alpha: 16, Targets: []string{"q_proj"}},
		{Seed: 1, Rank: 8, Alpha: 16},
		{Seed: 1, Rank: 8, Alpha: 16, Targets: []string{"q_proj", "qkv_proj"}},
	} {
		dir := filepath.Join(t.TempDir(), "a")
		err := WriteLoRADir(dir, HFConfig(), l)
		if err == nil {
			t.Errorf("%+v: no error", l)
		}
		if _, statErr := os.Stat(dir); statErr == nil {
			t.Errorf("%+v: wrote %s anyway (%v)", l, dir, err)
		}
	}
}
