package executor

import "math/rand/v2"

// WeightedModel is one model name of a workload's mix and its weight (a share of the
// requests: weight / Σ weights).
type WeightedModel struct {
	Name   string
	Weight float64
}

// pickModel is the model of request n of every run: a draw seeded by seed and n alone,
// so each run sends the same sequence of names, each name its share in expectation.
func pickModel(mix []WeightedModel, seed uint64, n int) string {
	total := 0.0
	for _, m := range mix {
		total += m.Weight
	}
	u := rand.New(rand.NewPCG(seed, uint64(n)^0x6d6978)).Float64() * total // "mix"
	last := len(mix) - 1
	for _, m := range mix[:last] {
		if u < m.Weight {
			return m.Name
		}
		u -= m.Weight
	}
	return mix[last].Name // past every other share (or rounding's remainder)
}
