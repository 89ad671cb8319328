package plan

import "testing"

// ensure_model defaults to "check" on ollama backends (a missing model fails the cell
// with a clear message rather than every request failing) and is empty elsewhere.
func TestEnsureModel(t *testing.T) {
	tests := []struct {
		name, src, backend, want string
	}{
		{"ollama default", `backend "ollama" "o" {}`, "ollama.o", EnsureModelCheck},
		{"ollama pull", `backend "ollama" "o" { ensure_model = "pull" }`, "ollama.o", EnsureModelPull},
		{"ollama off", `backend "ollama" "o" { ensure_model = "off" }`, "ollama.o", EnsureModelOff},
		{"openai none", `backend "openai" "v" { url = "http://127.0.0.1:1/v1" }`, "openai.v", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(tt.src)}, LoadOptions{Getenv: noEnv})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			var got *Backend
			for _, b := range p.Backends {
				if b.Addr == tt.backend {
					got = b
				}
			}
			if got == nil {
				t.Fatalf("no backend %s", tt.backend)
			}
			if got.EnsureModel != tt.want {
				t.Errorf("EnsureModel = %q, want %q", got.EnsureModel, tt.want)
			}
		})
	}
}
