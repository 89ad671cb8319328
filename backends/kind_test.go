package backends

import (
	"slices"
	"testing"
)

func TestRegisterKind(t *testing.T) {
	saved := kinds
	t.Cleanup(func() { kinds = saved })
	kinds = nil

	RegisterKind(Kind{Name: "zeta", DefaultURL: "http://127.0.0.1:1"})
	RegisterKind(Kind{Name: "alpha"})
	if got := KindNames(); !slices.Equal(got, []string{"alpha", "zeta"}) {
		t.Errorf("KindNames() = %v, want sorted [alpha zeta]", got)
	}
	if k, ok := LookupKind("zeta"); !ok || k.DefaultURL != "http://127.0.0.1:1" {
		t.Errorf("LookupKind(zeta) = %+v, %v", k, ok)
	}
	if _, ok := LookupKind("ollama"); ok {
		t.Error("LookupKind found a kind nobody registered")
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a second kind named alpha did not panic")
		}
	}()
	RegisterKind(Kind{Name: "alpha"})
}
