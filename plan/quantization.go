package plan

import "strings"

// quantAliases fold the spellings of one quantization or dtype together.
var quantAliases = map[string]string{
	"fp16": "f16", "float16": "f16", "half": "f16",
	"bfloat16": "bf16",
	"fp32":     "f32", "float32": "f32", "float": "f32",
	"q4_k": "q4_k_m",
}

// dtypes are the folded names of unquantized weights: what vLLM's --dtype takes.
var dtypes = []string{"f16", "bf16", "f32"}

func normQuant(q string) string {
	q = strings.ToLower(strings.TrimSpace(q))
	q = strings.TrimPrefix(q, "torch.")
	if a, ok := quantAliases[q]; ok {
		return a
	}
	return q
}

// SameQuantization reports whether two names mean one quantization ("q4_K_M" and
// "Q4_K_M", "bf16" and "bfloat16", "fp16" and "torch.float16").
func SameQuantization(a, b string) bool { return normQuant(a) == normQuant(b) }

// IsDtype reports whether a quantization name is an unquantized dtype (bf16, float16,
// f32), as vLLM's --dtype gives one, rather than a quantization method (awq, fp8).
func IsDtype(q string) bool {
	n := normQuant(q)
	for _, d := range dtypes {
		if n == d {
			return true
		}
	}
	return false
}
