package dataset

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Sample is the rows a workload sends, drawn from a dataset.
type Sample struct {
	Rows []Row
	Info Info
	// Wrapped is set when the dataset had fewer usable rows than asked: every row is
	// then used and the list repeats from its start (Note says so for the result row).
	Wrapped bool
	Note    string
}

// Draw picks n rows uniformly at random by reservoir sampling (one pass, n rows in
// memory), reproducibly for a seed, in a seeded random order (as vLLM's bench shuffles,
// so a file sorted by length does not become a run sorted by length); a Mooncake trace's
// rows keep their time order. A dataset with fewer usable rows than n wraps: its rows
// repeat in order, and the Sample says so, since real files are often smaller than a
// long benchmark and failing would make them unusable.
func Draw(spec Spec, n int, seed int64) (Sample, error) {
	if n < 1 {
		return Sample{}, fmt.Errorf("draw at least one row, not %d", n)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x64617461))
	res := make([]Row, 0, n)
	seen := 0
	info, err := Scan(spec, func(r Row) error {
		seen++
		if len(res) < n {
			res = append(res, r)
		} else if j := rng.IntN(seen); j < n {
			// Algorithm R: the j-th slot is replaced, so order is restored below.
			res[j] = r
		}
		return nil
	})
	if err != nil {
		return Sample{}, err
	}
	slices.SortStableFunc(res, func(a, b Row) int { return a.Line - b.Line })
	if spec.Format != FormatMooncake {
		rng.Shuffle(len(res), func(i, j int) { res[i], res[j] = res[j], res[i] })
	}
	s := Sample{Rows: res, Info: info}
	if len(res) < n {
		s.Wrapped = true
		s.Note = fmt.Sprintf("dataset %s has %d usable rows for %d requests: rows repeat", spec.Path, len(res), n)
		for i := len(res); i < n; i++ {
			s.Rows = append(s.Rows, res[i%len(res)])
		}
	}
	return s, nil
}
