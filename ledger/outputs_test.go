package ledger

import (
	"slices"
	"testing"
)

func TestRegisterOutput(t *testing.T) {
	saved := outputKinds
	t.Cleanup(func() { outputKinds = saved })
	outputKinds = nil

	RegisterOutput(OutputKind{Name: "md", DefaultPath: "r.md", Options: []string{OptionLanguage, OptionPercentiles}})
	RegisterOutput(OutputKind{Name: "csv"})
	RegisterOutput(OutputKind{Name: "html", Options: []string{OptionPercentiles}})
	if got := OutputNames(""); !slices.Equal(got, []string{"csv", "html", "md"}) {
		t.Errorf("OutputNames() = %v, want all, sorted", got)
	}
	if got := OutputNames(OptionPercentiles); !slices.Equal(got, []string{"html", "md"}) {
		t.Errorf("OutputNames(percentiles) = %v, want the kinds that take it", got)
	}
	if k, ok := LookupOutput("md"); !ok || k.DefaultPath != "r.md" {
		t.Errorf("LookupOutput(md) = %+v, %v", k, ok)
	}
	if _, ok := LookupOutput("pdf"); ok {
		t.Error("LookupOutput found a kind nobody registered")
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a second kind named csv did not panic")
		}
	}()
	RegisterOutput(OutputKind{Name: "csv"})
}
