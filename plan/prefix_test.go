package plan

import "testing"

// The example's prefix block and block_size decode into what apply reads; groups
// defaults to one.
func TestPrefixAndBlockSize(t *testing.T) {
	p, diags := Load("../examples/prefix-cache.hcl", LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	byName := map[string]*Workload{}
	for _, w := range p.Workloads {
		byName[w.Name] = w
	}
	if pr := byName["grouped"].Prefix; pr == nil || pr.Tokens != 768 || pr.Groups != 4 {
		t.Errorf("grouped prefix = %+v, want 768 tokens in 4 groups", pr)
	}
	if pr := byName["plain"].Prefix; pr != nil {
		t.Errorf("plain has a prefix %+v", pr)
	}
	if d := byName["trace"].Dataset; d == nil || d.BlockSize != 512 {
		t.Errorf("trace dataset = %+v, want block_size 512", d)
	}
	src := "workload \"w\" {\n  prompt_tokens = 64\n  prefix {\n    tokens = 16\n  }\n}\n"
	p, diags = LoadFiles(t.TempDir(), map[string][]byte{"w.hcl": []byte(src)}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(renderDiags(p, diags))
	}
	if w := p.Workloads[0]; w.Prefix == nil || w.Prefix.Tokens != 16 || w.Prefix.Groups != 1 {
		t.Errorf("prefix without groups = %+v, want one group of 16 tokens", w.Prefix)
	}
}
