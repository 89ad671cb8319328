package apply

import (
	"slices"

	"github.com/planrun/planrun/ledger"
	"github.com/planrun/planrun/plan"
)

// setIn sets (*m)[k] = v, making the map first: the manifest's maps stay nil (and out
// of manifest.json) until a run has something to put in them.
func setIn[M ~map[K]V, K comparable, V any](m *M, k K, v V) {
	if *m == nil {
		*m = M{}
	}
	(*m)[k] = v
}

// reportChoices are the reports' language and percentiles: the choice of the last
// output block whose kind takes the option (all reports of a run show the same).
func reportChoices(outs []*plan.Output) (language string, percentiles []int) {
	for _, out := range outs {
		k, _ := ledger.LookupOutput(out.Kind)
		if slices.Contains(k.Options, ledger.OptionLanguage) && out.Language != "" {
			language = out.Language
		}
		if slices.Contains(k.Options, ledger.OptionPercentiles) {
			percentiles = out.Percentiles
		}
	}
	return language, percentiles
}
