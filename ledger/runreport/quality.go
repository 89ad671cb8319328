package runreport

import (
	"slices"

	"github.com/planrun/planrun/ledger"
)

// withQualityColumn adds the seed table's Quality column ("vs f16: 97.1% same top-1,
// KL 0.012") before its notes when any row has quality figures; the table is as it was
// otherwise.
func withQualityColumn(lb labels, body [][]string, rows []ledger.Row) ([]string, [][]string) {
	if !slices.ContainsFunc(rows, func(r ledger.Row) bool { return r.Quality.Measured() }) {
		return lb.seed, body
	}
	at := len(lb.seed) - 1 // before Notes
	head := slices.Insert(slices.Clone(lb.seed), at, lb.quality)
	out := make([][]string, len(body))
	for i, cells := range body {
		out[i] = slices.Insert(slices.Clone(cells), at, ledger.QualityText(rows[i]))
	}
	return head, out
}
