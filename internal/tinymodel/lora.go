package tinymodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// File names of the PEFT-layout LoRA adapter written by WriteLoRADir: what
// `vllm serve --enable-lora --lora-modules NAME=DIR` and PEFT's from_pretrained load.
const (
	LoRAConfigName  = "adapter_config.json"
	LoRAWeightsName = "adapter_model.safetensors"
)

// LoRA sizes an adapter of the checkpoint HFConfig describes.
type LoRA struct {
	Seed  uint64 // seeds A and B; same seed, same bytes
	Rank  int    // r; vLLM must be started with --max-lora-rank at least this
	Alpha int    // lora_alpha: the update is scaled by Alpha/Rank
	// Targets are the projections adapted in every layer, by their short names
	// (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj).
	Targets []string
}

// DefaultLoRA is an adapter of rank 8 on the attention's q and v projections, seeded by
// seed: two seeds give two adapters whose answers differ from the base model's.
func DefaultLoRA(seed uint64) LoRA {
	return LoRA{Seed: seed, Rank: 8, Alpha: 16, Targets: []string{"q_proj", "v_proj"}}
}

// WriteLoRADir writes a PEFT LoRA adapter of the checkpoint c into dir (created if
// missing): adapter_config.json and adapter_model.safetensors with lora_A (r × in)
// and lora_B (out × r) for each target of each layer, bfloat16. PEFT starts B at zero,
// which would leave the base model's answers unchanged; here both are drawn, so the
// adapter's tokens differ from the base model's and a test can tell them apart.
func WriteLoRADir(dir string, c Config, l LoRA) error {
	if err := c.validate(); err != nil {
		return err
	}
	ws, err := loraTargets(c, l)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := map[string]any{
		"peft_type":               "LORA",
		"task_type":               "CAUSAL_LM",
		"base_model_name_or_path": c.Name,
		"r":                       l.Rank,
		"lora_alpha":              l.Alpha,
		"lora_dropout":            0.0,
		"target_modules":          l.Targets,
		"bias":                    "none",
		"fan_in_fan_out":          false,
		"inference_mode":          true,
		"modules_to_save":         nil,
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, LoRAConfigName), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return writeSafetensors(filepath.Join(dir, LoRAWeightsName), loraTensors(ws, l))
}

// loraTargets are the checkpoint's weights that l adapts, in the checkpoint's order.
func loraTargets(c Config, l LoRA) ([]llamaWeight, error) {
	if l.Rank < 1 || l.Alpha < 1 || len(l.Targets) == 0 {
		return nil, fmt.Errorf("tinymodel: LoRA rank %d, alpha %d, %d targets: each must be at least 1", l.Rank, l.Alpha, len(l.Targets))
	}
	var ws []llamaWeight
	found := map[string]bool{}
	for _, w := range llamaWeights(c, 0) {
		for _, t := range l.Targets {
			if strings.HasSuffix(w.hf, "."+t+".weight") {
				ws = append(ws, w)
				found[t] = true
			}
		}
	}
	var errs []error
	for _, t := range l.Targets {
		if !found[t] {
			errs = append(errs, fmt.Errorf("tinymodel: LoRA target %q is no projection of the llama layout", t))
		}
	}
	return ws, errors.Join(errs...)
}

// loraTensors draws A and B for each weight from one generator seeded by l.Seed, under
// PEFT's names (base_model.model.<weight>.lora_A.weight). A is bounded by 1/sqrt(in) as
// the base weights are; B by 1/sqrt(r), so the update is of the base weight's size.
func loraTensors(ws []llamaWeight, l LoRA) []hfTensor {
	rng := rand.New(rand.NewPCG(l.Seed, 0x6c6f7261)) // "lora"
	draw := func(n int, bound float64) []float32 {
		data := make([]float32, n)
		for j := range data {
			v := (rng.Float64()*2 - 1) * bound
			if math.Abs(v) < 0x1p-14 {
				v = 0 // as the base checkpoint: no value below F16's normal range
			}
			data[j] = float32(v)
		}
		return data
	}
	var ts []hfTensor
	for _, w := range ws {
		name := "base_model.model." + strings.TrimSuffix(w.hf, ".weight")
		ts = append(ts,
			hfTensor{name + ".lora_A.weight", []int{l.Rank, w.in}, draw(l.Rank*w.in, 1/math.Sqrt(float64(w.in)))},
			hfTensor{name + ".lora_B.weight", []int{w.out, l.Rank}, draw(w.out*l.Rank, 1/math.Sqrt(float64(l.Rank)))})
	}
	return ts
}
