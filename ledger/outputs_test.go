package ledger

import (
	"slices"
	"testing"

	"github.com/planrun/planrun/internal/registry"
)

// OutputNames lists every registered kind, sorted; with an option, only the kinds that
// take it.
func TestOutputNames(t *testing.T) {
	saved := outputKinds
	outputKinds = registry.New("output kind", func(k OutputKind) string { return k.Name })
	t.Cleanup(func() { outputKinds = saved })
	RegisterOutput(OutputKind{Name: "md", Options: []string{OptionLanguage, OptionPercentiles}})
	RegisterOutput(OutputKind{Name: "csv"})
	RegisterOutput(OutputKind{Name: "html", Options: []string{OptionLanguage}})

	for _, c := range []struct {
		option string
		want   []string
	}{
		{"", []string{"csv", "html", "md"}},
		{OptionLanguage, []string{"html", "md"}},
		{OptionPercentiles, []string{"md"}},
	} {
		if got := OutputNames(c.option); !slices.Equal(got, c.want) {
			t.Errorf("OutputNames(%q) = %q, want %q", c.option, got, c.want)
		}
	}
	if k, ok := LookupOutput("html"); !ok || k.Name != "html" {
		t.Errorf("LookupOutput(html) = %+v, %v", k, ok)
	}
}
