package plan

import (
	"fmt"
	"strings"
	"testing"
)

// bigMatrix is a 10 × 10 × 5 × 4 × 5 = 10,000-cell matrix with a per-cell model_id.
func bigMatrix() []byte {
	var b strings.Builder
	list := func(prefix string, n int, ref string) string {
		var xs []string
		for i := 0; i < n; i++ {
			if ref != "" {
				xs = append(xs, fmt.Sprintf("%s.%s%d", ref, prefix, i))
			} else {
				xs = append(xs, fmt.Sprintf("%q", fmt.Sprintf("%s%d", prefix, i)))
			}
		}
		return "[" + strings.Join(xs, ", ") + "]"
	}
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, "backend \"openai\" \"t%d\" {\n  url = \"http://127.0.0.1:%d/v1\"\n}\n", i, 8000+i)
		fmt.Fprintf(&b, "workload \"w%d\" {\n  concurrency = [1, 4]\n}\n", i)
	}
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, "hardware \"h%d\" {}\n", i)
	}
	fmt.Fprintf(&b, "matrix \"big\" {\n  model = %s\n  quantization = %s\n  tool = %s\n  hardware = %s\n  workload = %s\n",
		list("m", 10, ""), list("q", 10, ""), list("t", 5, "backend.openai"), list("h", 4, "hardware"), list("w", 5, "workload"))
	b.WriteString("  model_id = \"${matrix.model}:${lower(matrix.quantization)}\"\n}\n")
	return []byte(b.String())
}

func TestBigMatrix(t *testing.T) {
	p, diags := LoadFiles(".", map[string][]byte{"big.hcl": bigMatrix()}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cells, diags := p.Cells()
	if diags.HasErrors() || len(cells) != 10000 {
		t.Fatalf("%d cells, %v", len(cells), diags)
	}
	if c := cells[9999]; c.ID != "big/m9/q9/openai.t4/h3/w4" || c.ModelID != "m9:q9" {
		t.Errorf("last cell %s %s", c.ID, c.ModelID)
	}
}

// BenchmarkExpand expands the 10,000-cell matrix (go test -bench Expand -benchmem ./plan/).
func BenchmarkExpand(b *testing.B) {
	p, diags := LoadFiles(".", map[string][]byte{"big.hcl": bigMatrix()}, LoadOptions{Getenv: noEnv})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cells, _ := p.Cells()
		if len(cells) != 10000 {
			b.Fatal(len(cells))
		}
	}
}
