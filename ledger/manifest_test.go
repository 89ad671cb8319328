package ledger

import "testing"

// ModelInfo.String is "name digest, size params, quantization, family": the digest
// sha256-prefixed and cut to 12 hex digits, empty parts left out with their commas.
func TestModelInfoString(t *testing.T) {
	for _, c := range []struct {
		name string
		m    ModelInfo
		want string
	}{
		{"full", ModelInfo{Name: "tiny:latest", Digest: "sha256:0123456789abcdef", ParameterSize: "1.2M", QuantizationLevel: "F16", Family: "llama"},
			"tiny:latest sha256:0123456789ab, 1.2M params, F16, llama"},
		{"digest without its algorithm", ModelInfo{Name: "tiny", Digest: "0123456789abcdef"}, "tiny sha256:0123456789ab"},
		{"digest shorter than 12 digits", ModelInfo{Name: "tiny", Digest: "sha256:abc"}, "tiny sha256:abc"},
		{"digest of exactly 12 digits", ModelInfo{Name: "tiny", Digest: "sha256:0123456789ab"}, "tiny sha256:0123456789ab"},
		{"name only", ModelInfo{Name: "tiny"}, "tiny"},
		{"family only", ModelInfo{Name: "tiny", Family: "llama"}, "tiny, llama"},
		{"size and quantization", ModelInfo{Name: "tiny", ParameterSize: "7.6B", QuantizationLevel: "Q4_K_M"}, "tiny, 7.6B params, Q4_K_M"},
		{"no name", ModelInfo{Digest: "sha256:0123456789abcdef", Family: "qwen2"}, "sha256:0123456789ab, qwen2"},
	} {
		if got := c.m.String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
