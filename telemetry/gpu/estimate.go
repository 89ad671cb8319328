package gpu

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ModelShape is what the VRAM estimate needs to know about a model: from Ollama's
// /api/show model_info (ShapeFromModelInfo) or given in the plan.
type ModelShape struct {
	Arch    string  `json:"arch,omitempty"` // "llama", "qwen2", ...; informational
	Params  float64 `json:"params"`         // parameter count
	Layers  int     `json:"layers"`         // transformer blocks
	KVHeads int     `json:"kv_heads"`       // key/value heads (fewer than query heads with GQA)
	HeadDim int     `json:"head_dim"`       // dimension of one head
}

// EstimateInput is one estimate's question: this model, this quantization, this context,
// this many requests at once.
type EstimateInput struct {
	Shape       ModelShape `json:"shape"`
	Quant       string     `json:"quant"`          // "q4_K_M", "fp8", "fp16", ...
	Context     int        `json:"context"`        // tokens per sequence held in the KV cache
	Concurrency int        `json:"concurrency"`    // sequences at once; 0 means 1
	KVBytes     float64    `json:"kv_bytes"`       // bytes per KV element; 0 means 2 (fp16)
	Overhead    float64    `json:"overhead_bytes"` // bytes; 0 means DefaultOverheadBytes
}

// DefaultOverheadBytes is the runtime overhead added when none is given: a CUDA context
// (0.3–0.5 GiB) plus compute buffers. The seed's rule of thumb (7B Q4: 3.5 GB of weights,
// about 4.5 GB in practice) implies about 1 GB.
const DefaultOverheadBytes = 1 << 30

// VRAMEstimate is the seed's estimate: weights + KV cache + overhead, in parts.
type VRAMEstimate struct {
	Input         EstimateInput `json:"input"`
	BitsPerParam  float64       `json:"bits_per_param"`
	QuantSource   string        `json:"quant_source"`
	WeightsBytes  float64       `json:"weights_bytes"`
	KVCacheBytes  float64       `json:"kv_cache_bytes"`
	OverheadBytes float64       `json:"overhead_bytes"`
	TotalBytes    float64       `json:"total_bytes"`
	Notes         []string      `json:"notes,omitempty"` // assumptions a reader should know
}

// quantBits is bits per weight by quantization, lower-case keys.
//
// Sources: the plain GGML block types from their block sizes in llama.cpp's
// ggml-common.h (q4_0: 18 bytes per 32 weights = 4.5 bits; q8_0: 34/32 = 8.5); the K-quant
// mixes from llama.cpp's quantize tool, which lists each mix's size for LLaMA 7B (6.74e9
// parameters; e.g. Q4_K_M 3.80 GiB = 4.84 bits); fp/bf formats from their width; GPTQ/AWQ
// int4 with group size 128 (16-bit scale and 4-bit zero per group ≈ 4.16, rounded up for
// the unquantized embeddings).
var quantBits = map[string]float64{
	"fp32": 32, "f32": 32,
	"fp16": 16, "f16": 16, "bf16": 16, "float16": 16, "bfloat16": 16, "half": 16, "auto": 16,
	"fp8": 8, "fp8_e4m3": 8, "fp8_e5m2": 8, "int8": 8, "w8a8": 8,
	"q8_0": 8.5,
	"q6_k": 6.56,
	"q5_0": 5.5, "q5_1": 6.0, "q5_k_s": 5.52, "q5_k_m": 5.67,
	"q4_0": 4.5, "q4_1": 5.0, "q4_k_s": 4.57, "q4_k_m": 4.84,
	"iq4_xs": 4.25, "iq4_nl": 4.5,
	"q3_k_s": 3.5, "q3_k_m": 3.91, "q3_k_l": 4.27,
	"q2_k": 3.35,
	"awq":  4.25, "gptq": 4.25, "int4": 4.25, "w4a16": 4.25,
}

// QuantSource names where the bits-per-weight table comes from.
const QuantSource = "llama.cpp ggml block sizes and quantize tool (LLaMA 7B sizes); fp widths; GPTQ/AWQ g128"

// QuantBits returns the bits per weight of a quantization name (case-insensitive).
func QuantBits(quant string) (float64, bool) {
	b, ok := quantBits[strings.ToLower(strings.TrimSpace(quant))]
	return b, ok
}

// KVBytes returns bytes per KV-cache element for a cache type name ("f16", "fp8",
// "q8_0", "q4_0") or a plain number ("2").
func KVBytes(s string) (float64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "", "f16", "fp16", "bf16", "auto":
		return 2, nil
	case "f32", "fp32":
		return 4, nil
	case "fp8", "fp8_e4m3", "fp8_e5m2", "int8":
		return 1, nil
	case "q8_0":
		return 34.0 / 32, nil
	case "q4_0":
		return 18.0 / 32, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("kv bytes %q: want a number of bytes or f16, fp8, q8_0, q4_0, f32", s)
	}
	return v, nil
}

// ParseParams reads a parameter count: "7e9", "8030261248", "7B", "1.5b", "770M", "8.0B".
func ParseParams(s string) (float64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'B', 'b':
			mult, t = 1e9, t[:n-1]
		case 'M', 'm':
			mult, t = 1e6, t[:n-1]
		case 'K', 'k':
			mult, t = 1e3, t[:n-1]
		case 'T', 't':
			mult, t = 1e12, t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) {
		return 0, fmt.Errorf("parameters %q: want a count like 7e9, 7B or 770M", s)
	}
	return v * mult, nil
}

// Estimate computes VRAM ≈ parameters × bits/8 + KV cache + overhead, where the KV cache
// is layers × KV heads × head dim × 2 (K and V) × bytes per element × context ×
// concurrency. Without a KV shape or a context the KV cache is left out and a note says so.
func Estimate(in EstimateInput) (VRAMEstimate, error) {
	if in.Shape.Params <= 0 {
		return VRAMEstimate{}, errors.New("estimate: the parameter count is unknown")
	}
	bits, ok := QuantBits(in.Quant)
	if !ok {
		return VRAMEstimate{}, fmt.Errorf("estimate: unknown quantization %q (known: %s)", in.Quant, strings.Join(knownQuants(), ", "))
	}
	if in.Concurrency <= 0 {
		in.Concurrency = 1
	}
	if in.KVBytes <= 0 {
		in.KVBytes = 2
	}
	if in.Overhead <= 0 {
		in.Overhead = DefaultOverheadBytes
	}
	e := VRAMEstimate{Input: in, BitsPerParam: bits, QuantSource: QuantSource, OverheadBytes: in.Overhead}
	e.WeightsBytes = in.Shape.Params * bits / 8
	s := in.Shape
	switch {
	case s.Layers <= 0 || s.KVHeads <= 0 || s.HeadDim <= 0:
		e.Notes = append(e.Notes, "KV cache not counted: layers, KV heads or head dim unknown")
	case in.Context <= 0:
		e.Notes = append(e.Notes, "KV cache not counted: no context length given")
	default:
		e.KVCacheBytes = float64(s.Layers) * float64(s.KVHeads) * float64(s.HeadDim) * 2 * in.KVBytes * float64(in.Context) * float64(in.Concurrency)
	}
	e.TotalBytes = e.WeightsBytes + e.KVCacheBytes + e.OverheadBytes
	return e, nil
}

func knownQuants() []string {
	names := make([]string, 0, len(quantBits))
	for k := range quantBits {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// WriteText prints the estimate's parts and total, one per line, for `planrun estimate`.
func (e VRAMEstimate) WriteText(w io.Writer) error {
	in, s := e.Input, e.Input.Shape
	var b strings.Builder
	fmt.Fprintf(&b, "weights   %8.2f GiB  %.3g params × %.2f bits (%s)\n", e.WeightsBytes/(1<<30), s.Params, e.BitsPerParam, in.Quant)
	if e.KVCacheBytes > 0 {
		fmt.Fprintf(&b, "kv cache  %8.2f GiB  %d layers × %d kv heads × %d head dim × 2 × %g bytes × %d context × %d concurrent\n",
			e.KVCacheBytes/(1<<30), s.Layers, s.KVHeads, s.HeadDim, in.KVBytes, in.Context, in.Concurrency)
	} else {
		fmt.Fprintf(&b, "kv cache  %8.2f GiB\n", 0.0)
	}
	fmt.Fprintf(&b, "overhead  %8.2f GiB  CUDA context and compute buffers\n", e.OverheadBytes/(1<<30))
	fmt.Fprintf(&b, "total     %8.2f GiB  (%.2f GB)\n", e.TotalBytes/(1<<30), e.TotalBytes/1e9)
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "bits per weight from: %s\n", e.QuantSource)
	_, err := io.WriteString(w, b.String())
	return err
}

// ShapeFromModelInfo reads a model's shape from Ollama's /api/show model_info, whose keys
// are prefixed by the architecture ("llama.block_count", "qwen2.attention.head_count_kv").
// The head dim is attention.key_length when present, else embedding_length / head_count.
func ShapeFromModelInfo(info map[string]any) (ModelShape, error) {
	var s ModelShape
	s.Arch, _ = info["general.architecture"].(string)
	if s.Arch == "" {
		return s, errors.New("model_info has no general.architecture")
	}
	num := func(key string) int {
		v, _ := info[key].(float64) // JSON numbers decode as float64
		return int(v)
	}
	p := s.Arch + "."
	if v, ok := info["general.parameter_count"].(float64); ok {
		s.Params = v
	}
	s.Layers = num(p + "block_count")
	s.KVHeads = num(p + "attention.head_count_kv")
	if s.KVHeads == 0 {
		s.KVHeads = num(p + "attention.head_count") // no GQA: every head has its own K and V
	}
	s.HeadDim = num(p + "attention.key_length")
	if s.HeadDim == 0 {
		if heads := num(p + "attention.head_count"); heads > 0 {
			s.HeadDim = num(p+"embedding_length") / heads
		}
	}
	if s.Params <= 0 {
		return s, errors.New("model_info has no general.parameter_count")
	}
	return s, nil
}

// GapContext is what explains a gap between estimate and measurement.
type GapContext struct {
	Server string // "vllm", "ollama", "sglang", ...
	// CardTotalBytes is the GPU's memory, for servers that reserve a share of it.
	CardTotalBytes uint64
	// GPUMemoryUtilization is vLLM's --gpu-memory-utilization; 0 means its default 0.9.
	GPUMemoryUtilization float64
	// OllamaSize and OllamaSizeVRAM are /api/ps size and size_vram for the model.
	OllamaSize, OllamaSizeVRAM int64
	// MemoryAPI is the Summary's, since v1 "used" counts driver-reserved memory.
	MemoryAPI string
}

// ExplainGap says in a sentence why measured (the server process's peak, or peak used
// minus baseline, in bytes) differs from the estimate, or that it does not.
func ExplainGap(est VRAMEstimate, measured uint64, c GapContext) string {
	if est.TotalBytes <= 0 || measured == 0 {
		return "no comparison: estimate or measurement missing"
	}
	m := float64(measured)
	ratio := m / est.TotalBytes
	pct := (ratio - 1) * 100
	gib := func(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }
	server := strings.ToLower(c.Server)
	if server == "vllm" && c.CardTotalBytes > 0 && ratio > 1.15 {
		util := c.GPUMemoryUtilization
		if util <= 0 {
			util = 0.9
		}
		reserved := util * float64(c.CardTotalBytes)
		if m >= 0.8*reserved {
			return fmt.Sprintf("measured %s is %+.0f%% over the estimate %s because vLLM pre-allocates gpu_memory_utilization (%.2f) of the card (%.2f × %s = %s) for weights and as many KV-cache blocks as fit; the estimate is what the model needs — compare vllm:kv_cache_usage_perc, or lower --gpu-memory-utilization",
				gib(m), pct, gib(est.TotalBytes), util, util, gib(float64(c.CardTotalBytes)), gib(reserved))
		}
	}
	if server == "ollama" && c.OllamaSize > 0 && c.OllamaSizeVRAM < c.OllamaSize {
		return fmt.Sprintf("measured %s (%+.0f%% vs estimate %s): Ollama put only %s of the model's %s on the GPU (/api/ps size_vram < size); the rest runs from CPU memory",
			gib(m), pct, gib(est.TotalBytes), gib(float64(c.OllamaSizeVRAM)), gib(float64(c.OllamaSize)))
	}
	switch {
	case math.Abs(pct) <= 15:
		return fmt.Sprintf("measured %s is within %.0f%% of the estimate %s", gib(m), math.Abs(pct), gib(est.TotalBytes))
	case ratio > 1:
		why := "a larger context or more parallel sequences than assumed (Ollama num_ctx × num_parallel, vLLM max_model_len), compute buffers or CUDA graphs, or other processes counted"
		if c.MemoryAPI == MemoryAPIv1 {
			why += "; NVML v1 \"used\" also counts driver-reserved memory"
		}
		return fmt.Sprintf("measured %s is %.0f%% above the estimate %s: %s", gib(m), pct, gib(est.TotalBytes), why)
	default:
		return fmt.Sprintf("measured %s is %.0f%% below the estimate %s: a smaller context than assumed, a KV cache that grows as used, a smaller quantization than the table's, or layers offloaded to the CPU", gib(m), -pct, gib(est.TotalBytes))
	}
}
