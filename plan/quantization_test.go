package plan

import "testing"

func TestSameQuantization(t *testing.T) {
	for _, c := range []struct {
		a, b      string
		same, dtA bool
	}{
		{"q4_K_M", "Q4_K_M", true, false},
		{"bf16", "bfloat16", true, true},
		{"fp16", "F16", true, true},
		{"f32", "torch.float32", true, true},
		{"q8_0", "Q4_K_M", false, false},
		{"bf16", "f16", false, true},
		{"awq", "float16", false, false},
	} {
		if got := SameQuantization(c.a, c.b); got != c.same {
			t.Errorf("SameQuantization(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
		if got := IsDtype(c.a); got != c.dtA {
			t.Errorf("IsDtype(%q) = %v, want %v", c.a, got, c.dtA)
		}
	}
}
