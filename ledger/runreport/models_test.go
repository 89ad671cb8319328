package runreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/planrun/planrun/ledger"
)

func TestModelInfoString(t *testing.T) {
	tests := []struct {
		in   ledger.ModelInfo
		want string
	}{
		{ledger.ModelInfo{Name: "tiny:latest", Digest: "sha256:0123456789abcdef0123", ParameterSize: "1.2M", QuantizationLevel: "F16", Family: "llama"},
			"tiny:latest sha256:0123456789ab, 1.2M params, F16, llama"},
		{ledger.ModelInfo{Name: "m", Digest: "abcdef"}, "m sha256:abcdef"},
		{ledger.ModelInfo{Name: "m", QuantizationLevel: "Q4_K_M"}, "m, Q4_K_M"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The environment list shows the model's details where the server gave them, and the
// bare digest otherwise.
func TestMarkdownModels(t *testing.T) {
	env := ledger.Environment{
		ModelDigests: map[string]string{"ollama.a x": "sha256:1111", "ollama.b y": "sha256:2222"},
		Models:       map[string]ledger.ModelInfo{"ollama.a x": {Name: "x:latest", Digest: "sha256:1111", QuantizationLevel: "Q8_0"}},
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, Report{Title: "t", Env: env}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"- Model ollama.a x: x:latest sha256:1111, Q8_0\n", "- Model ollama.b y: sha256:2222\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "ollama.a x") != 1 {
		t.Errorf("model ollama.a x listed more than once:\n%s", out)
	}
}
