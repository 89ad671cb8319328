package plan

import (
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestServerCommandWarnings: what a managed vLLM's flags make a judgement call is a
// warning, once per server and workload, and a plan vLLM can serve gets none.
func TestServerCommandWarnings(t *testing.T) {
	src := `
backend "openai" "v" {
  url    = "http://127.0.0.1:8000/v1"
  server = server.v
}
backend "openai" "ok" {
  url    = "http://127.0.0.1:8001/v1"
  server = server.ok
}
server "v" {
  command = ["vllm", "serve", "m", "--served-model-name", "base", "--enable-lora",
    "--lora-modules", "sql=/a/sql", "--no-enable-prefix-caching", "--max-model-len", "1000"]
}
server "ok" {
  command = ["/opt/bin/vllm-serve", "--model", "m", "--port", "8001", "--served-model-name", "base", "--enable-lora",
    "--lora-modules", "{\"name\": \"sql\", \"path\": \"/a/sql\"}", "chat=/a/chat", "--max-model-len", "4k"]
}
workload "mix" {
  requests = 8 # enough to bound a median (bounds.go), so only the server's warnings show
  models   = { base = 1, sql = 1, chat = 1 }
  prefix {
    tokens = 64
  }
}
workload "chat" {
  prompt_tokens = 100
  max_tokens    = 100
  concurrency   = [1, 2]
  session {
    turns = 6
  }
}
matrix "m" {
  model    = ["base"]
  tool     = [backend.openai.v, backend.openai.ok]
  workload = [workload.mix, workload.chat]
}
`
	p, diags := LoadFiles(".", map[string][]byte{"p.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", renderDiags(p, diags))
	}
	cells, more := p.Cells()
	diags = append(diags, more...)
	var got []string
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning {
			got = append(got, d.Summary)
		}
	}
	slices.Sort(got)
	want := []string{"Adapter not in --lora-modules", "Prefix caching is off", "Sessions may outgrow --max-model-len"}
	if !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q:\n%s", got, want, renderDiags(p, diags))
	}
	if len(cells) != 4 {
		t.Errorf("%d cells, want 4", len(cells))
	}
}
