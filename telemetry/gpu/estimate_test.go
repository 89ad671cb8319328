package gpu

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// qwen25_7b is Qwen2.5-7B's shape as Ollama's /api/show reports it.
var qwen25_7b = ModelShape{Arch: "qwen2", Params: 7615616512, Layers: 28, KVHeads: 4, HeadDim: 128}

func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		in                    EstimateInput
		weights, kv, overhead float64
		notes                 int
	}{
		{
			name:    "qwen2.5-7b q4_K_M 8k",
			in:      EstimateInput{Shape: qwen25_7b, Quant: "Q4_K_M", Context: 8192},
			weights: 7615616512 * 4.84 / 8,
			// 28 layers × 4 heads × 128 × 2 (K,V) × 2 bytes × 8192 tokens
			kv:       469762048,
			overhead: 1 << 30,
		},
		{
			name:     "fp16, fp8 kv cache, 4 concurrent, own overhead",
			in:       EstimateInput{Shape: qwen25_7b, Quant: "bf16", Context: 4096, Concurrency: 4, KVBytes: 1, Overhead: 512 << 20},
			weights:  7615616512 * 2,
			kv:       28 * 4 * 128 * 2 * 1 * 4096 * 4,
			overhead: 512 << 20,
		},
		{
			name:     "no shape: weights and overhead only",
			in:       EstimateInput{Shape: ModelShape{Params: 7e9}, Quant: "q8_0", Context: 8192},
			weights:  7e9 * 8.5 / 8,
			overhead: 1 << 30,
			notes:    1,
		},
		{
			name:     "no context",
			in:       EstimateInput{Shape: qwen25_7b, Quant: "fp8"},
			weights:  7615616512,
			overhead: 1 << 30,
			notes:    1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Estimate(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, b) }
			if !near(e.WeightsBytes, tc.weights) || !near(e.KVCacheBytes, tc.kv) || !near(e.OverheadBytes, tc.overhead) {
				t.Errorf("weights %v kv %v overhead %v, want %v %v %v", e.WeightsBytes, e.KVCacheBytes, e.OverheadBytes, tc.weights, tc.kv, tc.overhead)
			}
			if !near(e.TotalBytes, tc.weights+tc.kv+tc.overhead) {
				t.Errorf("total %v", e.TotalBytes)
			}
			if len(e.Notes) != tc.notes {
				t.Errorf("notes %q", e.Notes)
			}
		})
	}
}

func TestEstimateErrors(t *testing.T) {
	if _, err := Estimate(EstimateInput{Shape: qwen25_7b, Quant: "q4_wat"}); err == nil || !strings.Contains(err.Error(), `unknown quantization "q4_wat"`) {
		t.Errorf("unknown quant: %v", err)
	}
	if _, err := Estimate(EstimateInput{Quant: "q4_0"}); err == nil {
		t.Error("no parameters: no error")
	}
}

// The seed's rule of thumb: a 7B model at Q4 has about 3.5 GB of weights at 4 bits; the
// table's q4_0 (4.5 bits, with block scales) gives 3.9 GB, q4_K_M 4.2 GB.
func TestQuantBits(t *testing.T) {
	for q, want := range map[string]float64{"q4_0": 4.5, "Q4_K_M": 4.84, "q8_0": 8.5, "fp8": 8, "FP16": 16, "bf16": 16, "q6_K": 6.56} {
		if got, ok := QuantBits(q); !ok || got != want {
			t.Errorf("QuantBits(%q) = %v, %v; want %v", q, got, ok, want)
		}
	}
	if _, ok := QuantBits("nope"); ok {
		t.Error("QuantBits(nope) ok")
	}
}

func TestParseParams(t *testing.T) {
	for in, want := range map[string]float64{"7e9": 7e9, "7B": 7e9, "1.5b": 1.5e9, "770M": 770e6, "8030261248": 8030261248, " 8.0B ": 8e9} {
		if got, err := ParseParams(in); err != nil || got != want {
			t.Errorf("ParseParams(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "B", "seven", "-7B", "0"} {
		if _, err := ParseParams(bad); err == nil {
			t.Errorf("ParseParams(%q): no error", bad)
		}
	}
}

func TestKVBytes(t *testing.T) {
	for in, want := range map[string]float64{"": 2, "f16": 2, "fp8": 1, "q8_0": 1.0625, "q4_0": 0.5625, "F32": 4, "1.5": 1.5} {
		if got, err := KVBytes(in); err != nil || got != want {
			t.Errorf("KVBytes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := KVBytes("int3"); err == nil {
		t.Error("KVBytes(int3): no error")
	}
}

func TestShapeFromModelInfo(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       ModelShape
		err        bool
	}{
		{
			name: "qwen2 via embedding/heads",
			json: `{"general.architecture":"qwen2","general.parameter_count":7615616512,"qwen2.block_count":28,
				"qwen2.attention.head_count":28,"qwen2.attention.head_count_kv":4,"qwen2.embedding_length":3584}`,
			want: qwen25_7b,
		},
		{
			name: "llama with key_length",
			json: `{"general.architecture":"llama","general.parameter_count":3212749888,"llama.block_count":28,
				"llama.attention.head_count":24,"llama.attention.head_count_kv":8,"llama.attention.key_length":128,"llama.embedding_length":3072}`,
			want: ModelShape{Arch: "llama", Params: 3212749888, Layers: 28, KVHeads: 8, HeadDim: 128},
		},
		{
			name: "no GQA",
			json: `{"general.architecture":"llama","general.parameter_count":6738415616,"llama.block_count":32,
				"llama.attention.head_count":32,"llama.embedding_length":4096}`,
			want: ModelShape{Arch: "llama", Params: 6738415616, Layers: 32, KVHeads: 32, HeadDim: 128},
		},
		{name: "no architecture", json: `{"general.parameter_count":1}`, err: true},
		{name: "no parameter count", json: `{"general.architecture":"llama"}`, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var info map[string]any
			if err := json.Unmarshal([]byte(tc.json), &info); err != nil {
				t.Fatal(err)
			}
			got, err := ShapeFromModelInfo(info)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v", err)
			}
			if !tc.err && got != tc.want {
				t.Errorf("shape %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestExplainGap(t *testing.T) {
	est, err := Estimate(EstimateInput{Shape: qwen25_7b, Quant: "fp16", Context: 8192})
	if err != nil {
		t.Fatal(err)
	}
	total := est.TotalBytes // ≈ 16.7 GiB
	h200 := uint64(143771) << 20
	for _, tc := range []struct {
		name     string
		measured uint64
		ctx      GapContext
		want     string
	}{
		{"vllm reserves the card", uint64(0.9 * float64(h200)), GapContext{Server: "vllm", CardTotalBytes: h200}, "vLLM pre-allocates gpu_memory_utilization (0.90)"},
		{"vllm own utilisation", uint64(0.5 * float64(h200)), GapContext{Server: "vllm", CardTotalBytes: h200, GPUMemoryUtilization: 0.5}, "(0.50)"},
		{"ollama partial offload", uint64(total / 2), GapContext{Server: "ollama", OllamaSize: 18 << 30, OllamaSizeVRAM: 9 << 30}, "size_vram < size"},
		{"within", uint64(total * 1.1), GapContext{Server: "ollama"}, "within 10% of the estimate"},
		{"above, v1", uint64(total * 1.5), GapContext{Server: "sglang", MemoryAPI: MemoryAPIv1}, "50% above the estimate"},
		{"below", uint64(total * 0.5), GapContext{}, "50% below the estimate"},
		{"nothing measured", 0, GapContext{}, "no comparison"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ExplainGap(est, tc.measured, tc.ctx)
			if !strings.Contains(got, tc.want) {
				t.Errorf("ExplainGap = %q, want it to contain %q", got, tc.want)
			}
			if tc.ctx.MemoryAPI == MemoryAPIv1 && !strings.Contains(got, "driver-reserved") {
				t.Errorf("v1 not mentioned: %q", got)
			}
		})
	}
}

func TestEstimateWriteTextGolden(t *testing.T) {
	e, err := Estimate(EstimateInput{Shape: qwen25_7b, Quant: "q4_K_M", Context: 8192, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := e.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "estimate-qwen2.5-7b-q4_K_M.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./gpu -run Golden -update)", err)
	}
	if buf.String() != string(want) {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}
